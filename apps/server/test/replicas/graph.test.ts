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
  logDirectory = mkdtempSync(join(tmpdir(), 'switchboard-graph-replicas-'));
  agentLog = join(logDirectory, 'agents.log');
  [a, b] = (await replicas.start(2, {
    REDIS_URL,
    KEY_PREFIX: redis.prefix(),
    ORCHESTRATOR: 'graph',
    AGENT_LOG: agentLog,
  })) as [Replica, Replica];
}, 30_000);

/** Each graph node's runs for `message`, as `[node, pid, event]`. */
const nodeRuns = (message: string) =>
  readAgentLog(agentLog)
    .filter((run) => run.message === message)
    .map((run) => [run.agent.replace('graph-', ''), run.pid, run.event]);

describe('a graph on two Redis replicas', () => {
  it('pauses at an approval node on A, is approved on B, and finishes there', async () => {
    const tag = randomBytes(4).toString('hex');
    const sessionId = `graph-approval-${tag}`;
    const message = `refund 250 for order ${tag}`;
    const paused = await chat(a.url, { message, sessionId });
    expect(paused.body.status).toBe('awaiting_approval');
    expect(paused.body.approvals?.[0]).toMatchObject({ agent: 'work__n4', reason: 'a refund of 250' });

    const approved = await resolveApproval(b.url, sessionId, paused.body.approvals?.[0]?.id as string, {
      decision: 'approve',
    });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('completed');
    expect(approved.body.reply).toBe(`n1 > n2 > n3 > n4 (pid ${b.pid})`);
    expect(nodeRuns(message)).toEqual([
      ['n1', a.pid, 'start'],
      ['n1', a.pid, 'end'],
      ['n2', a.pid, 'start'],
      ['n2', a.pid, 'end'],
      ['n3', a.pid, 'start'],
      ['n3', a.pid, 'end'],
      ['n4', b.pid, 'start'],
      ['n4', b.pid, 'end'],
    ]);
  }, 30_000);

  it('resumes at node 3 on B after A is killed there: nodes 1 and 2 ran once', async () => {
    const tag = randomBytes(4).toString('hex');
    const sessionId = `graph-crash-${tag}`;
    const message = `work taking 1500 for ${tag}`;
    const running = chat(a.url, { message, sessionId }).catch((error: unknown) => error);
    const started = () => nodeRuns(message).some(([node, , event]) => node === 'n3' && event === 'start');
    expect(await eventually(started, 10_000)).toBe(true);
    a.child.kill('SIGKILL');
    expect(await running).toBeInstanceOf(Error);

    // The next message on the session recovers the turn on B, at node 3.
    const next = await chat(b.url, { message: 'next', sessionId }, { timeoutMs: 25_000 });
    expect(next.status).toBe(200);
    const { messages, turns } = await readSession(b.url, sessionId);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(turns[0]).toMatchObject({ status: 'completed', recoveries: 1 });
    expect(messages[messages.findIndex((stored) => stored.role === 'assistant')]?.content).toBe(
      `n1 > n2 > n3 > n4 (pid ${b.pid})`,
    );
    expect(nodeRuns(message)).toEqual([
      ['n1', a.pid, 'start'],
      ['n1', a.pid, 'end'],
      ['n2', a.pid, 'start'],
      ['n2', a.pid, 'end'],
      ['n3', a.pid, 'start'],
      ['n3', b.pid, 'start'],
      ['n3', b.pid, 'end'],
      ['n4', b.pid, 'start'],
      ['n4', b.pid, 'end'],
    ]);
  }, 40_000);
});
