import {
  RedisConnection,
  type RedisSource,
  type RedisStoreOptions,
} from '../stores/redis/redis-connection.js';
import { RedisScript } from '../stores/redis/redis-script.js';
import type { BudgetCounters, ChargeResult, CounterEntry, Spend, SpendLimits } from './budget-counters.js';

/** The values per key in the script's ARGV, after the leading check flag. */
const PER_KEY = 8;
const LIMITS: ReadonlyArray<keyof SpendLimits> = ['inputTokens', 'outputTokens', 'totalTokens', 'nanoCost'];

/**
 * Adds to each counter hash (fields i, o, c) with HINCRBY, its ttl set when
 * it is created; with ARGV[1] = '1', first checks every counter's limits
 * (-1: none) and adds nothing when one would pass: `{index, limit, i, o, c}`
 * then (1-based), `{0}` otherwise. ARGV per key: ttl, add i, o, c, limit i, o, total, c.
 */
const CHARGE = new RedisScript(`
local check = ARGV[1] == '1'
if check then
  for k = 1, #KEYS do
    local b = 1 + (k - 1) * ${PER_KEY}
    local used = redis.call('HMGET', KEYS[k], 'i', 'o', 'c')
    local i = tonumber(used[1] or '0')
    local o = tonumber(used[2] or '0')
    local c = tonumber(used[3] or '0')
    local ni = i + tonumber(ARGV[b + 2])
    local no = o + tonumber(ARGV[b + 3])
    local nc = c + tonumber(ARGV[b + 4])
    local li, lo, lt, lc = tonumber(ARGV[b + 5]), tonumber(ARGV[b + 6]), tonumber(ARGV[b + 7]), tonumber(ARGV[b + 8])
    local passed = 0
    if li >= 0 and ni > li then passed = 1
    elseif lo >= 0 and no > lo then passed = 2
    elseif lt >= 0 and ni + no > lt then passed = 3
    elseif lc >= 0 and nc > lc then passed = 4 end
    if passed > 0 then return {k, passed, i, o, c} end
  end
end
for k = 1, #KEYS do
  local b = 1 + (k - 1) * ${PER_KEY}
  redis.call('HINCRBY', KEYS[k], 'i', ARGV[b + 2])
  redis.call('HINCRBY', KEYS[k], 'o', ARGV[b + 3])
  redis.call('HINCRBY', KEYS[k], 'c', ARGV[b + 4])
  if redis.call('PTTL', KEYS[k]) < 0 then redis.call('PEXPIRE', KEYS[k], ARGV[b + 1]) end
end
return {0}
`);

/**
 * {@link BudgetCounters} in Redis, shared by every replica: one hash per
 * counter (`<prefix>budget:{t.<tenant>}:<name>`, fields `i`, `o`, `c`), living
 * to the end of its period; a tenant's counters share a hash tag, so that a
 * charge to several is one script call (Cluster-safe).
 */
export class RedisBudgetCounters implements BudgetCounters {
  readonly #connection: RedisConnection;
  readonly #keyPrefix: string;

  constructor(source: RedisSource, { keyPrefix = 'switchboard:', commandTimeoutMs }: RedisStoreOptions = {}) {
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#keyPrefix = keyPrefix;
  }

  async charge(tenant: string, entries: readonly CounterEntry[]): Promise<ChargeResult> {
    const reply = (await this.#run(tenant, entries, true)) as number[];
    if (reply[0] === 0) return { ok: true };
    const [index = 1, limit = 1, inputTokens = 0, outputTokens = 0, nanoCost = 0] = reply.map(Number);
    return {
      ok: false,
      index: index - 1,
      limit: LIMITS[limit - 1] as keyof SpendLimits,
      used: { inputTokens, outputTokens, nanoCost },
    };
  }

  async add(tenant: string, entries: readonly CounterEntry[]): Promise<void> {
    await this.#run(tenant, entries, false);
  }

  async read(tenant: string, names: readonly string[]): Promise<Spend[]> {
    const keys = names.map((name) => this.#key(tenant, name));
    const replies = await this.#connection.run('read budget counters', (client) =>
      Promise.all(keys.map((key) => client.hmget(key, 'i', 'o', 'c'))),
    );
    return replies.map(([i, o, c]) => ({
      inputTokens: Number(i ?? 0),
      outputTokens: Number(o ?? 0),
      nanoCost: Number(c ?? 0),
    }));
  }

  close(): Promise<void> {
    return this.#connection.close();
  }

  #key(tenant: string, name: string): string {
    // `t.` keeps the hash tag non-empty without a tenant (an empty `{}` is no hash tag on a Cluster).
    return `${this.#keyPrefix}budget:{t.${encodeURIComponent(tenant)}}:${name}`;
  }

  #run(tenant: string, entries: readonly CounterEntry[], check: boolean): Promise<unknown> {
    const keys = entries.map((entry) => this.#key(tenant, entry.name));
    const args: Array<string | number> = [check ? '1' : '0'];
    for (const { ttlMs, amounts, limits = {} } of entries) {
      args.push(ttlMs, amounts.inputTokens, amounts.outputTokens, amounts.nanoCost);
      for (const limit of LIMITS) args.push(limits[limit] ?? -1);
    }
    return this.#connection.run(
      check ? 'charge a budget' : 'count spending',
      (client) => CHARGE.run(client, keys, args),
      { write: true },
    );
  }
}
