import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { generateCallbackSecret, verifyCallback } from '@switchboard/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { eventually } from './support/load.js';
import { type Replica, readAgentLog, readSession, useReplicas } from './support/replicas.js';

const redis = useRedis();
const replicas = useReplicas();

let logDirectory: string;
let agentLog: string;
let prefix: string;

beforeAll(() => {
  logDirectory = mkdtempSync(join(tmpdir(), 'switchboard-background-'));
  agentLog = join(logDirectory, 'agents.log');
  prefix = redis.prefix();
});
afterAll(() => rmSync(logDirectory, { recursive: true, force: true }));

/** Replicas sharing one Redis and one BullMQ queue, with a short lock and stalled check so a dead one's jobs come back soon. */
function startReplicas(count: number) {
  return replicas.start(count, {
    REDIS_URL,
    KEY_PREFIX: prefix,
    ORCHESTRATOR: 'keyword',
    AGENT_LOG: agentLog,
    BACKGROUND: 'bullmq',
    QUEUE_CONCURRENCY: '8',
    QUEUE_LOCK_MS: '2000',
    QUEUE_STALLED_MS: '500',
    LEASE_TTL_MS: '2000',
    SESSION_WAIT_MS: '500',
    SWEEP_INTERVAL_MS: '500',
    SWEEP_AFTER_MS: '500',
    CALLBACK_SECRET: secret,
  });
}

const secret = generateCallbackSecret();
/** Every callback the replicas delivered: its delivery id, type and turn, once verified. */
const callbacks: Array<{ id: string; type: string; turnId: string }> = [];
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const verified = verifyCallback({ headers: request.headers as never, body, secret });
    if (!verified.valid) {
      response.writeHead(401).end();
      return;
    }
    const parsed = JSON.parse(body) as { type: string; data: { turnId: string } };
    callbacks.push({ id: verified.id, type: parsed.type, turnId: parsed.data.turnId });
    response.writeHead(204).end();
  });
});
let hook: string;
beforeAll(async () => {
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/turns`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

interface Receipt {
  sessionId: string;
  turnId: string;
  status: string;
  events: string;
}

async function queue(url: string, message: string): Promise<Receipt> {
  const response = await fetch(`${url}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message, background: true, callbackUrl: hook }),
    signal: AbortSignal.timeout(10_000),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as Receipt;
}

async function statusOf(url: string, receipt: Receipt): Promise<string> {
  const response = await fetch(`${url}/v1/sessions/${receipt.sessionId}/turns/${receipt.turnId}`, {
    signal: AbortSignal.timeout(10_000),
  });
  return ((await response.json()) as { status: string }).status;
}

/** Polls until every turn reads `completed` (or the deadline passes), and returns their statuses. */
async function settle(url: string, receipts: readonly Receipt[], timeoutMs: number): Promise<string[]> {
  const deadline = performance.now() + timeoutMs;
  let statuses: string[] = [];
  do {
    statuses = [];
    for (const receipt of receipts) statuses.push(await statusOf(url, receipt));
    if (statuses.every((status) => status === 'completed')) break;
    await delay(200);
  } while (performance.now() < deadline);
  return statuses;
}

/** The turns each session stored, and its assistant answers: a turn stored once has one of each. */
async function storedOnce(url: string, receipts: readonly Receipt[]): Promise<string[]> {
  const problems: string[] = [];
  for (const receipt of receipts) {
    const session = await readSession(url, receipt.sessionId);
    const answers = session.messages.filter((message) => message.role === 'assistant');
    if (session.turns.length !== 1 || answers.length !== 1)
      problems.push(`${receipt.sessionId}: ${session.turns.length} turns, ${answers.length} answers`);
  }
  return problems;
}

/** A turn's event log, replayed from its start: every id once, increasing, ending with its `turn-end`. */
async function eventLogProblems(url: string, receipt: Receipt): Promise<string | undefined> {
  const response = await fetch(`${url}${receipt.events}`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const ids = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1] as string);
  const types = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1] as string);
  if (new Set(ids).size !== ids.length) return `${receipt.turnId}: repeated event ids`;
  if (types.at(-1) !== 'turn-end') return `${receipt.turnId}: ends with ${types.at(-1)}`;
  if (!types.includes('message')) return `${receipt.turnId}: no answer event`;
  return undefined;
}

