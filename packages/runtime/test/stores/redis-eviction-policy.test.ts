import { ConfigurationError } from '@switchboard/core';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { captureLogs } from '../../src/testing/log-capture.js';
import { buildApp, echoAgent } from '../support/app-fixtures.js';
import { startOwnRedis } from '../support/redis-cluster.js';

// Its own redis-server, whose maxmemory-policy each test sets.
let redis: { url: string; stop(): Promise<void> };
let admin: Redis;
beforeAll(async () => {
  redis = await startOwnRedis(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
  admin = new Redis(redis.url);
  // A user that may not run CONFIG, as on many managed Redis services.
  await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-password', '~*', '&*', '+@all', '-config');
}, 30_000);
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

function redisApp({ url = redis.url, allowEviction }: { url?: string; allowEviction?: boolean } = {}) {
  const logs = captureLogs();
  const { app, orchestrator } = buildApp({
    agents: [echoAgent()],
    logger: logs.logger,
    ...createRedisStores(url, { keyPrefix: 'eviction:', allowEviction }),
  });
  apps.push(app);
  return { start: () => app.start(orchestrator, { port: 0 }), app, logs };
}

const setPolicy = (policy: string) => admin.config('SET', 'maxmemory-policy', policy);

describe("Redis's maxmemory-policy", () => {
  it.each(['allkeys-lru', 'volatile-lru'])(
    '%s (which may evict sessions) stops the start-up with one clear line',
    async (policy) => {
      await setPolicy(policy);
      const { start } = redisApp();
      const failure = await start().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(ConfigurationError.isInstance(failure)).toBe(true);
      const { message } = failure as Error;
      expect(message).toContain(`maxmemory-policy is ${policy}`);
      expect(message).toMatch(/set maxmemory-policy noeviction/);
      expect(message).toMatch(/allowEviction/);
      expect(message).not.toMatch(/\n/);
      expect(message).not.toContain('127.0.0.1');
    },
  );

  it('allowed explicitly, starts, and says so at start-up and on /readyz', async () => {
    await setPolicy('allkeys-lru');
    const { start, logs } = redisApp({ allowEviction: true });
    const server = await start();
    expect(logs.lines.filter((line) => line.includes('maxmemory-policy is allkeys-lru'))).toHaveLength(1);
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; warnings?: string[] };
    expect(body.status).toBe('ready');
    expect(body.warnings).toEqual([
      expect.stringMatching(/maxmemory-policy is allkeys-lru.*allowed explicitly/),
    ]);
  });

  it('set to evict while the server runs, makes /readyz answer 503 with the reason', async () => {
    await setPolicy('noeviction');
    const { start } = redisApp();
    const server = await start();
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });

    await setPolicy('volatile-lru');
    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    const { error } = (await notReady.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('not_ready');
    expect(error.message).toContain('maxmemory-policy is volatile-lru');
  });

  it('unreadable (CONFIG not permitted), warns once at start-up and says what to check', async () => {
    await setPolicy('noeviction');
    const limited = redis.url.replace('redis://', 'redis://app:app-password@');
    const { start, logs } = redisApp({ url: limited });
    const server = await start();
    const warnings = logs.lines.filter((line) => line.includes('could not be read'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/CONFIG GET is not permitted.*noeviction/);
    expect(warnings[0]).not.toContain('app-password');
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { warnings?: string[] }).warnings).toEqual([
      expect.stringMatching(/could not be read/),
    ]);
  });
});
