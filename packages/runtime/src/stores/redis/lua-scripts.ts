import { RedisScript } from './redis-script.js';

/**
 * Lua scripts, each one round trip (see {@link RedisScript}) and atomic.
 * Inside Lua a missing key reads as `false`.
 */

/**
 * The lease check every session write with a lease starts with: -1 unless
 * the writer's token still holds the lease. A lease that is gone counts as
 * lost too: its holder may have stalled past its ttl while another turn took
 * the session and released it, and a write then would land in that turn.
 */
const CHECK_LEASE = `
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[3] then return {-1} end
`;

/**
 * Sets the expiry of the session's keys: ARGV[1] ms from now, or none when
 * it is -1 (a pending approval without expiry keeps its session).
 */
const REFRESH_EXPIRY = `
local function refresh(key)
  if ARGV[1] == '-1' then redis.call('PERSIST', key) else redis.call('PEXPIRE', key, ARGV[1]) end
end
refresh(KEYS[1])
refresh(KEYS[2])
refresh(KEYS[4])
`;

/**
 * Starts a turn. Returns `{2, seen}` when the request key was used before
 * (`seen` is "turnId fingerprint"), `{1, record}` when the session's last
 * turn has not ended (its record), and otherwise appends the user message
 * and the turn record, remembers the request key, refreshes the expiry and
 * returns `{0, window}`: the last `limit` message records, as one text of
 * records joined by newlines (which JSON.stringify never writes), because one
 * long reply costs the client far less to read than many short ones; as a
 * list when a record holds a newline (so it was not written by this store).
 * A turn record that has not ended starts with `{"v":2,"s":"<status>"`, so
 * the script reads the status without decoding JSON; a `v: 1` record has
 * always ended.
 *
 * With a lease ttl in ARGV[8], the script first takes the session's lease
 * for the token (`{-2}` when another token holds it: nothing is done), so a
 * turn's start is one round trip, lease included.
 *
 * With KEYS[5] and KEYS[6] (the sweeper's index of running turns and the
 * tenant's session index, on a single Redis where a script may write keys
 * of other hash tags), an opened turn marks its session in the first and
 * touches it in the second as {@link TOUCH_SESSION_INDEX} does, with ARGV[9]
 * on as its arguments: no commands of their own.
 *
 * KEYS: messages, turns, lease, request keys, [running index, session index]. ARGV: ttl ms, limit,
 * lease token or '', user message record, turn record, request key or '', "turnId fingerprint",
 * lease ttl ms to take the lease with or '', [session store id, now ms, cutoff ms, idle time ms, max entries].
 */
export const OPEN_TURN = new RedisScript(`
if ARGV[8] ~= '' then
  local holder = redis.call('GET', KEYS[3])
  if holder and holder ~= ARGV[3] then return {-2} end
  redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[8])
else
${CHECK_LEASE}
end
if ARGV[6] ~= '' then
  local seen = redis.call('HGET', KEYS[4], ARGV[6])
  if seen then return {2, seen} end
end
local last = redis.call('LINDEX', KEYS[2], -1)
if last then
  local status = string.match(last, '^{"v":%d+,"s":"([%a_]+)"')
  if status == 'running' or status == 'awaiting_approval' then return {1, last} end
end
redis.call('RPUSH', KEYS[1], ARGV[4])
redis.call('RPUSH', KEYS[2], ARGV[5])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[4], ARGV[6], ARGV[7]) end
if KEYS[6] then
  redis.call('ZADD', KEYS[5], ARGV[10], ARGV[9])
${touchIndex('KEYS[6]', 9)}
end
${REFRESH_EXPIRY}
local limit = tonumber(ARGV[2])
if limit <= 0 then return {0, {}} end
local records = redis.call('LRANGE', KEYS[1], -limit, -1)
for _, record in ipairs(records) do
  if string.find(record, '\\n', 1, true) then return {0, records} end
end
return {0, table.concat(records, '\\n')}
`);

