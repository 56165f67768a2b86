import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { RedisSessionStore } from '../../src/stores/redis/redis-session-store.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();

/** Every session id `store` lists for `tenant`, one page at a time. */
async function listOneByOne(store: RedisSessionStore, tenant?: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const listed = await store.listSessions({ limit: 1, cursor, tenant });
    seen.push(...listed.sessions.map((session) => session.sessionId));
    if (!listed.nextCursor) return seen;
    cursor = listed.nextCursor;
  }
  throw new Error('the listing never ended');
}

describe('the Redis index of recent sessions', () => {
  const apps: App[] = [];
  const stores: RedisSessionStore[] = [];
  afterEach(async () => {
    await Promise.all([
      ...apps.splice(0).map((app) => app.close()),
      ...stores.splice(0).map((store) => store.close()),
    ]);
  });

  it('pages through sessions active in the same millisecond one by one, each once, newest id first', async () => {
    const keyPrefix = redis.prefix();
    const store = new RedisSessionStore(REDIS_URL, { keyPrefix });
    stores.push(store);
    // Sessions as a turn leaves them: a message each, and an index entry; two groups sharing a score.
    for (const [sessionId, score] of [
      ['a', 1000],
      ['b', 1000],
      ['c', 1000],
      ['d', 2000],
      ['e', 2000],
      ['f', 2000],
    ] as const) {
      await redis.admin.rpush(`${keyPrefix}session:{${sessionId}}:messages`, 'x');
      await redis.admin.zadd(`${keyPrefix}sessions:{none}`, score, sessionId);
    }
    expect(await listOneByOne(store)).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
  });

  it('keeps each tenant apart, expires with the idle time, and forgets entries idle for longer', async () => {
    const keyPrefix = redis.prefix();
    const { app } = createApp({
      agents: [echoAgent()],
      ...createRedisStores(REDIS_URL, { keyPrefix, idleTtlSeconds: 600 }),
    });
    apps.push(app);
    await app.chat({ sessionId: 'one', message: 'hi', tenantId: 'acme' });
    const index = `${keyPrefix}sessions:{t:acme}`;
    const ttl = await redis.admin.pttl(index);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600_000);
    // An entry last active beyond the idle time (its session would have expired) is forgotten on the next turn.
    await redis.admin.zadd(index, Date.now() - 700_000, 'acme/stale');
    await app.chat({ sessionId: 'two', message: 'hi', tenantId: 'acme' });
    expect(await redis.admin.zrange(index, '0', '-1')).toEqual(['acme/one', 'acme/two']);
    // Another tenant, and no tenant, have indexes of their own.
    await app.chat({ sessionId: 'one', message: 'hi' });
    expect(await redis.admin.zrange(`${keyPrefix}sessions:{none}`, '0', '-1')).toEqual(['one']);
  });

  it('drops the entry of a session that expired when it is listed', async () => {
    const keyPrefix = redis.prefix();
    const store = new RedisSessionStore(REDIS_URL, { keyPrefix });
    stores.push(store);
    const { app } = createApp({ agents: [echoAgent()], sessionStore: store });
    apps.push(app);
    await app.chat({ sessionId: 'alive', message: 'hi' });
    await app.chat({ sessionId: 'expired', message: 'hi' });
    // Expiry removes the session's keys, not its index entry.
    await redis.admin.del(`${keyPrefix}session:{expired}:messages`, `${keyPrefix}session:{expired}:turns`);
    expect(await listOneByOne(store)).toEqual(['alive']);
    expect(await redis.admin.zrange(`${keyPrefix}sessions:{none}`, '0', '-1')).toEqual(['alive']);
  });
});