describe('background turns over two replicas on BullMQ', () => {
  it('completes 200 turns exactly once when one replica is SIGKILLed mid-run, with complete event logs', async () => {
    const [a, b] = (await startReplicas(2)) as [Replica, Replica];
    const receipts: Receipt[] = [];
    for (let index = 0; index < 200; index += 1) {
      receipts.push(await queue(index % 2 === 0 ? a.url : b.url, `slow 150 job ${index}`));
    }
    // Kill A once both replicas have run some turns and A is in the middle of others.
    const ranOnA = () =>
      readAgentLog(agentLog).filter((run) => run.pid === a.pid && run.event === 'end').length;
    expect(await eventually(() => ranOnA() >= 20, 30_000)).toBe(true);
    a.child.kill('SIGKILL');
    const statuses = await settle(b.url, receipts, 90_000);
    expect(statuses.filter((status) => status !== 'completed')).toEqual([]);
    expect(await storedOnce(b.url, receipts)).toEqual([]);
    const runs = readAgentLog(agentLog);
    // Both ran turns; A was killed with turns under way, which B ran (again) to the end.
    expect(runs.some((run) => run.pid === b.pid && run.event === 'end')).toBe(true);
    const startedOnA = new Set(
      runs.filter((run) => run.pid === a.pid && run.event === 'start').map((run) => run.message),
    );
    const endedOnA = new Set(
      runs.filter((run) => run.pid === a.pid && run.event === 'end').map((run) => run.message),
    );
    const cutShort = [...startedOnA].filter((message) => !endedOnA.has(message));
    expect(cutShort.length).toBeGreaterThan(0);
    for (const message of cutShort) {
      expect(runs.some((run) => run.pid === b.pid && run.message === message && run.event === 'end')).toBe(
        true,
      );
    }
    const problems: string[] = [];
    for (const receipt of receipts) {
      const problem = await eventLogProblems(b.url, receipt);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
    // Each result reached the receiver at least once (twice for a few: a job run again), one delivery id per turn.
    const turnIds = new Set(receipts.map((receipt) => receipt.turnId));
    const delivered = callbacks.filter((callback) => turnIds.has(callback.turnId));
    expect(delivered.every((callback) => callback.type === 'turn.completed')).toBe(true);
    expect(new Set(delivered.map((callback) => callback.turnId)).size).toBe(200);
    expect(new Set(delivered.map((callback) => callback.id)).size).toBe(200);
  }, 180_000);

  it('loses no turn when a replica is drained (SIGTERM) with 20 turns queued or running', async () => {
    const [c, d] = (await startReplicas(2)) as [Replica, Replica];
    const receipts: Receipt[] = [];
    for (let index = 0; index < 20; index += 1) receipts.push(await queue(c.url, `slow 400 drain ${index}`));
    const startedOnC = () =>
      readAgentLog(agentLog).filter(
        (run) => run.pid === c.pid && run.event === 'start' && run.message.includes('drain'),
      ).length;
    expect(await eventually(() => startedOnC() > 0, 30_000)).toBe(true);
    const exit = new Promise<number | null>((resolve) => c.child.once('exit', (code) => resolve(code)));
    c.child.kill('SIGTERM');
    // C finishes what it took within its grace period and exits cleanly; D runs everything else.
    expect(await exit).toBe(0);
    const statuses = await settle(d.url, receipts, 60_000);
    expect(statuses.filter((status) => status !== 'completed')).toEqual([]);
    expect(await storedOnce(d.url, receipts)).toEqual([]);
    const runs = readAgentLog(agentLog).filter((run) => run.message.includes('drain'));
    // Every turn C started, it finished itself: none was cut short and run again.
    const started = runs
      .filter((run) => run.pid === c.pid && run.event === 'start')
      .map((run) => run.message);
    const ended = runs.filter((run) => run.pid === c.pid && run.event === 'end').map((run) => run.message);
    expect(ended.sort()).toEqual(started.sort());
    // The rest ran once each elsewhere (on D, or on B of the test before, which shares the queue).
    expect(runs.filter((run) => run.pid !== c.pid && run.event === 'end').length).toBe(20 - ended.length);
  }, 120_000);

  it('fires an `every: 1s` schedule once per tick across two replicas, five ticks running', async () => {
    const [e, f] = (await startReplicas(2)) as [Replica, Replica];
    const response = await fetch(`${e.url}/v1/schedules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'echo tick', every: 1000 }),
    });
    expect(response.status).toBe(201);
    const { id, createdAt } = (await response.json()) as { id: string; createdAt: string };
    // The replicas share a tenant with the tests before: the schedule's turns are those queued since it was made.
    const since = Date.parse(createdAt);
    type Listed = { turnId: string; status: string; queuedAt: string };
    const ticks = async () =>
      ((await (await fetch(`${f.url}/v1/background-turns`)).json()) as { data: Listed[] }).data.filter(
        (turn) => Date.parse(turn.queuedAt) >= since,
      );
    const completed = (turns: Listed[]) => turns.filter((turn) => turn.status === 'completed');
    let deadline = performance.now() + 30_000;
    while (completed(await ticks()).length < 5 && performance.now() < deadline) await delay(200);
    expect((await fetch(`${f.url}/v1/schedules/${id}`, { method: 'DELETE' })).status).toBe(204);
    // A tick under way when the schedule went finishes too.
    deadline = performance.now() + 10_000;
    let listed = await ticks();
    while (completed(listed).length < listed.length && performance.now() < deadline) {
      await delay(200);
      listed = await ticks();
    }
    expect(completed(listed)).toEqual(listed);
    const fired = listed.map((turn) => Date.parse(turn.queuedAt)).sort((x, y) => x - y);
    expect(fired.length).toBeGreaterThanOrEqual(5);
    // One turn per tick: the ticks are whole seconds apart, none twice.
    expect(new Set(fired).size).toBe(fired.length);
    expect(fired.slice(1).map((at, index) => at - (fired[index] as number))).toEqual(
      fired.slice(1).map(() => 1000),
    );
    // And each ran its agent once, on whichever replica took it.
    const runs = readAgentLog(agentLog).filter((run) => run.message === 'echo tick' && run.event === 'end');
    expect(runs.length).toBe(fired.length);
  }, 60_000);
});
