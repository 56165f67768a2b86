import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyProblems } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { eventually } from './support/load.js';
import {
  type AgentRun,
  cancelTurn,
  chat,
  type Replica,
  readAgentLog,
  readSession,
  resolveApproval,
  useReplicas,
} from './support/replicas.js';

const redis = useRedis();
// After hooks run in reverse order: the replicas stop before their agent log is removed.
afterAll(() => rmSync(logDirectory, { recursive: true, force: true }));
const replicas = useReplicas();

const INTERRUPTED_MESSAGE = 'This request was stopped before it finished.';

let logDirectory: string;
let agentLog: string;
let a: Replica;
let b: Replica;
let tag: string;

beforeAll(async () => {
  tag = randomBytes(4).toString('hex');
  logDirectory = mkdtempSync(join(tmpdir(), 'switchboard-approvals-'));
  agentLog = join(logDirectory, 'agents.log');
  [a, b] = (await replicas.start(2, {
    REDIS_URL,
    KEY_PREFIX: redis.prefix(),
    ORCHESTRATOR: 'keyword',
    AGENT_LOG: agentLog,
  })) as [Replica, Replica];
}, 30_000);

/** The runs of the agent call with this exact message, as `[pid, event]`, in the order they were logged. */
const runsOf = (message: string) =>
  readAgentLog(agentLog)
    .filter((run) => run.message === message)
    .map((run): [number, AgentRun['event']] => [run.pid, run.event]);

/** A paused refund on `server`: its turn and approval ids. */
async function pausedRefund(server: Replica, sessionId: string, message: string) {
  const paused = await chat(server.url, { message, sessionId });
  expect(paused.status).toBe(200);
  expect(paused.body).toMatchObject({
    sessionId,
    status: 'awaiting_approval',
    approvals: [{ agent: 'refund', message, risk: 'high', requestedBy: 'agent', status: 'pending' }],
  });
  return { turnId: paused.body.turnId as string, approvalId: paused.body.approvals?.[0]?.id as string };
}

