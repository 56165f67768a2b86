import { describe, expect, it } from 'vitest';
import { migrateSessionMemory, RedisMemoryStore } from '../../src/redis.js';
import { memoryNamespace } from '../../src/stores/memory-binding.js';
import { legacyMemoryKeys, memoryKeys } from '../../src/stores/redis/redis-keys.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();

/** Writes a value the way the previous version did: `<prefix>memory:{<namespace>}` and its index. */
async function writeLegacy(
  prefix: string,
  namespace: string,
  key: string,
  value: unknown,
  { ttlMs, renewable = false }: { ttlMs?: number; renewable?: boolean } = {},
): Promise<void> {
  const keys = legacyMemoryKeys(prefix, namespace);
  const record = JSON.stringify({ v: 1, value });
  if (ttlMs === undefined) await redis.admin.set(keys.valuePrefix + key, record);
  else await redis.admin.set(keys.valuePrefix + key, record, 'PX', ttlMs);
  await redis.admin.sadd(keys.index, key);
  if (renewable) await redis.admin.sadd(keys.renewable, key);
}

describe('migrateSessionMemory', () => {
  it('moves session memory beside its session, keeping expiry and renewability, and leaves app memory alone', async () => {
    const prefix = redis.prefix();
    const plain = memoryNamespace('session', { sessionId: 'ses-1' });
    const tenant = memoryNamespace('session', { sessionId: 'ses-2', tenantId: 'acme:eu' });
    await writeLegacy(prefix, plain, 'cart', ['tea'], { ttlMs: 600_000, renewable: true });
    await writeLegacy(prefix, plain, 'name', 'Ada');
    await writeLegacy(prefix, tenant, 'plan', { steps: 3 }, { ttlMs: 300_000 });
    await writeLegacy(prefix, 'app', 'visits', 7);

    const store = new RedisMemoryStore(REDIS_URL, { keyPrefix: prefix });
    try {
      // Before the migration this version does not see it.
      expect(await store.get(plain, 'cart')).toBeUndefined();
      // A value this version wrote meanwhile is newer and stays.
      await store.set(plain, 'name', 'Grace');

      expect(await migrateSessionMemory(REDIS_URL, { keyPrefix: prefix })).toEqual({
        namespaces: 2,
        values: 2,
        kept: 1,
      });
      expect(await store.get(plain, 'cart')).toEqual(['tea']);
      expect(await store.get(plain, 'name')).toBe('Grace');
      expect(await store.get(tenant, 'plan')).toEqual({ steps: 3 });
      expect(await store.get('app', 'visits')).toBe(7);

      const moved = memoryKeys(prefix, plain);
      // Beside the session's keys, under its hash tag.
      expect(moved.index).toBe(`${prefix}session:{ses-1}:memory`);
      const ttl = await redis.admin.pttl(`${moved.valuePrefix}cart`);
      expect(ttl).toBeGreaterThan(500_000);
      expect(await redis.admin.sismember(moved.renewable, 'cart')).toBe(1);
      expect(await redis.admin.pttl(`${moved.valuePrefix}name`)).toBe(-1);
      // Nothing of the session namespaces is left in the old layout; the app namespace stays there.
      const left = (await redis.keys(prefix)).filter((key) => key.startsWith(`${prefix}memory`));
      expect(left.sort()).toEqual(
        [
          legacyMemoryKeys(prefix, 'app').index,
          `${legacyMemoryKeys(prefix, 'app').valuePrefix}visits`,
        ].sort(),
      );
      // Clearing the session's memory clears what was moved.
      await store.clear(plain);
      expect(await store.get(plain, 'cart')).toBeUndefined();
      // A second run finds nothing to do.
      expect(await migrateSessionMemory(REDIS_URL, { keyPrefix: prefix })).toEqual({
        namespaces: 0,
        values: 0,
        kept: 0,
      });
    } finally {
      await store.close();
    }
  });
});
