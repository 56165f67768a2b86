import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { historyProblems } from '@switchboard/runtime/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstLeaseLapse } from './support/leases.js';
import { eventually, isAlive, type Load, startLoad } from './support/load.js';
import { freePort, type RedisServer, startRedisServer } from './support/redis-server.js';
import { type ChatOutcome, chat, type Replica, readSession, useReplicas } from './support/replicas.js';

// After hooks run in reverse order: the load stops, the replicas stop, then Redis stops and its files go.
afterAll(async () => {
  await redisServer?.stop();
  if (dataDirectory) rmSync(dataDirectory, { recursive: true, force: true });
});
const replicas = useReplicas();
afterAll(() => load?.stop());

/**
 * Long enough to outlast the outage and the restart, so that a lease the
 * outage left in Redis (the AOF keeps it, with its expiry) still blocks its
 * session for a while once Redis is back: only the release the replica sends
 * again frees it before it lapses.
 */
const LEASE_TTL_MS = 6_000;
/** How long Redis stays down. */
const OUTAGE_MS = 1_500;
/** A turn whose agent is still running when Redis dies and ends while Redis is down. */
const STRAGGLER = 'slow 500';

let dataDirectory: string | undefined;
let redisServer: RedisServer | undefined;
let load: Load | undefined;
let servers: Replica[];
let port: number;
let tag: string;

beforeAll(async () => {
  tag = randomBytes(4).toString('hex');
  dataDirectory = mkdtempSync(join(tmpdir(), 'switchboard-redis-restart-'));
  port = await freePort();
  redisServer = await startRedisServer({ port, dir: dataDirectory });
  servers = await replicas.start(2, {
    REDIS_URL: `redis://127.0.0.1:${port}`,
    KEY_PREFIX: `sbtest:${tag}:`,
    ORCHESTRATOR: 'keyword',
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    SESSION_WAIT_MS: '1000',
  });
}, 30_000);

/** Sends `message` until it is answered 200 or `deadline` (a `performance.now()` time) passes. */
async function untilServed(url: string, sessionId: string, message: string, deadline: number) {
  const answers: ChatOutcome[] = [];
  while (performance.now() < deadline) {
    const answer = await chat(url, { message, sessionId }, { timeoutMs: 10_000 });
    answers.push(answer);
    if (answer.status === 200) return { served: answer, endedAt: performance.now(), answers };
    await delay(50);
  }
  return { served: undefined, endedAt: performance.now(), answers };
}

