import {
  currentUserMessage,
  latestToolResults,
  type MessageItem,
  routeToUser,
  type ToolCall,
  toolCall,
} from '@switchboard/core';
import { historyProblems } from '@switchboard/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type Agent, defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';
import type { TurnResult } from '../../src/engine/turn-engine.js';
import { createRedisStores } from '../../src/redis.js';
import type { ApprovalRecord, TurnRecord, TurnStatus } from '../../src/turns/turn-record.js';
import {
  createApp,
  type DecisionHandler,
  describeResults,
  postJson,
  type ReceivedEvent,
  readEventStream,
  sleep,
  type TestAppOptions,
} from '../support/app-fixtures.js';
import { REDIS_URL, storeSetups, useRedis } from '../support/redis.js';

const redis = useRedis();

const APPROVAL_MESSAGE = 'A supervisor has to approve this first.';
const DAY_MS = 86_400_000;

const setups = storeSetups(redis);

/** A JSON answer as a client reads it: a turn result, or an error body. */
interface Answer {
  status: number;
  body: TurnResult & {
    error?: { code: string; message: string; issues?: string[]; approvalIds?: string[]; turnId?: string };
  };
}

/** The answer of `GET /v1/sessions/:id`. */
interface SessionBody {
  sessionId: string;
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: ApprovalRecord[];
  activeTurn?: { turnId: string; status: TurnStatus };
}

async function answer(response: Response | Promise<Response>): Promise<Answer> {
  const received = await response;
  return { status: received.status, body: (await received.json()) as Answer['body'] };
}

/** What a client of one app does over HTTP. */
function client(app: App) {
  return {
    chat: (body: object, headers: Record<string, string> = {}) =>
      answer(app.request('/v1/chat', postJson(body, headers))),
    resolve: (sessionId: string, approvalId: string, body: unknown) =>
      answer(app.request(`/v1/sessions/${sessionId}/approvals/${approvalId}`, postJson(body))),
    session: async (sessionId: string) => {
      const response = await app.request(`/v1/sessions/${sessionId}`);
      expect(response.status).toBe(200);
      return (await response.json()) as SessionBody;
    },
  };
}

function contents(session: SessionBody): Array<[string, string]> {
  return session.messages.map((message) => [message.role, message.content]);
}

function eventsOf<T extends TurnEvent['type']>(
  events: readonly ReceivedEvent[],
  type: T,
): Extract<TurnEvent, { type: T }>[] {
  return events
    .filter((event) => event.data.type === type)
    .map((event) => event.data as Extract<TurnEvent, { type: T }>);
}

/** Refunds an order; a refund over 100 waits for a person. Records each refund it made. */
function refundAgent(label = '', runs: string[] = []) {
  const agent = defineAgent({
    name: 'refunds',
    description: 'Refunds an order',
    requiresApproval: (call) => {
      const { amount } = call.input as { amount: number };
      return amount > 100
        ? { required: true, risk: 'high', reason: `a refund of ${amount} is over 100` }
        : false;
    },
    run: (_message, { toolCall: call }) => {
      const { amount } = call.input as { amount: number };
      runs.push(`${label}${amount}`);
      return `refunded ${amount}`;
    },
  });
  return Object.assign(agent, { runs });
}

/** Looks an order up (never needs approval unless a policy or the orchestrator says so). */
function orderAgent() {
  const runs: string[] = [];
  const agent = defineAgent({
    name: 'orders',
    description: 'Looks orders up',
    run: (message) => {
      runs.push(message);
      return `${message}: shipped`;
    },
  });
  return Object.assign(agent, { runs });
}

/**
 * The support desk's orchestrator: one call per `refund <amount>` and
 * `order <number>` in the user's message (several at once as a fan-out),
 * then the agents' replies to the user.
 */
function supportDesk(): DecisionHandler {
  return (conversation) => {
    const results = latestToolResults(conversation);
    if (results.length > 0) return routeToUser(describeResults(results));
    const text = currentUserMessage(conversation).content;
    const calls: ToolCall[] = [...text.matchAll(/(refund|order) (\d+)/g)].map(([, kind, number]) =>
      kind === 'refund'
        ? toolCall('refunds', `refund ${number}`, { input: { amount: Number(number) } })
        : toolCall('orders', `order ${number}`),
    );
    if (calls.length === 0) return routeToUser('Nothing to do.');
    return calls.length === 1 ? calls[0]! : calls;
  };
}

