import type { RateLimiter } from '../rate-limiter.js';
import { RedisConnection, type RedisSource, type RedisStoreOptions } from './redis-connection.js';
import { RedisScript } from './redis-script.js';

/** Counts one hit in the key's window (created with the window's ttl) and answers the count and the ms left. */
const HIT = new RedisScript(`
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`);

/**
 * A {@link RateLimiter} in Redis: every replica sharing it counts in the same
 * window (one script call per request).
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #connection: RedisConnection;
  readonly #keyPrefix: string;

  constructor(source: RedisSource, { keyPrefix = 'switchboard:', commandTimeoutMs }: RedisStoreOptions = {}) {
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#keyPrefix = keyPrefix;
  }

  async hit(key: string, windowMs: number): Promise<{ count: number; resetAt: number }> {
    const redisKey = `${this.#keyPrefix}ratelimit:{${encodeURIComponent(key)}}`;
    const [count, ttl] = (await this.#connection.run('count a request', (client) =>
      HIT.run(client, [redisKey], [windowMs]),
    )) as [number, number];
    return { count, resetAt: Date.now() + ttl };
  }

  close(): Promise<void> {
    return this.#connection.close();
  }
}
