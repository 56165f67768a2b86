import { RedisScript } from './redis-script.js';

/**
 * Lua scripts, each one round trip (see {@link RedisScript}) and atomic.
 * Inside Lua a missing key reads as `false`.
 */

/**
 * Appends message records (and optionally a turn record), refreshes the idle
 * expiry of both lists, and, with a positive limit, returns the last `limit`
 * message records: as one text, the records joined by newlines (which
 * JSON.stringify never writes), because one long reply costs the client far
 * less to read than many short ones; as a list when there is none, or when a
 * record holds a newline (so it was not written by this store). Pushes go in
 * batches so that a long append stays within Lua's stack. Returns 0 without
 * a limit.
 *
 * With a lease token, writes nothing and returns -1 when another token holds
 * the lease (this writer's lease expired and another turn took the session);
 * a lease that expired with nobody taking it does not stop the write.
 *
 * KEYS: messages, turns, lease. ARGV: ttl ms, limit, message count, lease token or '', message records…, [turn record].
 */
export const APPEND_SESSION = new RedisScript(`
if ARGV[4] ~= '' then
  local holder = redis.call('GET', KEYS[3])
  if holder and holder ~= ARGV[4] then return -1 end
end
local count = tonumber(ARGV[3])
local first = 5
while first <= 4 + count do
  local last = math.min(first + 999, 4 + count)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, first, last))
  first = last + 1
end
if #ARGV > 4 + count then redis.call('RPUSH', KEYS[2], ARGV[5 + count]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
local limit = tonumber(ARGV[2])
if limit <= 0 then return 0 end
local records = redis.call('LRANGE', KEYS[1], -limit, -1)
if #records == 0 then return records end
for _, record in ipairs(records) do
  if string.find(record, '\\n', 1, true) then return records end
end
return table.concat(records, '\\n')
`);

/** Extends the lease when the token still matches, or reclaims it when it expired and nobody took it. KEYS: lease. ARGV: token, ttl ms. */
export const RENEW_LEASE = new RedisScript(`
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
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
 * Makes every renewable key of a namespace expire `ttl` from now, forgetting
 * those that are gone, and keeps the index and the renewable set alive as
 * long. Returns how many values were extended.
 *
 * KEYS: index, renewable set. ARGV: value key prefix, ttl ms.
 */
export const TOUCH_MEMORY = new RedisScript(`
local ttl = tonumber(ARGV[2])
local touched = 0
for _, member in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('PEXPIRE', ARGV[1] .. member, ttl) == 1 then
    touched = touched + 1
  else
    redis.call('SREM', KEYS[2], member)
  end
end
if touched > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  local indexTtl = redis.call('PTTL', KEYS[1])
  if indexTtl >= 0 and indexTtl < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return touched
`);

/** Deletes every key listed in a namespace index, then the index and the renewable set. KEYS: index, renewable set. ARGV: value key prefix. */
export const CLEAR_MEMORY = new RedisScript(`
local members = redis.call('SMEMBERS', KEYS[1])
local batch = {}
for _, member in ipairs(members) do
  batch[#batch + 1] = ARGV[1] .. member
  if #batch == 500 then
    redis.call('UNLINK', unpack(batch))
    batch = {}
  end
end
if #batch > 0 then redis.call('UNLINK', unpack(batch)) end
redis.call('UNLINK', KEYS[1], KEYS[2])
return #members
`);
