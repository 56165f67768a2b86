import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyProblems } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { eventually } from './support/load.js';
import {
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

let logDirectory: string;
let agentLog: string;
let a: Replica;
let b: Replica;

beforeAll(async () => {
  logDirectory = mkdtempSync(join(tmpdir(), 'switchboard-approval-crash-'));
  agentLog = join(logDirectory, 'agents.log');
  [a, b] = (await replicas.start(2, {
    REDIS_URL,
    KEY_PREFIX: redis.prefix(),
    ORCHESTRATOR: 'keyword',
    AGENT_LOG: agentLog,
  })) as [Replica, Replica];
}, 30_000);

describe('an approved call whose replica dies while it runs', () => {
  it('stays approved: the other replica runs it again on recovery without asking anyone, with the same idempotency key', async () => {
    const tag = randomBytes(4).toString('hex');
    const sessionId = `approval-crash-${tag}`;
    const message = `refund 500 taking 4000 for order ${tag}`;
    const paused = await chat(a.url, { message, sessionId });
    expect(paused.body.status).toBe('awaiting_approval');
    const approvalId = paused.body.approvals?.[0]?.id as string;
    const turnId = paused.body.turnId as string;

    const approving = resolveApproval(a.url, sessionId, approvalId, {
      decision: 'approve',
      userId: 'manager-1',
    }).catch((error: unknown) => error);
    const refundRuns = () => readAgentLog(agentLog).filter((run) => run.message === message);
    expect(await eventually(() => refundRuns().length > 0, 5_000)).toBe(true);
    a.child.kill('SIGKILL');
    expect(await approving).toBeInstanceOf(Error);

    // The decision was stored before the refund ran: approved, by whom, and the turn running, not paused.
    const left = await readSession(b.url, sessionId);
    expect(left.pendingApprovals).toEqual([]);
    expect(left.activeTurn).toEqual({ turnId, status: 'running' });
    expect(left.turns[0]?.approvals).toMatchObject([
      { id: approvalId, status: 'approved', decidedBy: 'manager-1' },
    ]);
    // Nobody can decide it again, so no rejection can land on a call that already ran.
    for (const decision of ['approve', 'reject'] as const) {
      const again = await resolveApproval(b.url, sessionId, approvalId, { decision });
      expect(again.status).toBe(409);
      expect(again.body.error?.code).toBe('approval_resolved');
    }

    // The next message on the session recovers the turn on B: the approved refund runs again there.
    const next = await chat(b.url, { message: 'echo after the crash', sessionId }, { timeoutMs: 20_000 });
    expect(next.status).toBe(200);
    const reply = `refunded 500 (pid ${b.pid})`;
    const { messages, turns, pendingApprovals } = await readSession(b.url, sessionId);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(messages.map((stored) => [stored.role, stored.content])).toEqual([
      ['user', message],
      ['tool', reply],
      ['assistant', reply],
      ['user', 'echo after the crash'],
      ['tool', next.body.reply],
      ['assistant', next.body.reply],
    ]);
    expect(turns.map((turn) => [turn.status, turn.recoveries])).toEqual([
      ['completed', 1],
      ['completed', undefined],
    ]);
    expect(turns[0]?.approvals).toMatchObject([
      { id: approvalId, status: 'approved', decidedBy: 'manager-1' },
    ]);
    expect(pendingApprovals).toEqual([]);

    // At least once: started on A (killed), run again on B; the agent saw one key each time.
    const runs = refundRuns();
    expect(runs.map((run) => [run.pid, run.event])).toEqual([
      [a.pid, 'start'],
      [b.pid, 'start'],
      [b.pid, 'end'],
    ]);
    expect(new Set(runs.map((run) => run.key)).size).toBe(1);
    expect(runs[0]?.key).toContain(turnId);
  }, 40_000);
});
