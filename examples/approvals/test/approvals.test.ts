import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { MessageItem } from '@switchboard/core';
import type { App, ApprovalRecord, ServerHandle, TurnRecord } from '@switchboard/runtime';
import { historyProblems } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventStream } from '../../../packages/runtime/test/support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../../../packages/runtime/test/support/redis.js';
import { buildApp, type SupportAppOptions } from '../src/app.js';
import { InMemoryPayments } from '../src/payments.js';

const APPROVAL_MESSAGE = 'This needs a person’s approval before I can go on.';

interface ChatBody {
  sessionId: string;
  turnId: string;
  reply: string;
  status: string;
  approvals?: ApprovalRecord[];
  error?: { code: string; message: string; approvalIds?: string[]; turnId?: string };
}

interface SessionBody {
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: ApprovalRecord[];
  activeTurn?: { turnId: string; status: string };
}

const newSession = () => `ses-${randomUUID()}`;

describe('approvals example over HTTP, in memory', () => {
  let server: ServerHandle;
  const payments = new InMemoryPayments();

  beforeAll(async () => {
    const { app, orchestrator } = buildApp({ payments, logLevel: 'silent' });
    server = await app.start(orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  const post = async (path: string, body: object, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as ChatBody };
  };
  const chat = (sessionId: string, message: string) => post('/v1/chat', { sessionId, message });
  const decide = (sessionId: string, approvalId: string, decision: object) =>
    post(`/v1/sessions/${sessionId}/approvals/${approvalId}`, decision);
  const readSession = async (sessionId: string) =>
    (await (await fetch(`${server.url}/v1/sessions/${sessionId}`)).json()) as SessionBody;
  /** The refund requests the payment provider received for one call (its key ends with the call's id). */
  const refundsOf = (toolCallId: string) =>
    payments.requests.filter((request) => request.idempotencyKey.endsWith(`/${toolCallId}`));

  it('makes a small refund at once', async () => {
    const session = newSession();
    const { status, body } = await chat(session, 'refund 30 on order 7');
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'completed', reply: 'Refunded 30.00 on order 7 (milk frother).' });
    expect(body.approvals).toBeUndefined();
    expect(payments.refunds).toContainEqual(expect.objectContaining({ orderId: '7', amount: 30 }));
  });

  it('answers order questions without asking anyone', async () => {
    const { body } = await chat(newSession(), 'where is order #19?');
    expect(body).toMatchObject({ status: 'completed', reply: 'Order 19: grinder, 180.00, processing.' });
  });

  it('pauses a large refund for approval, then makes it once when a person approves', async () => {
    const session = newSession();
    const paused = await chat(session, 'refund 250 on order 42');
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'awaiting_approval', reply: APPROVAL_MESSAGE });
    const [approval] = paused.body.approvals ?? [];
    expect(approval).toMatchObject({
      agent: 'refunds',
      input: { orderId: '42', amount: 250 },
      risk: 'high',
      reason: 'refund of 250 is over 100',
      requestedBy: 'agent',
      status: 'pending',
    });
    expect(refundsOf(approval!.toolCallId)).toEqual([]);

    // While it waits, the session shows it, and a new message is refused with the approval to resolve.
    const waiting = await readSession(session);
    expect(waiting.pendingApprovals.map((pending) => pending.id)).toEqual([approval!.id]);
    expect(waiting.activeTurn).toEqual({ turnId: paused.body.turnId, status: 'awaiting_approval' });
    const blocked = await chat(session, 'where is order 42?');
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toMatchObject({ code: 'approval_pending', approvalIds: [approval!.id] });

    const approved = await decide(session, approval!.id, { decision: 'approve', userId: 'supervisor-1' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      turnId: paused.body.turnId,
      status: 'completed',
      reply: 'Refunded 250.00 on order 42 (espresso machine).',
    });
    expect(refundsOf(approval!.toolCallId)).toEqual([
      // ctx.idempotencyKey: the turn and the call, the same for every run of this call.
      { idempotencyKey: `${paused.body.turnId}/${approval!.toolCallId}`, orderId: '42', amount: 250 },
    ]);

    // Approving twice neither runs the refund again nor changes the answer.
    const again = await decide(session, approval!.id, { decision: 'approve' });
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe('approval_resolved');
    expect(refundsOf(approval!.toolCallId)).toHaveLength(1);

    const { messages, turns, pendingApprovals } = await readSession(session);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(pendingApprovals).toEqual([]);
    expect(turns[0]?.approvals).toMatchObject([{ status: 'approved', decidedBy: 'supervisor-1' }]);
    expect(messages.at(-1)?.content).toBe('Refunded 250.00 on order 42 (espresso machine).');
  });

  it('explains a rejected refund, which never runs', async () => {
    const session = newSession();
    const paused = await chat(session, 'refund 150 for order 19');
    const [approval] = paused.body.approvals ?? [];
    expect(approval).toMatchObject({ risk: 'high', reason: 'refund of 150 is over 100' });

    const rejected = await decide(session, approval!.id, {
      decision: 'reject',
      comment: 'the grinder has not shipped yet',
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      status: 'completed',
      reply: 'The refund was not made (rejected by the user: the grinder has not shipped yet).',
    });
    expect(refundsOf(approval!.toolCallId)).toEqual([]);

    const { messages, turns } = await readSession(session);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(messages.find((message) => message.role === 'tool')).toMatchObject({
      status: 'error',
      metadata: { errorCode: 'approval_rejected' },
    });
    // The session takes new messages again.
    expect((await chat(session, 'where is order 19?')).body.reply).toBe(
      'Order 19: grinder, 180.00, processing.',
    );
  });

  it('makes a refund retried with the same Idempotency-Key once', async () => {
    const key = `refund-${randomUUID()}`;
    const first = await post('/v1/chat', { message: 'refund 40 on order 42' }, { 'idempotency-key': key });
    const retry = await post('/v1/chat', { message: 'refund 40 on order 42' }, { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({
      sessionId: first.body.sessionId,
      turnId: first.body.turnId,
      reply: 'Refunded 40.00 on order 42 (espresso machine).',
    });
    const { turns } = await readSession(first.body.sessionId);
    expect(turns).toHaveLength(1);
    expect(refundsOf(turns[0]!.steps[0]!.calls[0]!.toolCallId)).toHaveLength(1);

    const reused = await post('/v1/chat', { message: 'refund 90 on order 42' }, { 'idempotency-key': key });
    expect(reused.status).toBe(422);
    expect(reused.body.error?.code).toBe('idempotency_key_reused');
  });

  it('streams the approval request', async () => {
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ sessionId: newSession(), message: 'refund 200 on order 42' }),
    });
    const events = parseEventStream(await response.text());
    const request = events.find((event) => event.event === 'approval-request');
    expect(request?.data).toMatchObject({
      agent: 'refunds',
      risk: 'high',
      reason: 'refund of 200 is over 100',
    });
    expect(events.at(-1)?.data).toMatchObject({
      type: 'turn-end',
      status: 'awaiting_approval',
      endOfDialog: true,
    });
  });
});

