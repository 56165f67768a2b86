import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { settlesBefore } from '../../../../packages/runtime/test/support/settles-before.js';
import {
  type StalledStore,
  startStalledStore,
} from '../../../../packages/runtime/test/support/stalled-store.js';
import { startTcpProxy, type TcpProxy } from '../../../../packages/runtime/test/support/tcp-proxy.js';
import { eventually, isAlive, readiness, startLoad } from './support/load.js';
import { chat, type Replica, useReplicas } from './support/replicas.js';

const redis = useRedis();
// After hooks run in reverse order: the proxy comes back up, the replicas stop, then the proxy closes.
afterAll(() => proxy?.stop());
const replicas = useReplicas();
afterAll(() => proxy?.start().catch(() => {}));
afterAll(() => stalled?.close());

let proxy: TcpProxy;
let servers: Replica[];
/** A store with the replicas' command timeout (the default), whose Redis has stopped answering. */
let stalled: StalledStore;

beforeAll(async () => {
  const redisAddress = new URL(REDIS_URL);
  proxy = await startTcpProxy({ host: redisAddress.hostname, port: Number(redisAddress.port || 6379) });
  stalled = await startStalledStore();
  servers = await replicas.start(3, {
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    KEY_PREFIX: redis.prefix(),
    ORCHESTRATOR: 'keyword',
    LEASE_TTL_MS: '2000',
    SESSION_WAIT_MS: '5000',
  });
}, 30_000);

describe('replicas during a Redis outage under load', () => {
  it('answer 503 promptly, fail readiness, stay up, and resume by themselves when Redis returns', async () => {
    const load = startLoad(servers);
    try {
      await delay(1_000);
      const before = [...load.samples];
      expect(before.length).toBeGreaterThan(10);
      expect(before.filter((sample) => sample.status !== 200)).toEqual([]);

      // An answer during the outage waits out one command timeout at most, not two: each request is raced
      // against two command timeouts in a row, on a store whose Redis stopped answering, started with it.
      const twoTimeouts = () => stalled.commandTimeouts(2);
      await proxy.stop();
      const stoppedAt = performance.now();
      load.raceFrom(twoTimeouts);
      await delay(500);
      const ready = await Promise.all(
        servers.map((server) =>
          settlesBefore(readiness(server.url), twoTimeouts(), 'two command timeouts in a row'),
        ),
      );
      for (const answer of ready) {
        expect(answer.status).toBe(503);
        expect(answer.body).toMatchObject({
          // The reason stays on the server: a client learns no store address.
          error: { code: 'not_ready', message: expect.not.stringContaining('127.0.0.1') },
        });
      }
      await delay(2_000);
      for (const server of servers) expect(isAlive(server.pid), server.output()).toBe(true);

      await proxy.start();
      const restartedAt = performance.now();
      load.raceFrom(undefined);
      // Requests sent during the outage (give the replicas 100 ms to notice it) all got a prompt 503.
      const during = load.samples.filter(
        (sample) => sample.startedAt > stoppedAt + 100 && sample.endedAt < restartedAt,
      );
      for (const replica of servers.keys()) {
        expect(during.filter((sample) => sample.replica === replica).length).toBeGreaterThan(3);
      }
      for (const sample of during) {
        expect(sample.status, sample.failure).toBe(503);
        expect(sample.body?.error?.code).toBe('store_unavailable');
        expect(sample.body?.error?.message).not.toMatch(/127\.0\.0\.1|:\d{2,5}\b/);
        expect(sample.answeredFirst, `worker ${sample.worker} answered only after two command timeouts`).toBe(
          true,
        );
      }

      // Service comes back without a restart: every conversation (one per worker, on every replica)
      // gets answers again within a few seconds, once a lease left by a turn cut short has expired.
      const workers = new Set(load.samples.map((sample) => sample.worker));
      const recovered = () =>
        [...workers].every((worker) =>
          load.samples.some(
            (sample) => sample.worker === worker && sample.startedAt > restartedAt && sample.status === 200,
          ),
        );
      expect(await eventually(recovered, 6_000)).toBe(true);
    } finally {
      await load.stop();
    }
    // Nothing hung or failed at the transport level, and no request ever got a 500.
    expect(load.samples.filter((sample) => sample.failure !== undefined)).toEqual([]);
    expect(new Set(load.samples.map((sample) => sample.status))).toEqual(new Set([200, 503]));

    for (const server of servers) {
      expect((await readiness(server.url)).status).toBe(200);
      const after = await chat(server.url, { message: 'echo after the outage' });
      expect(after.status).toBe(200);
      expect(after.body.reply).toBe(`echo: echo after the outage (pid ${server.pid})`);
    }
  }, 30_000);
});
