import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { echoAgent, relay, ScriptedOrchestrator } from '../support/app-fixtures.js';
import { startOwnRedis } from '../support/redis-cluster.js';

// Its own redis-server: the test pauses every write on it for a moment.
let redis: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  redis = await startOwnRedis();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

describe('a turn whose opening reply is lost', () => {
  it('does not leave its session blocked until the lease expires', async () => {
    const admin = new Redis(redis.url);
    const app = new App({
      name: 'lost-opening',
      agents: [echoAgent()],
      logLevel: 'silent',
      leaseTtlMs: 60_000,
      sessionWaitMs: 2_000,
      ...createRedisStores(redis.url, { keyPrefix: 'lost:', commandTimeoutMs: 300 }),
    });
    app.mount(new ScriptedOrchestrator([echoAgent()], relay()));
    try {
      expect((await app.chat({ sessionId: 'ses-lost', message: 'warm up' })).status).toBe('completed');
      // Writes wait 1 s on the server: the opening script (which takes the lease) runs after the turn gave up.
      await admin.call('CLIENT', 'PAUSE', '1000', 'WRITE');
      await expect(app.chat({ sessionId: 'ses-lost', message: 'lost in the pause' })).rejects.toThrow(
        /unavailable/i,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      // The next message gets the session well within its 2 s wait, not after the lease's 60 s.
      const next = await app.chat({ sessionId: 'ses-lost', message: 'after the pause' });
      expect(next.reply).toBe('echo: after the pause');
      expect(await admin.exists('lost:session:{ses-lost}:lease')).toBe(0);
    } finally {
      await app.close();
      admin.disconnect();
    }
  }, 30_000);
});