describe('approvals example in process', () => {
  /** Runs `test` against a mounted app built with `options`, and closes it. */
  const withApp = async (
    options: SupportAppOptions,
    test: (app: App, payments: InMemoryPayments) => Promise<void>,
  ) => {
    const payments = new InMemoryPayments();
    const { app, orchestrator } = buildApp({ payments, logLevel: 'silent', ...options });
    app.mount(orchestrator);
    try {
      await test(app, payments);
    } finally {
      await app.close();
    }
  };
  const history = async (app: App, sessionId: string) => {
    const [messages, turns] = await Promise.all([
      app.sessions.read(sessionId),
      app.sessions.listTurns(sessionId),
    ]);
    expect(historyProblems(messages, turns)).toEqual([]);
    return { messages, turns };
  };

  it('approves with app.resolveApproval', async () => {
    await withApp({}, async (app, payments) => {
      const sessionId = newSession();
      const paused = await app.chat({ sessionId, message: 'refund 250 on order 42' });
      if (paused.status === 'awaiting_approval') {
        const approvalId = paused.approvals![0]!.id;
        const done = await app.resolveApproval({ sessionId, approvalId, decision: 'approve' });
        expect(done.reply).toBe('Refunded 250.00 on order 42 (espresso machine).');
      }
      expect(paused.status).toBe('awaiting_approval');
      expect(payments.refunds).toMatchObject([{ orderId: '42', amount: 250 }]);
      await history(app, sessionId);
    });
  });

  it('the app policy holds every call for an account under review; the highest risk wins', async () => {
    await withApp({ accountsUnderReview: ['mallory'] }, async (app) => {
      const lookup = await app.chat({
        sessionId: newSession(),
        userId: 'mallory',
        message: 'where is order 7?',
      });
      expect(lookup).toMatchObject({ status: 'awaiting_approval' });
      expect(lookup.approvals).toMatchObject([
        {
          agent: 'orders',
          risk: 'critical',
          requestedBy: 'policy',
          reason: 'account mallory is under review',
        },
      ]);

      const refund = await app.chat({
        sessionId: newSession(),
        userId: 'mallory',
        message: 'refund 250 on order 42',
      });
      expect(refund.approvals).toMatchObject([
        { risk: 'critical', reason: 'refund of 250 is over 100; account mallory is under review' },
      ]);

      const someoneElse = await app.chat({
        sessionId: newSession(),
        userId: 'ada',
        message: 'where is order 7?',
      });
      expect(someoneElse).toMatchObject({
        status: 'completed',
        reply: 'Order 7: milk frother, 45.00, shipped.',
      });
    });
  });

  it("with pendingApprovals: 'reject', a new message rejects the waiting refund, which is explained first", async () => {
    await withApp({ pendingApprovals: 'reject' }, async (app, payments) => {
      const sessionId = newSession();
      const paused = await app.chat({ sessionId, message: 'refund 250 on order 42' });
      expect(paused.status).toBe('awaiting_approval');

      const next = await app.chat({ sessionId, message: 'where is order 42?' });
      expect(next).toMatchObject({
        status: 'completed',
        reply: 'Order 42: espresso machine, 320.00, delivered.',
      });
      const { messages, turns } = await history(app, sessionId);
      expect(turns.map((turn) => turn.status)).toEqual(['completed', 'completed']);
      expect(messages[2]?.content).toBe('The refund was not made (not run: superseded by a new message).');
      expect(payments.requests).toEqual([]);
    });
  });

  it('cancelling a paused turn ends it interrupted, and the refund never runs', async () => {
    await withApp({}, async (app, payments) => {
      const sessionId = newSession();
      const paused = await app.chat({ sessionId, message: 'refund 250 on order 42' });
      const cancelled = await app.cancelTurn({ sessionId, turnId: paused.turnId });
      expect(cancelled).toMatchObject({ status: 'interrupted', error: { code: 'turn_interrupted' } });
      const { turns } = await history(app, sessionId);
      expect(turns[0]?.approvals).toMatchObject([{ status: 'withdrawn', comment: 'the turn was cancelled' }]);
      expect(payments.requests).toEqual([]);
      // The session is free again.
      expect((await app.chat({ sessionId, message: 'refund 20 on order 7' })).status).toBe('completed');
    });
  });

  it('tells the user when nobody decided in time', async () => {
    await withApp({ approvalTtlSeconds: 0.05 }, async (app, payments) => {
      const sessionId = newSession();
      const paused = await app.chat({ sessionId, message: 'refund 120 on order 42' });
      const approvalId = paused.approvals![0]!.id;
      await delay(100);

      const late = await app.request(`/v1/sessions/${sessionId}/approvals/${approvalId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(late.status).toBe(409);
      expect(((await late.json()) as ChatBody).error?.code).toBe('approval_expired');

      const [messages, turns] = await Promise.all([
        app.sessions.read(sessionId),
        app.sessions.listTurns(sessionId),
      ]);
      expect(historyProblems(messages, turns)).toEqual([]);
      expect(turns[0]).toMatchObject({ status: 'completed', approvals: [{ status: 'expired' }] });
      expect(messages.at(-1)?.content).toBe('The refund was not made: nobody approved it in time.');
      expect(payments.requests).toEqual([]);
    });
  });
});

describe('approvals example on Redis, two replicas', () => {
  const redis = useRedis();
  let replicaA: { app: App; payments: InMemoryPayments };
  let replicaB: { app: App; payments: InMemoryPayments };

  beforeAll(() => {
    const keyPrefix = redis.prefix();
    const replica = () => {
      const payments = new InMemoryPayments();
      const { app, orchestrator } = buildApp({
        redis: { url: REDIS_URL, keyPrefix },
        payments,
        logLevel: 'silent',
      });
      return { app: app.mount(orchestrator), payments };
    };
    replicaA = replica();
    replicaB = replica();
  });
  afterAll(async () => {
    await Promise.all([replicaA?.app.close(), replicaB?.app.close()]);
  });

  it('pauses on one replica and finishes on the other once approved there', async () => {
    const { app } = replicaA;
    const sessionId = newSession();
    const paused = await app.chat({ sessionId, message: 'refund 250 on order 42' });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toMatchObject([{ risk: 'high', reason: 'refund of 250 is over 100' }]);

    // Replica B sees the pending approval in the shared store and blocks a new message too.
    await expect(replicaB.app.chat({ sessionId, message: 'where is order 42?' })).rejects.toMatchObject({
      code: 'approval_pending',
    });

    const approvalId = paused.approvals![0]!.id;
    const done = await replicaB.app.resolveApproval({ sessionId, approvalId, decision: 'approve' });
    expect(done).toMatchObject({
      turnId: paused.turnId,
      status: 'completed',
      reply: 'Refunded 250.00 on order 42 (espresso machine).',
    });
    // The refund ran once, on replica B, which resumed the turn.
    expect(replicaB.payments.requests).toMatchObject([{ orderId: '42', amount: 250 }]);
    expect(replicaA.payments.requests).toEqual([]);

    const response = await replicaA.app.request(`/v1/sessions/${sessionId}`);
    const { messages, turns, pendingApprovals, activeTurn } = (await response.json()) as SessionBody;
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(pendingApprovals).toEqual([]);
    expect(activeTurn).toBeUndefined();
    expect(messages.map((message) => message.role)).toEqual(['user', 'tool', 'assistant']);
  });
});