describe('replicas while their Redis is killed and restarted from its AOF under load', () => {
  it('answer 503 while it is down, serve every session again before the leases it left lapse, and keep every history whole', async () => {
    const [first, second] = servers as [Replica, Replica];
    load = startLoad(servers, { workersPerReplica: 3 });
    await delay(1_000);
    expect(load.samples.length).toBeGreaterThan(10);
    expect(load.samples.filter((sample) => sample.status !== 200)).toEqual([]);

    // One turn per replica whose agent runs when Redis dies and replies while it is down: the turn is
    // left `running`, and its lease stays in the AOF.
    const stragglers = servers.map((server, index) => {
      const sessionId = `restart-${tag}-straggler-${index}`;
      const answer = chat(server.url, { message: STRAGGLER, sessionId }).catch(
        (error: unknown): ChatOutcome => ({
          status: 0,
          elapsedMs: 0,
          body: { error: { code: 'no_answer', message: String(error) } },
        }),
      );
      return { server, sessionId, answer };
    });
    // Redis dies once both stragglers' turns are stored and their agents run.
    const running = async (url: string, sessionId: string) => {
      const deadline = performance.now() + 2_000;
      for (;;) {
        const session = await readSession(url, sessionId).catch(() => undefined);
        if (session?.activeTurn?.status === 'running') return true;
        if (performance.now() > deadline) return false;
        await delay(5);
      }
    };
    for (const { server, sessionId } of stragglers) {
      expect(await running(server.url, sessionId), `${sessionId} never started`).toBe(true);
    }
    // The leases the outage leaves in Redis: the first to lapse is when a session still locked by one would
    // be served again.
    const admin = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
    const firstLapseMs = await firstLeaseLapse(admin, `sbtest:${tag}:`).finally(() => admin.disconnect());
    const leasesLapseAt = performance.now() + (firstLapseMs ?? LEASE_TTL_MS);
    await redisServer?.stop('SIGKILL');
    const killedAt = performance.now();
    await delay(OUTAGE_MS);
    for (const server of servers) expect(isAlive(server.pid), server.output()).toBe(true);

    const restartedAt = performance.now();
    redisServer = await startRedisServer({ port, dir: dataDirectory as string });
    const { readyAt } = redisServer;

    // Every session gets an answer again: the load's (one per worker) and the stragglers', whose
    // next message first recovers (finishes) the turn the outage left running.
    const workers = [...new Set(load.samples.map((sample) => sample.worker))];
    const servedAgain = (worker: number) =>
      load?.samples.find(
        (sample) => sample.worker === worker && sample.startedAt > restartedAt && sample.status === 200,
      );
    const [afterStragglers] = await Promise.all([
      Promise.all(
        stragglers.map(({ server, sessionId }) =>
          untilServed(server.url, sessionId, 'echo after the restart', leasesLapseAt),
        ),
      ),
      eventually(
        () => workers.every((worker) => servedAgain(worker) !== undefined),
        leasesLapseAt - performance.now(),
      ),
    ]);
    await load.stop();
    const samples = load.samples;

    // While Redis was down every request got a 503 (give the replicas 100 ms to notice), on both replicas.
    const during = samples.filter(
      (sample) => sample.startedAt > killedAt + 100 && sample.endedAt < restartedAt,
    );
    for (const replica of servers.keys()) {
      expect(during.filter((sample) => sample.replica === replica).length).toBeGreaterThan(3);
    }
    for (const sample of during) {
      expect(sample.status, sample.failure).toBe(503);
      expect(sample.body?.error?.code).toBe('store_unavailable');
    }
    // The stragglers' replies could not be stored: the outcome is unknown to the client.
    for (const { answer } of stragglers) {
      const { status, body } = await answer;
      expect(status).toBe(503);
      expect(body.error).toMatchObject({ code: 'store_unavailable', outcome: 'unknown' });
    }
    // Nothing hung, nothing crashed: no transport failure, no 5xx but 503.
    expect(samples.filter((sample) => sample.failure !== undefined)).toEqual([]);
    expect(samples.filter((sample) => (sample.status ?? 0) >= 500 && sample.status !== 503)).toEqual([]);

    const lateWorkers = workers
      .map((worker) => ({ worker, served: servedAgain(worker) }))
      .filter(({ served }) => served === undefined || served.endedAt > leasesLapseAt)
      .map(({ worker, served }) => {
        const answers = samples
          .filter((sample) => sample.worker === worker && sample.startedAt > restartedAt)
          .map((sample) => `${sample.status} ${sample.body?.error?.code ?? sample.failure ?? ''}`);
        const after = served ? `${Math.round(served.endedAt - readyAt)} ms` : 'never';
        return `worker ${worker}: served ${after} after Redis answered; answers ${[...new Set(answers)].join(', ')}`;
      });
    const lateStragglers = afterStragglers
      .map((outcome, index) => ({ ...outcome, sessionId: stragglers[index]?.sessionId }))
      .filter(({ served, endedAt }) => served === undefined || endedAt > leasesLapseAt)
      .map(
        ({ sessionId, endedAt, answers }) =>
          `${sessionId}: ${Math.round(endedAt - readyAt)} ms after Redis answered; answers ${answers
            .map((answer) => `${answer.status} ${answer.body.error?.code ?? ''}`)
            .join(', ')}`,
      );
    // Soft: the histories below are checked even when this fails.
    expect
      .soft(
        [...lateWorkers, ...lateStragglers],
        'sessions not served before the first lease the outage left lapsed',
      )
      .toEqual([]);

    // One more message on every session, then every turn has ended and every history is well formed.
    // Not timed: a session still locked (see above) gets its answer once the lease expires.
    const sessions = [
      ...new Set(samples.map((sample) => sample.sessionId)),
      ...stragglers.map(({ sessionId }) => sessionId),
    ];
    for (const [index, sessionId] of sessions.entries()) {
      const server = index % 2 === 0 ? first : second;
      const last = await untilServed(
        server.url,
        sessionId,
        'echo once more',
        performance.now() + LEASE_TTL_MS + 2_000,
      );
      expect(last.served, JSON.stringify(last.answers.at(-1)?.body)).toBeDefined();
      const { messages, turns, activeTurn } = await readSession(server.url, sessionId);
      expect(historyProblems(messages, turns), sessionId).toEqual([]);
      expect(
        turns.filter((turn) => turn.status !== 'completed'),
        sessionId,
      ).toEqual([]);
      expect(activeTurn).toBeUndefined();
    }
    // The stragglers' turns were recovered by the next message: their agent ran again, once stored.
    for (const { sessionId } of stragglers) {
      const { messages, turns } = await readSession(first.url, sessionId);
      expect(turns.map((turn) => [turn.status, turn.recoveries])).toEqual([
        ['completed', 1],
        ['completed', undefined],
        ['completed', undefined],
      ]);
      expect(messages.map((message) => message.role)).toEqual(
        Array(3).fill(['user', 'tool', 'assistant']).flat(),
      );
      expect(messages[1]?.content).toMatch(new RegExp(`^echo: ${STRAGGLER} \\(pid \\d+\\)$`));
    }
  }, 30_000);
});
