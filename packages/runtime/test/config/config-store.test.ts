import { describe, expect, it } from 'vitest';
import { InMemoryConfigStore } from '../../src/config/in-memory-config-store.js';
import { RedisConfigStore } from '../../src/stores/redis/redis-config-store.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { describeConfigStoreContract } from './config-store.contract.js';

const redis = useRedis();

describeConfigStoreContract('in memory', () => new InMemoryConfigStore());
describeConfigStoreContract('redis', () => new RedisConfigStore(REDIS_URL, { keyPrefix: redis.prefix() }));

describe('RedisConfigStore', () => {
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
