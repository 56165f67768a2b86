import { describe, expect, it } from 'vitest';
import { InMemoryConfigStore } from '../../src/config/in-memory-config-store.js';
import { RedisConfigStore } from '../../src/stores/redis/redis-config-store.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { describeConfigStoreContract } from './config-store.contract.js';

const redis = useRedis();

describeConfigStoreContract('in memory', () => new InMemoryConfigStore());
describeConfigStoreContract('redis', () => new RedisConfigStore(REDIS_URL, { keyPrefix: redis.prefix() }));

const at = '2026-01-01T00:00:00.000Z';
const LIMITS = { maxItemsPerScope: 3, maxVersionsKept: 5 };

describe('InMemoryConfigStore', () => {
  it('forgets the histories of the oldest deletions past maxItemsPerScope of them', async () => {
    const store = new InMemoryConfigStore();
    for (const name of ['a', 'b', 'c', 'd']) {
      await store.write(
        'app',
        { type: 'keywords', name, value: { keywords: [name] }, updatedAt: at },
        LIMITS,
      );
      await store.write('app', { type: 'keywords', name, updatedAt: at }, LIMITS);
    }
    const kept = await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) => store.history('app', 'keywords', name)),
    );
    expect(kept.map((history) => history.length)).toEqual([0, 2, 2, 2]);
  });
});

describe('RedisConfigStore', () => {
  it('keeps a deleted item’s history for 30 days, and for good once it is set again', async () => {
    const prefix = redis.prefix();
    const store = new RedisConfigStore(REDIS_URL, { keyPrefix: prefix });
    const key = `${prefix}config:{app}:history:keywords/clock`;
    await store.write(
      'app',
      { type: 'keywords', name: 'clock', value: { keywords: ['x'] }, updatedAt: at },
      LIMITS,
    );
    expect(await redis.admin.pttl(key)).toBe(-1);
    await store.write('app', { type: 'keywords', name: 'clock', updatedAt: at }, LIMITS);
    // The expiry the store set (30 days), read back: a bound on a setting, not on how long anything took.
    const ttl = await redis.admin.pttl(key);
    expect(ttl).toBeGreaterThan(29 * 86_400_000);
    expect(ttl).toBeLessThanOrEqual(30 * 86_400_000);
    await store.write(
      'app',
      { type: 'keywords', name: 'clock', value: { keywords: ['y'] }, updatedAt: at },
      LIMITS,
    );
    expect(await redis.admin.pttl(key)).toBe(-1);
    await store.close();
  });

  it('keeps a scope under one hash tag, and refuses a record it cannot read', async () => {
    const prefix = redis.prefix();
    const store = new RedisConfigStore(REDIS_URL, { keyPrefix: prefix });
    await store.write(
      'tenant:acme',
      { type: 'keywords', name: 'clock', value: { keywords: ['time'] }, updatedAt: new Date().toISOString() },
      { maxItemsPerScope: 10, maxVersionsKept: 5 },
    );
    const keys = (await redis.keys(prefix)).sort();
    expect(keys).toEqual([
      `${prefix}config:{tenant%3Aacme}:history:keywords/clock`,
      `${prefix}config:{tenant%3Aacme}:items`,
      `${prefix}config:{tenant%3Aacme}:version`,
    ]);
    await redis.admin.hset(`${prefix}config:{tenant%3Aacme}:items`, 'keywords/clock', '{"version":"x"}');
    await expect(store.snapshot('tenant:acme')).rejects.toMatchObject({ code: 'corrupt_record' });
    await store.close();
  });
});
