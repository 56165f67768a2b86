import { createHash } from 'node:crypto';
import {
  annotateStep,
  currentUserMessage,
  latestToolResults,
  type MessageItem,
  recordStep,
  routeToUser,
  toolCall,
  type UserMessage,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';
import { historyProblems } from '../../src/testing/history-check.js';
import { createApp, describeResults, echoAgent, fanOut, slowAgent } from '../support/app-fixtures.js';
import { leaveCrashedFanOut, leaveCrashedTurn } from '../support/crashed-turn.js';

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function history(sessionId: string) {
  const store = app!.sessions;
  return { messages: await store.read(sessionId), turns: await store.listTurns(sessionId) };
}

describe('the turn life cycle', () => {
  it('records what an orchestrator notes: a note step before the decision, annotations on it, stored and streamed', async () => {
    const events: TurnEvent[] = [];
    ({ app } = createApp({
      agents: [echoAgent()],
      handler: (conversation) => {
        const [reply] = latestToolResults(conversation);
        if (reply) return routeToUser(reply.content);
        recordStep(conversation, 'pattern', { pattern: 'single-agent', candidates: ['echo'] });
        annotateStep(conversation, { activeStep: 'answer-directly' });
        annotateStep(conversation, { correlationId: 'corr_1' });
        return toolCall('echo', currentUserMessage(conversation).content);
      },
    }));
    const result = await app.chat({
      message: 'hi',
      sessionId: 'noted',
      onEvent: (event) => events.push(event),
    });
    expect(result.steps.map((step) => [step.hop, step.kind, step.label])).toEqual([
      [0, 'note', 'pattern'],
      [0, 'call', undefined],
      [1, 'answer', undefined],
    ]);
    expect(result.steps[0]!.annotations).toEqual({ pattern: 'single-agent', candidates: ['echo'] });
    expect(result.steps[1]!.annotations).toEqual({ activeStep: 'answer-directly', correlationId: 'corr_1' });
    expect(result.steps[2]!.annotations).toBeUndefined();
    const [stored] = (await history('noted')).turns;
    expect(stored!.steps).toEqual(result.steps);
    expect(
      events
        .filter((event) => event.type === 'route')
        .map((event) => event.type === 'route' && event.step.kind),
    ).toEqual(['note', 'call', 'answer']);
  });

  it('resumes a turn whose replica died: runs only the fan-out calls that stored no reply, then answers', async () => {
    const maps = slowAgent('maps', 5);
    const weather = slowAgent('weather', 5);
    const created = createApp({
      agents: [maps, weather],
      handler: fanOut(['maps', 'weather']),
      leaseTtlMs: 200,
    });
    app = created.app;
    await leaveCrashedFanOut(app.sessions, 'crashed');

    const next = await app.chat({ message: 'weather: and tomorrow?', sessionId: 'crashed' });
    expect(next.status).toBe('completed');
    // The finished sibling never ran again; the other ran once, for the recovered turn.
    expect(maps.runs.map((run) => run.message)).toEqual(['weather: and tomorrow?']);
    expect(weather.runs.map((run) => run.message)).toEqual(['plan a hike', 'weather: and tomorrow?']);
    const { messages, turns } = await history('crashed');
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(turns.map((turn) => [turn.turnId === 'turn_crashed', turn.status, turn.recoveries])).toEqual([
      [true, 'completed', 1],
      [false, 'completed', undefined],
    ]);
    // The recovered turn's answer was built from both replies, in call order.
    expect(messages[3]).toMatchObject({
      role: 'assistant',
      content: 'maps done: plan a hike\nweather done: plan a hike',
    });
    // Its second decision saw them in call order too.
    const recoveredDecision = created.orchestrator.seen.find((seen) => seen.turnId === 'turn_crashed');
    expect(latestToolResults(recoveredDecision!).map((reply) => reply.name)).toEqual(['maps', 'weather']);
  });

  it("with recovery: 'fail', closes a dead replica's turn with a stored error answer instead of resuming it", async () => {
    const echo = echoAgent();
    let runs = 0;
    const counted = defineAgent({
      ...echo,
      run: (message) => {
        runs += 1;
        return `echo: ${message}`;
      },
    });
    ({ app } = createApp({ agents: [counted], recovery: 'fail', leaseTtlMs: 200 }));
    await leaveCrashedTurn(app.sessions, 'abandoned');
    const next = await app.chat({ message: 'hello', sessionId: 'abandoned' });
    expect(next).toMatchObject({ status: 'completed', reply: 'echo: hello' });
    expect(runs).toBe(1);
    const { messages, turns } = await history('abandoned');
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(turns[0]).toMatchObject({ status: 'failed', error: { code: 'turn_abandoned' } });
    expect(messages[1]).toMatchObject({
      role: 'assistant',
      metadata: { status: 'error', errorCode: 'turn_abandoned' },
    });
  });

  it('answers a retry whose running turn lost its user message with corrupt_record, as the other resume paths do', async () => {
    ({ app } = createApp({ agents: [echoAgent()] }));
    const store = app.sessions;
    const sessionId = 'lost-message';
    const message = 'plan a hike';
    // The first attempt's turn, left running by a replica that died, under the retry's Idempotency-Key.
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([message, null, null]))
      .digest('base64url');
    const user: UserMessage = {
      id: 'msg_lost',
      role: 'user',
      content: message,
      createdAt: new Date().toISOString(),
    };
    const lease = await store.acquireLease(sessionId, { ttlMs: 5_000, waitMs: 0 });
    const turn = {
      turnId: 'turn_lost',
      userMessageId: user.id,
      status: 'running' as const,
      startedAt: user.createdAt,
      steps: [],
    };
    await store.openTurn(sessionId, user, {
      turn,
      limit: 10,
      lease,
      requestKey: { key: 'retry-1', fingerprint },
    });
    await lease.release();
    // The store no longer has the turn's user message.
    const read = store.read.bind(store);
    store.read = async (...args: Parameters<typeof read>) =>
      ((await read(...args)) as MessageItem[]).filter((stored) => stored.id !== user.id);
    await expect(app.chat({ sessionId, message, idempotencyKey: 'retry-1' })).rejects.toMatchObject({
      code: 'corrupt_record',
    });
  });

  it('pauses for approval with the strictest answer of every rule: highest risk, shortest expiry, reasons joined', async () => {
    const refunds = defineAgent({
      name: 'refunds',
      description: 'Refunds',
      requiresApproval: () => ({ required: true, risk: 'medium', reason: 'a refund', ttlSeconds: 600 }),
      run: () => 'refunded',
    });
    const flaky = defineAgent({
      name: 'flaky',
      description: 'Has a broken rule',
      requiresApproval: () => {
        throw new Error('rule service down');
      },
      run: () => 'ran',
    });
    const never = defineAgent({
      name: 'never',
      description: 'Rule says no',
      requiresApproval: async () => false,
      run: () => 'ran',
    });
    ({ app } = createApp({
      agents: [refunds, flaky, never],
      approvalPolicy: async (call) =>
        call.toolName === 'refunds'
          ? { required: true, risk: 'critical', reason: 'maintenance window', ttlSeconds: 60 }
          : false,
      approvalTtlSeconds: null,
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(describeResults(results));
        return ['refunds', 'flaky', 'never'].map((name) => toolCall(name, 'go'));
      },
    }));
    const startedAt = Date.now();
    const paused = await app.chat({ message: 'go', sessionId: 'rules' });
    expect(paused.status).toBe('awaiting_approval');
    const byAgent = Object.fromEntries(
      (paused.approvals ?? []).map((approval) => [approval.agent, approval]),
    );
    expect(Object.keys(byAgent).sort()).toEqual(['flaky', 'refunds']);
    expect(byAgent.refunds).toMatchObject({
      risk: 'critical',
      requestedBy: 'agent',
      reason: 'a refund; maintenance window',
    });
    const expiresIn = Date.parse(byAgent.refunds!.expiresAt!) - startedAt;
    // The policy's 60 s, not the agent's 600 s: the stored expiry, not a measured duration.
    const POLICY_TTL_MS = 60_000;
    expect(expiresIn).toBeGreaterThan(POLICY_TTL_MS - 10_000);
    expect(expiresIn).toBeLessThanOrEqual(POLICY_TTL_MS + 1_000);
    // A rule that throws asks for approval rather than letting the call through; without a ttl it never expires.
    expect(byAgent.flaky).toMatchObject({
      risk: 'high',
      expiresAt: null,
      reason: expect.stringContaining('rule service down'),
    });
    // The call no rule stopped ran at once, and its reply is stored.
    const { messages } = await history('rules');
    expect(messages.filter((message) => message.role === 'tool').map((message) => message.name)).toEqual([
      'never',
    ]);
    // The step records which calls wait for which approval.
    expect(paused.steps[0]!.calls.map((call) => [call.agent, call.approvalId])).toEqual([
      ['refunds', byAgent.refunds!.id],
      ['flaky', byAgent.flaky!.id],
      ['never', undefined],
    ]);
  });
});