describe('approvals, cancels and idempotent retries across two replica processes', () => {
  it('continues a turn paused on one replica when it is approved through the other', async () => {
    const sessionId = `approvals-${tag}-handover`;
    const message = `refund 500 for order ${tag}`;
    const { turnId, approvalId } = await pausedRefund(a, sessionId, message);

    // B sees the pause A stored.
    const waiting = await readSession(b.url, sessionId);
    expect(waiting.activeTurn).toEqual({ turnId, status: 'awaiting_approval' });
    expect(waiting.pendingApprovals.map((approval) => approval.id)).toEqual([approvalId]);
    expect(historyProblems(waiting.messages, waiting.turns)).toEqual([]);

    const approved = await resolveApproval(b.url, sessionId, approvalId, {
      decision: 'approve',
      userId: 'manager-1',
    });
    const reply = `refunded 500 (pid ${b.pid})`;
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ sessionId, turnId, status: 'completed', reply });

    for (const server of [a, b]) {
      const { messages, turns, pendingApprovals, activeTurn } = await readSession(server.url, sessionId);
      expect(historyProblems(messages, turns)).toEqual([]);
      expect(messages.map((stored) => [stored.role, stored.content])).toEqual([
        ['user', message],
        ['tool', reply],
        ['assistant', reply],
      ]);
      expect(turns).toHaveLength(1);
      expect(turns[0]).toMatchObject({
        turnId,
        status: 'completed',
        approvals: [{ id: approvalId, status: 'approved', decidedBy: 'manager-1' }],
      });
      expect(pendingApprovals).toEqual([]);
      expect(activeTurn).toBeUndefined();
    }
    // The refund ran once, on the replica that received the decision, never on the one that paused.
    expect(runsOf(message)).toEqual([
      [b.pid, 'start'],
      [b.pid, 'end'],
    ]);
  });

  it('accepts one of two simultaneous approvals of the same call, on different replicas, and runs it once', async () => {
    const sessionId = `approvals-${tag}-race`;
    const message = `refund 700 for order ${tag}`;
    const { turnId, approvalId } = await pausedRefund(a, sessionId, message);

    const answers = await Promise.all(
      [a, b].map((server) => resolveApproval(server.url, sessionId, approvalId, { decision: 'approve' })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const winner = answers.findIndex((answer) => answer.status === 200);
    const reply = `refunded 700 (pid ${[a, b][winner]?.pid})`;
    expect(answers[winner]?.body).toMatchObject({ turnId, status: 'completed', reply });
    expect(answers[1 - winner]?.body.error?.code).toBe('approval_resolved');

    expect(runsOf(message)).toEqual([
      [[a, b][winner]?.pid, 'start'],
      [[a, b][winner]?.pid, 'end'],
    ]);
    const { messages, turns } = await readSession(b.url, sessionId);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(messages.map((stored) => [stored.role, stored.content])).toEqual([
      ['user', message],
      ['tool', reply],
      ['assistant', reply],
    ]);
    expect(turns.map((turn) => turn.status)).toEqual(['completed']);
  });

  it('stops a turn running on one replica when it is cancelled through the other', async () => {
    const sessionId = `approvals-${tag}-cancel`;
    const message = `slow 8000 for order ${tag}`;
    const running = chat(a.url, { message, sessionId }, { timeoutMs: 15_000 });
    expect(await eventually(() => runsOf(message).length > 0, 5_000)).toBe(true);

    const { activeTurn } = await readSession(b.url, sessionId);
    expect(activeTurn).toMatchObject({ status: 'running' });
    const turnId = activeTurn?.turnId as string;
    const [cancelled, interrupted] = await Promise.all([cancelTurn(b.url, sessionId, turnId), running]);

    for (const answer of [cancelled, interrupted]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        sessionId,
        turnId,
        status: 'interrupted',
        reply: INTERRUPTED_MESSAGE,
        error: { code: 'turn_interrupted' },
      });
    }
    // A's agent was aborted through its signal: it never finished, and no reply of it was stored.
    expect(await eventually(() => runsOf(message).length === 2, 2_000)).toBe(true);
    expect(runsOf(message)).toEqual([
      [a.pid, 'start'],
      [a.pid, 'abort'],
    ]);
    const { messages, turns, activeTurn: after } = await readSession(b.url, sessionId);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(messages.map((stored) => [stored.role, stored.content])).toEqual([
      ['user', message],
      ['assistant', INTERRUPTED_MESSAGE],
    ]);
    expect(turns).toMatchObject([{ turnId, status: 'interrupted', error: { code: 'turn_interrupted' } }]);
    expect(after).toBeUndefined();
  });

  it('runs a request sent to both replicas at once with the same Idempotency-Key once, and answers both with it', async () => {
    const message = `slow 300 for order ${tag}`;
    const headers = { 'Idempotency-Key': `order-${tag}` };
    const answers = await Promise.all([a, b].map((server) => chat(server.url, { message }, { headers })));

    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('completed');
    }
    const [first, second] = answers.map((answer) => answer.body);
    expect(second?.sessionId).toBe(first?.sessionId);
    expect(second?.turnId).toBe(first?.turnId);
    expect(second?.reply).toBe(first?.reply);

    const runs = runsOf(message);
    expect(runs.map(([, event]) => event)).toEqual(['start', 'end']);
    expect(first?.reply).toBe(`echo: ${message} (pid ${runs[0]?.[0]})`);
    const { messages, turns } = await readSession(a.url, first?.sessionId as string);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(turns.map((turn) => [turn.turnId, turn.status])).toEqual([[first?.turnId, 'completed']]);
    expect(messages.map((stored) => [stored.role, stored.content])).toEqual([
      ['user', message],
      ['tool', first?.reply],
      ['assistant', first?.reply],
    ]);
  });
});
