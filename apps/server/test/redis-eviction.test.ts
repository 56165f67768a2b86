/**
 * The server against a Redis that may evict its keys (`maxmemory-policy
 * allkeys-lru`): it refuses to start, in one line, unless
 * SWITCHBOARD_ALLOW_EVICTION allows it; then it says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnRedis } from '../../../packages/runtime/test/support/redis-cluster.js';
import { serverForTest } from './support/spawn-server.js';

let redis: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  redis = await startOwnRedis(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

describe.concurrent('REDIS_URL to a Redis whose maxmemory-policy is allkeys-lru', () => {
  it('stops the start-up with one line naming the policy and the way out', async (context) => {
    const server = serverForTest(context, { REDIS_URL: redis.url, CONSOLE: 'off' });
    expect(await server.exited).toBe(1);
    const lines = server
      .output()
      .stderr.split('\n')
      .filter((line) => line.startsWith('switchboard: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^switchboard: Redis's maxmemory-policy is allkeys-lru, which lets Redis delete/,
    );
    expect(lines[0]).toContain('set maxmemory-policy noeviction');
    expect(lines[0]).toContain('SWITCHBOARD_ALLOW_EVICTION=1');
  });

  it('with SWITCHBOARD_ALLOW_EVICTION=1, starts and says so in its log and on /readyz', async (context) => {
    const server = serverForTest(context, {
      REDIS_URL: redis.url,
      CONSOLE: 'off',
      SWITCHBOARD_ALLOW_EVICTION: '1',
    });
    const url = await server.listening;
    expect(server.output().stdout).toMatch(/"level":40,.*maxmemory-policy is allkeys-lru: Redis may delete/);
    const response = await fetch(`${url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ready',
      warnings: [expect.stringContaining('maxmemory-policy is allkeys-lru')],
    });
  });
});