/**
 * Appends message records and, optionally, replaces the session's last turn
 * record (the current turn's), then refreshes the expiry. Pushes go in
 * batches so that a long append stays within Lua's stack. Returns {0}, or
 * {-1} when the writer's token no longer holds the lease (it expired, and
 * another turn may have taken the session).
 *
 * With ARGV[4] = '1' it then releases the lease (the holder's last write),
 * so a turn's end is one round trip, release included.
 *
 * With KEYS[5] (the sweeper's index of running turns, on a single Redis),
 * a turn record is followed by the session's store id and, when the turn is
 * running, the score to mark it with ('' unmarks it): no command of its own.
 *
 * KEYS: messages, turns, lease, request keys, [running index]. ARGV: ttl ms (-1: none), message count,
 * lease token or '', '1' to release the lease or '', message records…, [turn record, [store id, score or '']].
 */
export const APPEND_SESSION = new RedisScript(`${CHECK_LEASE}
local count = tonumber(ARGV[2])
local first = 5
while first <= 4 + count do
  local last = math.min(first + 999, 4 + count)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, first, last))
  first = last + 1
end
if #ARGV > 4 + count then
  if redis.call('LLEN', KEYS[2]) == 0 then
    redis.call('RPUSH', KEYS[2], ARGV[5 + count])
  else
    redis.call('LSET', KEYS[2], -1, ARGV[5 + count])
  end
  if KEYS[5] and #ARGV > 6 + count then
    if ARGV[7 + count] == '' then
      redis.call('ZREM', KEYS[5], ARGV[6 + count])
    else
      redis.call('ZADD', KEYS[5], ARGV[7 + count], ARGV[6 + count])
    end
  end
end
${REFRESH_EXPIRY}
if ARGV[4] == '1' and redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
return {0}
`);

/**
 * Reads one page of a session's history: the messages `[start, stop)` where
 * `stop` is the given position (at most the message count; the count itself
 * without one) and `start` is `limit` earlier, the message and turn counts,
 * and the last turn record ('' when none). Never reads the whole list.
 *
 * KEYS: messages, turns. ARGV: limit, position or ''.
 * Returns {message count, turn count, last turn record, message records}.
 */
export const READ_PAGE = new RedisScript(`
local total = redis.call('LLEN', KEYS[1])
local stop = total
if ARGV[2] ~= '' then stop = math.min(tonumber(ARGV[2]), total) end
local start = math.max(0, stop - tonumber(ARGV[1]))
local records = {}
if stop > start then records = redis.call('LRANGE', KEYS[1], start, stop - 1) end
return {total, redis.call('LLEN', KEYS[2]), redis.call('LINDEX', KEYS[2], -1) or '', records}
`);

/**
 * Records that a session started a turn in its tenant's index (a sorted set
 * scored by that time), forgets the entries of sessions idle for longer than
 * the idle time, keeps the newest `max` entries, and makes the index live at
 * least the idle time. One key, so it runs beside the session's own script.
 *
 * KEYS: index. ARGV: session id, now (ms), cutoff (ms), idle time (ms), max entries.
 */
export const TOUCH_SESSION_INDEX = new RedisScript(`${touchIndex('KEYS[1]', 1)}return 1
`);

/** The Lua of {@link TOUCH_SESSION_INDEX} on index `key`, its arguments from `ARGV[first]` on. */
function touchIndex(key: string, first: number): string {
  const arg = (offset: number) => `ARGV[${first + offset}]`;
  return `
redis.call('ZADD', ${key}, ${arg(1)}, ${arg(0)})
redis.call('ZREMRANGEBYSCORE', ${key}, '-inf', '(' .. ${arg(2)})
local max = tonumber(${arg(4)})
if redis.call('ZCARD', ${key}) > max then redis.call('ZREMRANGEBYRANK', ${key}, 0, -max - 1) end
local ttl = redis.call('PTTL', ${key})
if ttl == -1 or ttl < tonumber(${arg(3)}) then redis.call('PEXPIRE', ${key}, ${arg(3)}) end
`;
}

/**
 * Removes index entries whose session is gone, each only if its score is
 * still the one read (a session started again since then stays listed).
 * KEYS: index. ARGV: session id, score, session id, score, …
 */
export const DROP_STALE_ENTRIES = new RedisScript(`
local removed = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return removed
`);

/**
 * Extends the lease only while it still holds this token (compare-and-extend):
 * a lease that is gone (released by the holder's last write, or expired) or
 * held by another token returns 0 and is never set again, since a renewal
 * that reached Redis after the release would otherwise lock the free session
 * for a whole ttl. A held session's keys then live at least one idle time
 * more, so that no session expires under a running turn.
 * KEYS: lease, messages, turns, request keys. ARGV: token, ttl ms, idle ms.
 */
