import type { Redis } from 'ioredis';

/**
 * How long until the first session lease under `prefix` lapses in Redis (its
 * remaining time to live, ms), or `undefined` when none is held: when a
 * session still locked by a lease left behind would be served again.
 */
export async function firstLeaseLapse(redis: Redis, prefix: string): Promise<number | undefined> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*:lease`;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const ttls = await Promise.all(keys.map((key) => redis.pttl(key)));
  const lapsing = ttls.filter((ttl) => ttl > 0);
  return lapsing.length > 0 ? Math.min(...lapsing) : undefined;
}