describe.each(setups)('approvals over HTTP with $name', (setup) => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  function serve(options: Partial<TestAppOptions> = {}) {
    const refunds = refundAgent();
    const orders = orderAgent();
    const { app, orchestrator } = createApp({
      agents: [refunds, orders],
      handler: supportDesk(),
      approvalMessage: APPROVAL_MESSAGE,
      ...setup.stores(),
      ...options,
    });
    apps.push(app);
    return { app, orchestrator, refunds, orders, ...client(app) };
  }

  async function expectWellFormed(session: SessionBody) {
    expect(historyProblems(session.messages, session.turns)).toEqual([]);
  }

  it('runs a small refund at once and pauses a large one with its risk, reason and a one-day expiry', async () => {
    const { chat, session, refunds } = serve();
    const small = await chat({ message: 'refund 50', sessionId: 'small' });
    expect(small.status).toBe(200);
    expect(small.body).toMatchObject({ status: 'completed', reply: 'refunded 50' });
    expect(small.body.approvals).toBeUndefined();
    expect(refunds.runs).toEqual(['50']);

    const before = Date.now();
    const large = await chat({ message: 'refund 500', sessionId: 'large' });
    const after = Date.now();
    expect(large.status).toBe(200);
    expect(large.body).toMatchObject({
      sessionId: 'large',
      status: 'awaiting_approval',
      reply: APPROVAL_MESSAGE,
    });
    expect(large.body.approvals).toHaveLength(1);
    const approval = large.body.approvals![0]!;
    const call = large.body.steps[0]!.calls[0]!;
    expect(approval).toMatchObject({
      toolCallId: call.toolCallId,
      agent: 'refunds',
      message: 'refund 500',
      input: { amount: 500 },
      risk: 'high',
      reason: 'a refund of 500 is over 100',
      requestedBy: 'agent',
      status: 'pending',
    });
    expect(call.approvalId).toBe(approval.id);
    expect(Date.parse(approval.expiresAt!)).toBeGreaterThanOrEqual(before + DAY_MS - 1);
    expect(Date.parse(approval.expiresAt!)).toBeLessThanOrEqual(after + DAY_MS);
    expect(refunds.runs).toEqual(['50']);

    const stored = await session('large');
    expect(stored.activeTurn).toEqual({ turnId: large.body.turnId, status: 'awaiting_approval' });
    expect(stored.pendingApprovals).toEqual([approval]);
    expect(contents(stored)).toEqual([['user', 'refund 500']]);
    expect(stored.turns).toMatchObject([{ turnId: large.body.turnId, status: 'awaiting_approval' }]);
    await expectWellFormed(stored);
  });

  it('approving continues the turn to its answer; the agent runs once and the decision is stored', async () => {
    const { chat, resolve, session, refunds, orchestrator } = serve();
    const paused = await chat({ message: 'refund 500', sessionId: 'approve' });
    const approval = paused.body.approvals![0]!;

    const approved = await resolve('approve', approval.id, {
      decision: 'approve',
      userId: 'supervisor-7',
      comment: 'a loyal customer',
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      sessionId: 'approve',
      turnId: paused.body.turnId,
      status: 'completed',
      reply: 'refunded 500',
    });
    expect(approved.body.approvals).toBeUndefined();
    expect(refunds.runs).toEqual(['500']);
    // Decided once before the pause, once on the agent's reply.
    expect(orchestrator.seen).toHaveLength(2);

    const stored = await session('approve');
    expect(stored.activeTurn).toBeUndefined();
    expect(stored.pendingApprovals).toEqual([]);
    expect(contents(stored)).toEqual([
      ['user', 'refund 500'],
      ['tool', 'refunded 500'],
      ['assistant', 'refunded 500'],
    ]);
    expect(stored.turns).toHaveLength(1);
    expect(stored.turns[0]!.status).toBe('completed');
    expect(stored.turns[0]!.approvals).toEqual([
      {
        ...approval,
        status: 'approved',
        decidedBy: 'supervisor-7',
        comment: 'a loyal customer',
        decidedAt: expect.any(String),
      },
    ]);
    await expectWellFormed(stored);
  });

  it('rejecting with a comment shows the orchestrator an error reply with the comment; the agent never runs', async () => {
    const { chat, resolve, session, refunds, orchestrator } = serve();
    const paused = await chat({ message: 'refund 500', sessionId: 'reject' });
    const approval = paused.body.approvals![0]!;

    const rejected = await resolve('reject', approval.id, {
      decision: 'reject',
      comment: 'over the monthly limit',
      userId: 'supervisor-7',
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      turnId: paused.body.turnId,
      status: 'completed',
      reply: 'Sorry, the refunds agent failed: rejected by the user: over the monthly limit',
    });
    expect(refunds.runs).toEqual([]);
    expect(orchestrator.seen.at(-1)!.lastResults).toMatchObject([
      {
        role: 'tool',
        name: 'refunds',
        toolCallId: approval.toolCallId,
        status: 'error',
        content: 'rejected by the user: over the monthly limit',
        metadata: { errorCode: 'approval_rejected', approvalId: approval.id },
      },
    ]);

    const stored = await session('reject');
    expect(contents(stored)).toEqual([
      ['user', 'refund 500'],
      ['tool', 'rejected by the user: over the monthly limit'],
      ['assistant', 'Sorry, the refunds agent failed: rejected by the user: over the monthly limit'],
    ]);
    expect(stored.turns[0]).toMatchObject({
      status: 'completed',
      approvals: [
        { id: approval.id, status: 'rejected', comment: 'over the monthly limit', decidedBy: 'supervisor-7' },
      ],
    });
    await expectWellFormed(stored);
  });

  it('an expired approval answers 409 approval_expired; the turn goes on with it as a rejection', async () => {
    const { chat, resolve, session, refunds } = serve({ approvalTtlSeconds: 0.2 });
    const paused = await chat({ message: 'refund 500', sessionId: 'expire' });
    const approval = paused.body.approvals![0]!;
    const ttlMs = Date.parse(approval.expiresAt!) - Date.parse(approval.requestedAt);
    expect(ttlMs).toBeGreaterThanOrEqual(200);
    expect(ttlMs).toBeLessThan(1_000);
    await sleep(300);

    const late = await resolve('expire', approval.id, { decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'approval_expired' });
    expect(refunds.runs).toEqual([]);

    const stored = await session('expire');
    expect(stored.activeTurn).toBeUndefined();
    expect(stored.pendingApprovals).toEqual([]);
    expect(stored.turns[0]).toMatchObject({
      status: 'completed',
      approvals: [{ id: approval.id, status: 'expired' }],
    });
    const refusal = `rejected: the approval expired at ${approval.expiresAt} without a decision`;
    expect(contents(stored)).toEqual([
      ['user', 'refund 500'],
      ['tool', refusal],
      ['assistant', `Sorry, the refunds agent failed: ${refusal}`],
    ]);
    expect(stored.messages[1]).toMatchObject({
      status: 'error',
      metadata: { errorCode: 'approval_expired' },
    });
    await expectWellFormed(stored);

    const again = await resolve('expire', approval.id, { decision: 'approve' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'approval_resolved' });
    expect(refunds.runs).toEqual([]);
  });

  it('an expired approval does not block the next message: its turn ends with the expiry, then the message runs', async () => {
    const { chat, session, refunds, orders } = serve({ approvalTtlSeconds: 0.2 });
    const paused = await chat({ message: 'refund 500', sessionId: 'expired-then-next' });
    await sleep(300);
    const shown = await session('expired-then-next');
    expect(shown.pendingApprovals).toEqual([]);

    const next = await chat({ message: 'order 7', sessionId: 'expired-then-next' });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ status: 'completed', reply: 'order 7: shipped' });
    expect(refunds.runs).toEqual([]);
    expect(orders.runs).toEqual(['order 7']);
    const stored = await session('expired-then-next');
    expect(stored.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      [paused.body.turnId, 'completed'],
      [next.body.turnId, 'completed'],
    ]);
    expect(stored.turns[0]!.approvals).toMatchObject([{ status: 'expired' }]);
    expect(stored.messages[1]).toMatchObject({ role: 'tool', metadata: { errorCode: 'approval_expired' } });
    await expectWellFormed(stored);
  });

  it('answers 400 to malformed decisions and 404 to unknown approvals, changing nothing; a second decision is 409', async () => {
    const { app, chat, resolve, session, refunds } = serve();
    const paused = await chat({ message: 'refund 500', sessionId: 'strict' });
    const approval = paused.body.approvals![0]!;
    const before = await session('strict');

    for (const body of [
      '{"decision": "approve"',
      'approve',
      { decision: 'approve', amount: 10 },
      { decision: 'maybe' },
      {},
      { decision: 'reject', comment: 'x'.repeat(2_001) },
    ]) {
      const refused = await resolve('strict', approval.id, body);
      expect(refused.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'validation_error' });
    }
    const empty = await answer(
      app.request(`/v1/sessions/strict/approvals/${approval.id}`, { method: 'POST' }),
    );
    expect(empty.status).toBe(400);

    const unknown = await resolve('strict', 'apr_unknown', { decision: 'approve' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found' });
    const otherSession = await resolve('nobody-here', approval.id, { decision: 'approve' });
    expect(otherSession.status).toBe(404);
    expect(otherSession.body.error).toMatchObject({ code: 'not_found' });

    expect(await session('strict')).toEqual(before);
    expect(refunds.runs).toEqual([]);

    const approved = await resolve('strict', approval.id, {
      decision: 'approve',
      comment: 'x'.repeat(2_000),
    });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('completed');
    for (const decision of ['approve', 'reject']) {
      const twice = await resolve('strict', approval.id, { decision });
      expect(twice.status).toBe(409);
      expect(twice.body.error).toMatchObject({ code: 'approval_resolved' });
    }
    expect(refunds.runs).toEqual(['500']);
    const stored = await session('strict');
    expect(stored.turns[0]!.approvals![0]!.status).toBe('approved');
    await expectWellFormed(stored);
  });

  it('in a fan-out, the call without approval runs at once and is stored; after approval the orchestrator sees both replies', async () => {
    const { chat, resolve, session, refunds, orders, orchestrator } = serve();
    const paused = await chat({ message: 'refund 500 for order 42', sessionId: 'fan-out' });
    expect(paused.body.status).toBe('awaiting_approval');
    expect(paused.body.steps[0]).toMatchObject({ kind: 'fan-out' });
    expect(paused.body.approvals!.map((approval) => approval.agent)).toEqual(['refunds']);
    expect(orders.runs).toEqual(['order 42']);
    expect(refunds.runs).toEqual([]);

    const waiting = await session('fan-out');
    expect(contents(waiting)).toEqual([
      ['user', 'refund 500 for order 42'],
      ['tool', 'order 42: shipped'],
    ]);
    await expectWellFormed(waiting);

    const approved = await resolve('fan-out', paused.body.approvals![0]!.id, { decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'completed', reply: 'refunded 500\norder 42: shipped' });
    expect(orchestrator.seen.at(-1)!.lastResults!.map((result) => [result.name, result.content])).toEqual([
      ['refunds', 'refunded 500'],
      ['orders', 'order 42: shipped'],
    ]);
    expect(orders.runs).toEqual(['order 42']);
    expect(refunds.runs).toEqual(['500']);

    const stored = await session('fan-out');
    expect(contents(stored)).toEqual([
      ['user', 'refund 500 for order 42'],
      ['tool', 'order 42: shipped'],
      ['tool', 'refunded 500'],
      ['assistant', 'refunded 500\norder 42: shipped'],
    ]);
    await expectWellFormed(stored);
  });

  it('with two approvals pending, the first decision keeps the turn paused and the second continues it', async () => {
    const { chat, resolve, session, refunds } = serve();
    const paused = await chat({ message: 'refund 500 and refund 700', sessionId: 'two' });
    expect(paused.body.approvals!.map((approval) => approval.message)).toEqual(['refund 500', 'refund 700']);
    const [first, second] = paused.body.approvals!;

    const one = await resolve('two', first!.id, { decision: 'approve', userId: 'supervisor-7' });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      turnId: paused.body.turnId,
      status: 'awaiting_approval',
      reply: APPROVAL_MESSAGE,
    });
    expect(one.body.approvals!.map((approval) => approval.id)).toEqual([second!.id]);
    expect(refunds.runs).toEqual([]);
    const halfway = await session('two');
    expect(halfway.activeTurn).toEqual({ turnId: paused.body.turnId, status: 'awaiting_approval' });
    expect(halfway.pendingApprovals.map((approval) => approval.id)).toEqual([second!.id]);
    expect(halfway.turns[0]!.approvals!.map((approval) => approval.status)).toEqual(['approved', 'pending']);

    const two = await resolve('two', second!.id, { decision: 'reject', comment: 'one is enough' });
    expect(two.status).toBe(200);
    expect(two.body).toMatchObject({
      status: 'completed',
      reply: 'refunded 500\nSorry, the refunds agent failed: rejected by the user: one is enough',
    });
    expect(refunds.runs).toEqual(['500']);
    const stored = await session('two');
    expect(stored.turns[0]!.approvals!.map((approval) => approval.status)).toEqual(['approved', 'rejected']);
    await expectWellFormed(stored);
  });

  it('a new message while an approval is pending gets 409 approval_pending and is not stored', async () => {
    const { chat, resolve, session, orders } = serve();
    const paused = await chat({ message: 'refund 500', sessionId: 'blocked' });
    const before = await session('blocked');

    const next = await chat({ message: 'order 7', sessionId: 'blocked' });
    expect(next.status).toBe(409);
    expect(next.body.error).toMatchObject({
      code: 'approval_pending',
      approvalIds: [paused.body.approvals![0]!.id],
      turnId: paused.body.turnId,
    });
    expect(orders.runs).toEqual([]);
    expect(await session('blocked')).toEqual(before);

    // Once decided, the session takes messages again.
    expect((await resolve('blocked', paused.body.approvals![0]!.id, { decision: 'approve' })).status).toBe(
      200,
    );
    const later = await chat({ message: 'order 7', sessionId: 'blocked' });
    expect(later.body).toMatchObject({ status: 'completed', reply: 'order 7: shipped' });
    const stored = await session('blocked');
    expect(stored.turns.map((turn) => turn.status)).toEqual(['completed', 'completed']);
    await expectWellFormed(stored);
  });

  it("with pendingApprovals: 'reject', a new message rejects the pending approval, ends that turn, then runs", async () => {
    const { chat, session, refunds, orders } = serve({ pendingApprovals: 'reject' });
    const paused = await chat({ message: 'refund 500', sessionId: 'superseded' });

    const next = await chat({ message: 'order 7', sessionId: 'superseded' });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ status: 'completed', reply: 'order 7: shipped' });
    expect(next.body.turnId).not.toBe(paused.body.turnId);
    expect(refunds.runs).toEqual([]);
    expect(orders.runs).toEqual(['order 7']);

    const stored = await session('superseded');
    expect(stored.pendingApprovals).toEqual([]);
    expect(stored.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      [paused.body.turnId, 'completed'],
      [next.body.turnId, 'completed'],
    ]);
    expect(stored.turns[0]!.approvals).toMatchObject([
      { status: 'withdrawn', comment: 'superseded by a new message' },
    ]);
    expect(contents(stored)).toEqual([
      ['user', 'refund 500'],
      ['tool', 'not run: superseded by a new message'],
      ['assistant', 'Sorry, the refunds agent failed: not run: superseded by a new message'],
      ['user', 'order 7'],
      ['tool', 'order 7: shipped'],
      ['assistant', 'order 7: shipped'],
    ]);
    await expectWellFormed(stored);
  });

  it("pauses on the app's approvalPolicy (per user, or a maintenance flag); the highest risk wins", async () => {
    let maintenance = false;
    const { chat, resolve, session, orders } = serve({
      approvalPolicy: (call, context) => {
        if (maintenance) return { required: true, risk: 'critical', reason: 'maintenance window' };
        return context.userId === 'intern' && call.toolName === 'orders'
          ? { required: true, risk: 'low', reason: 'interns need a second pair of eyes' }
          : false;
      },
    });
    const staff = await chat({ message: 'order 1', sessionId: 'policy-staff', userId: 'alice' });
    expect(staff.body).toMatchObject({ status: 'completed', reply: 'order 1: shipped' });

    const intern = await chat({ message: 'order 2', sessionId: 'policy-intern', userId: 'intern' });
    expect(intern.body.status).toBe('awaiting_approval');
    expect(intern.body.approvals).toMatchObject([
      { agent: 'orders', requestedBy: 'policy', risk: 'low', reason: 'interns need a second pair of eyes' },
    ]);
    expect(orders.runs).toEqual(['order 1']);

    maintenance = true;
    const during = await chat({ message: 'order 3', sessionId: 'policy-maintenance', userId: 'alice' });
    expect(during.body.approvals).toMatchObject([
      { agent: 'orders', requestedBy: 'policy', risk: 'critical', reason: 'maintenance window' },
    ]);
    // The agent's own rule and the policy both ask: the higher risk, both reasons.
    const refund = await chat({ message: 'refund 500', sessionId: 'policy-refund', userId: 'alice' });
    expect(refund.body.approvals).toMatchObject([
      { agent: 'refunds', risk: 'critical', reason: 'a refund of 500 is over 100; maintenance window' },
    ]);
    maintenance = false;

    const approved = await resolve('policy-intern', intern.body.approvals![0]!.id, { decision: 'approve' });
    expect(approved.body).toMatchObject({ status: 'completed', reply: 'order 2: shipped' });
    expect(orders.runs).toEqual(['order 1', 'order 2']);
    for (const sessionId of ['policy-staff', 'policy-intern', 'policy-maintenance', 'policy-refund']) {
      await expectWellFormed(await session(sessionId));
    }
  });

  it('pauses a call the orchestrator marks requiresApproval', async () => {
    const { chat, resolve, session, orders } = serve({
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(describeResults(results));
        return toolCall('orders', 'cancel order 9', {
          requiresApproval: true,
          reason: 'cancelling cannot be undone',
        });
      },
    });
    const paused = await chat({ message: 'please cancel order 9', sessionId: 'flagged' });
    expect(paused.body.status).toBe('awaiting_approval');
    expect(paused.body.approvals).toMatchObject([
      {
        agent: 'orders',
        message: 'cancel order 9',
        requestedBy: 'orchestrator',
        risk: 'medium',
        reason: 'cancelling cannot be undone',
      },
    ]);
    expect(orders.runs).toEqual([]);

    const approved = await resolve('flagged', paused.body.approvals![0]!.id, { decision: 'approve' });
    expect(approved.body).toMatchObject({ status: 'completed', reply: 'cancel order 9: shipped' });
    expect(orders.runs).toEqual(['cancel order 9']);
    await expectWellFormed(await session('flagged'));
  });

  it('fails closed when an approval rule throws or rejects: the call pauses with risk high', async () => {
    const ran: string[] = [];
    const payouts = (name: string, requiresApproval: Agent['requiresApproval']) =>
      defineAgent({
        name,
        description: 'Pays out',
        requiresApproval,
        run: (message) => {
          ran.push(name);
          return `paid ${message}`;
        },
      });
    const { chat, session } = serve({
      agents: [
        payouts('throwing', () => {
          throw new Error('limits service down');
        }),
        payouts('rejecting', async () => {
          throw new Error('limits service timed out');
        }),
      ],
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(describeResults(results));
        const text = currentUserMessage(conversation).content;
        return toolCall(text, '10');
      },
    });

    const thrown = await chat({ message: 'throwing', sessionId: 'rule-throws' });
    expect(thrown.status).toBe(200);
    expect(thrown.body.status).toBe('awaiting_approval');
    expect(thrown.body.approvals).toMatchObject([
      {
        agent: 'throwing',
        requestedBy: 'agent',
        risk: 'high',
        reason: 'the approval rule failed (limits service down)',
      },
    ]);
    const rejected = await chat({ message: 'rejecting', sessionId: 'rule-rejects' });
    expect(rejected.body.status).toBe('awaiting_approval');
    expect(rejected.body.approvals).toMatchObject([
      { agent: 'rejecting', risk: 'high', reason: 'the approval rule failed (limits service timed out)' },
    ]);
    expect(ran).toEqual([]);
    await expectWellFormed(await session('rule-throws'));
    await expectWellFormed(await session('rule-rejects'));
  });

  it('streams approval-request events and a turn-end awaiting approval, then streams the continuation', async () => {
    const { app, session } = serve();
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'refund 500', sessionId: 'sse' }, { accept: 'text/event-stream' }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEventStream(response);
    expect(events.map((event) => event.event)).toEqual([
      'turn-start',
      'route',
      'approval-request',
      'turn-end',
    ]);
    const turnId = events[0]!.data.turnId;
    const [pending] = (await session('sse')).pendingApprovals;
    expect(eventsOf(events, 'approval-request')).toEqual([
      expect.objectContaining({
        sessionId: 'sse',
        turnId,
        approvalId: pending!.id,
        toolCallId: pending!.toolCallId,
        agent: 'refunds',
        message: 'refund 500',
        reason: 'a refund of 500 is over 100',
        risk: 'high',
        expiresAt: pending!.expiresAt,
      }),
    ]);
    expect(events.at(-1)!.data).toMatchObject({
      type: 'turn-end',
      status: 'awaiting_approval',
      endOfDialog: true,
    });
    expect(events.filter((event) => event.data.endOfDialog)).toHaveLength(1);

    const resumed = await app.request(
      `/v1/sessions/sse/approvals/${pending!.id}`,
      postJson({ decision: 'approve' }, { accept: 'text/event-stream' }),
    );
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toContain('text/event-stream');
    const continuation = await readEventStream(resumed);
    expect(continuation.map((event) => event.event)).toEqual([
      'turn-start',
      'agent-start',
      'agent-end',
      'route',
      'message',
      'turn-end',
    ]);
    for (const { data } of continuation) expect(data).toMatchObject({ sessionId: 'sse', turnId });
    expect(continuation[0]!.data).toMatchObject({ resumed: 'approval', message: 'refund 500' });
    expect(eventsOf(continuation, 'agent-end')).toMatchObject([
      { agent: 'refunds', status: 'ok', content: 'refunded 500' },
    ]);
    expect(eventsOf(continuation, 'message')).toMatchObject([{ content: 'refunded 500' }]);
    expect(continuation.at(-1)!.data).toMatchObject({
      type: 'turn-end',
      status: 'completed',
      endOfDialog: true,
    });
    await expectWellFormed(await session('sse'));
  });

  it('a streamed decision on an expired approval streams the continuation and ends with an approval_expired error', async () => {
    const { app, chat, session } = serve({ approvalTtlSeconds: 0.2 });
    const paused = await chat({ message: 'refund 500', sessionId: 'sse-expired' });
    await sleep(300);
    const late = await app.request(
      `/v1/sessions/sse-expired/approvals/${paused.body.approvals![0]!.id}`,
      postJson({ decision: 'approve' }, { accept: 'text/event-stream' }),
    );
    const events = await readEventStream(late);
    expect(events[0]!.data).toMatchObject({ type: 'turn-start', resumed: 'approval' });
    expect(eventsOf(events, 'agent-start')).toEqual([]);
    // The client learns why its decision did not count, and the stream ends once.
    expect(events.at(-1)!.data).toMatchObject({ type: 'error', code: 'approval_expired', endOfDialog: true });
    expect(events.filter((event) => event.data.endOfDialog)).toHaveLength(1);
    const stored = await session('sse-expired');
    expect(stored.turns[0]).toMatchObject({ status: 'completed', approvals: [{ status: 'expired' }] });
    await expectWellFormed(stored);
  });

  it('streams the continuation with "stream": true in the decision', async () => {
    const { app, chat } = serve();
    const paused = await chat({ message: 'refund 500', sessionId: 'sse-body' });
    const resumed = await app.request(
      `/v1/sessions/sse-body/approvals/${paused.body.approvals![0]!.id}`,
      postJson({ decision: 'reject', stream: true }),
    );
    expect(resumed.headers.get('content-type')).toContain('text/event-stream');
    const continuation = await readEventStream(resumed);
    expect(continuation[0]!.data).toMatchObject({ type: 'turn-start', resumed: 'approval' });
    expect(eventsOf(continuation, 'agent-start')).toEqual([]);
    expect(eventsOf(continuation, 'message')).toMatchObject([
      { content: 'Sorry, the refunds agent failed: rejected by the user' },
    ]);
    expect(continuation.at(-1)!.data).toMatchObject({ type: 'turn-end', status: 'completed' });
  });
});

