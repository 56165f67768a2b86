import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { eventually, isAlive, readiness, startLoad } from './support/load.js';
import { type PausableProxy, startPausableProxy } from './support/pausable-proxy.js';
import { chat, type Replica, useReplicas } from './support/replicas.js';

const redis = useRedis();
// After hooks run in reverse order: traffic flows again, the replicas stop, then the proxy closes.
afterAll(() => proxy?.close());
const replicas = useReplicas();
afterAll(() => proxy?.resume());

/** The store's command timeout is 2 s: a chat answer during a stall may take that, plus a margin. */
const STALL_ANSWER_MS = 3_000;
/** Long enough that a session still locked after the stall cannot pass for a recovered one. */
const LEASE_TTL_MS = 8_000;

let proxy: PausableProxy;
let servers: Replica[];

beforeAll(async () => {
  const redisAddress = new URL(REDIS_URL);
  proxy = await startPausableProxy({ host: redisAddress.hostname, port: Number(redisAddress.port || 6379) });
  servers = await replicas.start(3, {
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    KEY_PREFIX: redis.prefix(),
    ORCHESTRATOR: 'keyword',
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    SESSION_WAIT_MS: '1000',
  });
}, 30_000);

describe('replicas while Redis stops answering under load', () => {
  it('answer 503 within the command timeout, stay up, and serve every session again once Redis answers', async () => {
    const load = startLoad(servers);
    try {
      await delay(1_000);
      expect(load.samples.filter((sample) => sample.status !== 200)).toEqual([]);

      proxy.pause();
      const pausedAt = performance.now();
      const [ready, probes] = await Promise.all([
        Promise.all(servers.map((server) => readiness(server.url))),
        Promise.all(servers.map((server) => chat(server.url, { message: 'echo during the stall' }))),
      ]);
      for (const answer of ready) {
        expect(answer.status).toBe(503);
        expect(answer.body).toMatchObject({
          // The reason stays on the server: a client learns no store address.
          error: { code: 'not_ready', message: expect.not.stringContaining('127.0.0.1') },
        });
        expect(answer.elapsedMs).toBeLessThan(STALL_ANSWER_MS);
      }
      for (const probe of probes) {
        expect(probe.status).toBe(503);
        expect(probe.body.error?.code).toBe('store_unavailable');
        expect(probe.body.error?.message).not.toMatch(/127\.0\.0\.1|:\d{2,5}\b/);
        expect(probe.elapsedMs).toBeLessThan(STALL_ANSWER_MS);
      }
      await delay(2_000);
      for (const server of servers) expect(isAlive(server.pid), server.output()).toBe(true);

      proxy.resume();
      const resumedAt = performance.now();
      const overlapping = load.samples.filter(
        (sample) => sample.endedAt > pausedAt && sample.startedAt < resumedAt,
      );
      for (const sample of overlapping) {
        expect([200, 503], sample.failure).toContain(sample.status);
        // A turn caught mid-way waits out the timeout of its write only: the release of its lease is
        // left to the store, which sends it again once Redis answers.
        const waited = sample.startedAt > pausedAt ? sample.elapsedMs : sample.endedAt - pausedAt;
        expect(waited).toBeLessThan(STALL_ANSWER_MS);
      }

      // Every conversation works again within a few seconds. A lease request that timed out during
      // the stall but reached Redis afterwards must not keep its session locked for the lease ttl.
      const workers = new Set(load.samples.map((sample) => sample.worker));
      const recoveredWorkers = () =>
        [...workers].filter((worker) =>
          load.samples.some(
            (sample) => sample.worker === worker && sample.startedAt > resumedAt && sample.status === 200,
          ),
        );
      await eventually(() => recoveredWorkers().length === workers.size, 4_000);
      const stuck = [...workers].filter((worker) => !recoveredWorkers().includes(worker));
      const answersOfStuck = load.samples
        .filter((sample) => stuck.includes(sample.worker) && sample.startedAt > resumedAt)
        .map((sample) => `${sample.status} ${sample.body?.error?.message ?? sample.failure ?? ''}`);
      expect(
        stuck,
        `sessions still refused ${Math.round(performance.now() - resumedAt)} ms after Redis answered again: ${[...new Set(answersOfStuck)].join('; ')}`,
      ).toEqual([]);
    } finally {
      await load.stop();
    }
    expect(load.samples.filter((sample) => sample.failure !== undefined)).toEqual([]);
    for (const server of servers) expect((await readiness(server.url)).status).toBe(200);
  }, 30_000);
});
