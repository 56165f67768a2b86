import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { settlesBefore } from '../../../../packages/runtime/test/support/settles-before.js';
import {
  type StalledStore,
  startStalledStore,
} from '../../../../packages/runtime/test/support/stalled-store.js';
import { firstLeaseLapse } from './support/leases.js';
import { eventually, isAlive, readiness, startLoad } from './support/load.js';
import { type PausableProxy, startPausableProxy } from './support/pausable-proxy.js';
import { chat, type Replica, useReplicas } from './support/replicas.js';

const redis = useRedis();
// After hooks run in reverse order: traffic flows again, the replicas stop, then the proxy closes.
afterAll(() => proxy?.close());
const replicas = useReplicas();
afterAll(() => proxy?.resume());
afterAll(() => stalled?.close());

/** Long enough that a session still locked after the stall cannot pass for a recovered one. */
const LEASE_TTL_MS = 8_000;

let proxy: PausableProxy;
let servers: Replica[];
let keyPrefix: string;
/** A store with the replicas' command timeout (the default), caught in a stall of its own. */
let stalled: StalledStore;

beforeAll(async () => {
  const redisAddress = new URL(REDIS_URL);
  proxy = await startPausableProxy({ host: redisAddress.hostname, port: Number(redisAddress.port || 6379) });
  stalled = await startStalledStore();
  keyPrefix = redis.prefix();
  servers = await replicas.start(3, {
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    KEY_PREFIX: keyPrefix,
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

      // An answer during the stall waits out one command timeout at most, not two: each request is raced
      // against two command timeouts in a row, on a store stalled alike, started with it (or at the pause).
      const twoTimeouts = () => stalled.commandTimeouts(2);
      const withinOneTimeout = <T>(answer: Promise<T>) =>
        settlesBefore(answer, twoTimeouts(), 'two command timeouts in a row');
      proxy.pause();
      const pausedAt = performance.now();
      load.raceFrom(twoTimeouts);
      const [ready, probes] = await Promise.all([
        Promise.all(servers.map((server) => withinOneTimeout(readiness(server.url)))),
        Promise.all(
          servers.map((server) => withinOneTimeout(chat(server.url, { message: 'echo during the stall' }))),
        ),
      ]);
      for (const answer of ready) {
        expect(answer.status).toBe(503);
        expect(answer.body).toMatchObject({
          // The reason stays on the server: a client learns no store address.
          error: { code: 'not_ready', message: expect.not.stringContaining('127.0.0.1') },
        });
      }
      for (const probe of probes) {
        expect(probe.status).toBe(503);
        expect(probe.body.error?.code).toBe('store_unavailable');
        expect(probe.body.error?.message).not.toMatch(/127\.0\.0\.1|:\d{2,5}\b/);
      }
      await delay(2_000);
      for (const server of servers) expect(isAlive(server.pid), server.output()).toBe(true);

      // The leases the stall left in Redis (their releases timed out): the first to lapse is when a session
      // still locked by one would be served again. A lease request that reaches Redis only now lapses later.
      const leasesLapseAt =
        performance.now() + ((await firstLeaseLapse(redis.admin, keyPrefix)) ?? LEASE_TTL_MS);
      proxy.resume();
      const resumedAt = performance.now();
      load.raceFrom(undefined);
      const overlapping = load.samples.filter(
        (sample) => sample.endedAt > pausedAt && sample.startedAt < resumedAt,
      );
      for (const sample of overlapping) {
        expect([200, 503], sample.failure).toContain(sample.status);
        // A turn caught mid-way waits out the timeout of its write only: the release of its lease is
        // left to the store, which sends it again once Redis answers.
        expect(sample.answeredFirst, `worker ${sample.worker} answered only after two command timeouts`).toBe(
          true,
        );
      }

      // Every conversation works again before any lease left by the stall lapses: the replicas send the
      // releases again, and a lease request that timed out during the stall but reached Redis afterwards
      // must not keep its session locked for the lease ttl.
      const workers = new Set(load.samples.map((sample) => sample.worker));
      const recoveredWorkers = () =>
        [...workers].filter((worker) =>
          load.samples.some(
            (sample) =>
              sample.worker === worker &&
              sample.startedAt > resumedAt &&
              sample.status === 200 &&
              sample.endedAt < leasesLapseAt,
          ),
        );
      await eventually(() => recoveredWorkers().length === workers.size, leasesLapseAt - performance.now());
      const stuck = [...workers].filter((worker) => !recoveredWorkers().includes(worker));
      const answersOfStuck = load.samples
        .filter((sample) => stuck.includes(sample.worker) && sample.startedAt > resumedAt)
        .map((sample) => `${sample.status} ${sample.body?.error?.message ?? sample.failure ?? ''}`);
      expect(
        stuck,
        `sessions still refused when the first lease left by the stall lapsed: ${[...new Set(answersOfStuck)].join('; ')}`,
      ).toEqual([]);
    } finally {
      await load.stop();
    }
    expect(load.samples.filter((sample) => sample.failure !== undefined)).toEqual([]);
    for (const server of servers) expect((await readiness(server.url)).status).toBe(200);
  }, 30_000);
});