export const RENEW_LEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
for i = 2, 4 do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl >= 0 and ttl < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
end
return 1
`);

/**
 * Takes a free lease for the token. Returns '' when it was taken (or this
 * token already held it), else the token holding it, so that the caller can
 * tell whether that holder's replica is still alive.
 * KEYS: lease. ARGV: token, ttl ms.
 */
export const TAKE_LEASE = new RedisScript(`
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''
`);

/**
 * Takes over a lease from a holder whose replica is gone, only if that holder
 * still has it (compare-and-set): 1 when taken, 0 otherwise.
 * KEYS: lease. ARGV: the gone holder's token, the new token, ttl ms.
 */
export const SEIZE_LEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

/** Deletes the lease only when the token still matches. KEYS: lease. ARGV: token. */
export const RELEASE_LEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/**
 * Writes a memory value and records its key in the namespace index, whose
 * expiry follows the longest-lived value (none while any value has none).
 * With ARGV[1] = 'cas' the write happens only when the current value equals
 * ARGV[2] ('' with ARGV[3] = '0' meaning "absent"), which makes `update` a
 * compare-and-set. An empty ttl keeps the current expiry on 'cas' and clears
 * it on 'set'. Returns 1 when written, 0 when the comparison failed.
 *
 * ARGV[7] '1' adds the key to the namespace's set of renewable keys (see
 * `TOUCH_MEMORY`), '0' removes it, '' leaves it as it is.
 *
 * KEYS: value, index, renewable set. ARGV: mode, expected, expectedPresent, record, ttl ms, member, renewable.
 */
export const WRITE_MEMORY = new RedisScript(`
local current = redis.call('GET', KEYS[1])
if ARGV[1] == 'cas' then
  if ARGV[3] == '0' then
    if current then return 0 end
  elseif current ~= ARGV[2] then
    return 0
  end
end
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
elseif ARGV[1] == 'cas' and current then
  redis.call('SET', KEYS[1], ARGV[4], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[4])
end
local ttl = redis.call('PTTL', KEYS[1])
local indexExisted = redis.call('EXISTS', KEYS[2]) == 1
redis.call('SADD', KEYS[2], ARGV[6])
if ttl < 0 then
  redis.call('PERSIST', KEYS[2])
else
  local indexTtl = redis.call('PTTL', KEYS[2])
  if not indexExisted or (indexTtl >= 0 and indexTtl < ttl) then
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
end
if ARGV[7] == '1' then
  redis.call('SADD', KEYS[3], ARGV[6])
  if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
elseif ARGV[7] == '0' then
  redis.call('SREM', KEYS[3], ARGV[6])
end
return 1
`);

/**
 * Makes the given renewable keys of a namespace expire `ttl` from now,
 * forgetting those that are gone, and keeps the index and the renewable set
 * alive as long. Returns how many values were extended. The caller reads
 * the renewable set first, so that the script declares every key it touches.
 *
 * KEYS: index, renewable set, value keys…. ARGV: ttl ms, members… (aligned with the value keys).
 */
export const TOUCH_MEMORY = new RedisScript(`
local ttl = tonumber(ARGV[1])
local touched = 0
for i = 3, #KEYS do
  if redis.call('PEXPIRE', KEYS[i], ttl) == 1 then
    touched = touched + 1
  else
    redis.call('SREM', KEYS[2], ARGV[i - 1])
  end
end
if touched > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  local indexTtl = redis.call('PTTL', KEYS[1])
  if indexTtl >= 0 and indexTtl < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return touched
`);

/**
 * Deletes the given value keys of a namespace and their index entries; once
 * the index is empty, deletes it and the renewable set. Returns how many
 * entries the index still holds (written meanwhile: the caller goes again).
 *
 * KEYS: index, renewable set, value keys…. ARGV: members… (aligned with the value keys).
 */
export const CLEAR_MEMORY = new RedisScript(`
for i = 3, #KEYS do
  redis.call('UNLINK', KEYS[i])
  redis.call('SREM', KEYS[1], ARGV[i - 2])
  redis.call('SREM', KEYS[2], ARGV[i - 2])
end
local left = redis.call('SCARD', KEYS[1])
if left == 0 then redis.call('UNLINK', KEYS[1], KEYS[2]) end
return left
`);