describe('approvals across two replicas sharing one Redis', () => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** Two apps on one key prefix: two replicas. Their refund agents record runs as `A:<amount>` / `B:<amount>`. */
  function replicas() {
    const keyPrefix = redis.prefix();
    const runs: string[] = [];
    const replica = (label: string) => {
      const refunds = refundAgent(`${label}:`, runs);
      const { app, orchestrator } = createApp({
        agents: [refunds, orderAgent()],
        handler: supportDesk(),
        approvalMessage: APPROVAL_MESSAGE,
        ...createRedisStores(REDIS_URL, { keyPrefix }),
      });
      apps.push(app);
      return { app, orchestrator, ...client(app) };
    };
    return { a: replica('A'), b: replica('B'), runs };
  }

  it('a turn paused on one replica is approved and completed on the other', async () => {
    const { a, b, runs } = replicas();
    const paused = await a.chat({ message: 'refund 500', sessionId: 'across' });
    expect(paused.body.status).toBe('awaiting_approval');
    expect((await b.session('across')).pendingApprovals.map((approval) => approval.id)).toEqual([
      paused.body.approvals![0]!.id,
    ]);
    const blocked = await b.chat({ message: 'order 1', sessionId: 'across' });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toMatchObject({ code: 'approval_pending', turnId: paused.body.turnId });

    const approved = await b.resolve('across', paused.body.approvals![0]!.id, {
      decision: 'approve',
      userId: 'supervisor-7',
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      turnId: paused.body.turnId,
      status: 'completed',
      reply: 'refunded 500',
    });
    expect(runs).toEqual(['B:500']);
    expect(a.orchestrator.seen).toHaveLength(1);
    expect(b.orchestrator.seen).toHaveLength(1);

    const stored = await a.session('across');
    expect(stored.turns[0]).toMatchObject({
      status: 'completed',
      approvals: [{ status: 'approved', decidedBy: 'supervisor-7' }],
    });
    expect(historyProblems(stored.messages, stored.turns)).toEqual([]);
  });

  it('the same approval resolved on both replicas at once: one 200, one 409 approval_resolved, one run', async () => {
    const { a, b, runs } = replicas();
    const paused = await a.chat({ message: 'refund 500', sessionId: 'race' });
    const id = paused.body.approvals![0]!.id;

    const answers = await Promise.all([
      a.resolve('race', id, { decision: 'approve' }),
      b.resolve('race', id, { decision: 'approve' }),
    ]);
    expect(answers.map((each) => each.status).sort()).toEqual([200, 409]);
    const winner = answers.find((each) => each.status === 200)!;
    const loser = answers.find((each) => each.status === 409)!;
    expect(winner.body).toMatchObject({ status: 'completed', reply: 'refunded 500' });
    expect(loser.body.error).toMatchObject({ code: 'approval_resolved' });
    expect(runs).toHaveLength(1);

    const stored = await b.session('race');
    expect(contents(stored)).toEqual([
      ['user', 'refund 500'],
      ['tool', 'refunded 500'],
      ['assistant', 'refunded 500'],
    ]);
    expect(historyProblems(stored.messages, stored.turns)).toEqual([]);
  });
});
