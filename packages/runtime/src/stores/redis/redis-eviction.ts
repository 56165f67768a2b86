import { ConfigurationError, StoreUnavailableError } from '@switchboard/core';
import type { RedisConnection } from './redis-connection.js';

/**
 * @internal Reads Redis's `maxmemory-policy`. Any policy but `noeviction`
 * lets Redis delete keys when memory runs short: `allkeys-*` any key,
 * `volatile-*` keys with an expiry, which sessions and memory all have. A
 * turn answered 200 would then vanish from its session without an error.
 * Throws `ConfigurationError` for such a policy unless `allowEviction`;
 * returns what an operator should know (eviction allowed, or the policy
 * unreadable because `CONFIG` is not permitted, as on many managed Redis).
 */
export async function checkEvictionPolicy(
  connection: RedisConnection,
  allowEviction: boolean,
): Promise<readonly string[]> {
  let policy: string | undefined;
  try {
    const reply: unknown = await connection.run("read Redis's maxmemory-policy", (client) =>
      client.config('GET', 'maxmemory-policy'),
    );
    policy = policyOf(reply);
  } catch (error) {
    if (StoreUnavailableError.isInstance(error)) throw error;
    policy = undefined;
  }
  if (policy === undefined) {
    return [
      "Redis's maxmemory-policy could not be read (CONFIG GET is not permitted): check in your Redis provider's settings that it is noeviction, as any other policy lets Redis delete sessions and turns",
    ];
  }
  if (policy === 'noeviction') return [];
  if (allowEviction) {
    return [
      `Redis's maxmemory-policy is ${policy}: Redis may delete sessions and turns when memory runs short (eviction allowed explicitly)`,
    ];
  }
  throw new ConfigurationError({
    message: `Redis's maxmemory-policy is ${policy}, which lets Redis delete sessions and turns when memory runs short (answered turns would vanish without an error): set maxmemory-policy noeviction, or allow eviction explicitly (the Redis stores' allowEviction option; SWITCHBOARD_ALLOW_EVICTION=1 for the server)`,
  });
}

/** The policy in a `CONFIG GET maxmemory-policy` reply: `[name, value]` (RESP2) or `{ name: value }` (RESP3). */
function policyOf(reply: unknown): string | undefined {
  if (Array.isArray(reply)) return typeof reply[1] === 'string' ? reply[1] : undefined;
  if (reply instanceof Map) return reply.get('maxmemory-policy');
  if (reply && typeof reply === 'object') {
    const value = (reply as Record<string, unknown>)['maxmemory-policy'];
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}
