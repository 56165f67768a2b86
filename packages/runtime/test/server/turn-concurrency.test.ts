import { type MessageItem, RequestContext } from '@switchboard/core';
import { historyProblems } from '@switchboard/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { type App, sessionIdForKey } from '../../src/app.js';
import type { TurnResult } from '../../src/engine/turn-engine.js';
import { createRedisStores } from '../../src/redis.js';
import type { ApprovalRecord, TurnRecord, TurnStatus } from '../../src/turns/turn-record.js';
import {
  createApp,
  echoAgent,
  fanOut,
  parseEventStream,
  postJson,
  type ReceivedEvent,
  relay,
  sleep,
  slowAgent,
  type TestAppOptions,
} from '../support/app-fixtures.js';
import { REDIS_URL, storeSetups, useRedis } from '../support/redis.js';

const redis = useRedis();

const INTERRUPTED = 'Stopped before it finished.';

const setups = storeSetups(redis);

/** A JSON answer as a client reads it: a turn result, or an error body. */
interface Answer {
  status: number;
  body: TurnResult & { error?: { code: string; message: string; issues?: string[] } };
}

/** The answer of `GET /v1/sessions/:id`. */
interface SessionBody {
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
    /** Sends a message; the promise settles once the whole answer is in. */
    chat: (body: object, headers: Record<string, string> = {}) =>
      answer(app.request('/v1/chat', postJson(body, headers))),
    cancel: (sessionId: string, turnId: string) =>
      answer(app.request(`/v1/sessions/${sessionId}/turns/${turnId}/cancel`, { method: 'POST' })),
    /** The session's history, or undefined when it does not exist (404). */
    session: async (sessionId: string): Promise<SessionBody | undefined> => {
      const response = await app.request(`/v1/sessions/${sessionId}`);
      if (response.status === 404) return undefined;
      expect(response.status).toBe(200);
      return (await response.json()) as SessionBody;
    },
  };
}

function contents(session: SessionBody | undefined): Array<[string, string]> {
  return (session?.messages ?? []).map((message) => [message.role, message.content]);
}

function expectWellFormed(session: SessionBody | undefined): void {
  expect(session).toBeDefined();
  expect(historyProblems(session!.messages, session!.turns)).toEqual([]);
}

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

/** Reads a Server-Sent Events response as it arrives: its first event once complete, and every event at the end. */
function followEvents(response: Response): { first: Promise<ReceivedEvent>; all: Promise<ReceivedEvent[]> } {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let firstSeen: (event: ReceivedEvent) => void = () => {};
  let noEvents: (error: Error) => void = () => {};
  const first = new Promise<ReceivedEvent>((resolve, reject) => {
    firstSeen = resolve;
    noEvents = reject;
  });
  const all = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const end = text.indexOf('\n\n');
      if (end >= 0) firstSeen(parseEventStream(text.slice(0, end + 2))[0]!);
    }
    const events = parseEventStream(text);
    if (events[0]) firstSeen(events[0]);
    else noEvents(new Error('the stream ended without an event'));
    return events;
  })();
  return { first, all };
}

/** Payouts always need approval; records each payout. */
function payoutAgent() {
  const runs: string[] = [];
  const agent = defineAgent({
    name: 'payouts',
    description: 'Pays money out',
    requiresApproval: true,
    run: (message) => {
      runs.push(message);
      return `paid ${message}`;
    },
  });
  return Object.assign(agent, { runs });
}

describe.each(setups)('concurrent turns, cancel and idempotency with $name', (setup) => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  function serve(options: TestAppOptions) {
    const { app, orchestrator } = createApp({
      interruptedMessage: INTERRUPTED,
      ...setup.stores(),
      ...options,
    });
    apps.push(app);
    return { app, orchestrator, ...client(app) };
  }

  describe('concurrency policies', () => {
    it.each([
      ['the app option', { concurrency: 'reject' as const }, {}],
      ['the chat body', {}, { concurrency: 'reject' }],
    ])(
      "with 'reject' from %s, a second message gets 409 session_busy while the first runs",
      async (_from, appOptions, body) => {
        const slow = slowAgent('slow', 300);
        const { chat, session } = serve({ agents: [slow], ...appOptions });
        const first = chat({ message: 'slow: first', sessionId: 'busy' });
        await waitUntil(() => slow.runs.length === 1);

        const second = await chat({ message: 'slow: second', sessionId: 'busy', ...body });
        expect(second.status).toBe(409);
        expect(second.body.error).toMatchObject({ code: 'session_busy' });
        // Refused while the first turn's agent was still at work, not after it.
        expect(slow.runs[0]!.endedAt).toBeUndefined();

        const done = await first;
        expect(done.status).toBe(200);
        expect(done.body).toMatchObject({ status: 'completed', reply: 'slow done: first' });
        expect(slow.runs.map((run) => run.message)).toEqual(['first']);
        const stored = await session('busy');
        expect(contents(stored)).toEqual([
          ['user', 'slow: first'],
          ['tool', 'slow done: first'],
          ['assistant', 'slow done: first'],
        ]);
        expectWellFormed(stored);
      },
    );

    it("a message without 'reject' still waits for the running turn", async () => {
      const slow = slowAgent('slow', 100);
      const { chat, session } = serve({ agents: [slow] });
      const first = chat({ message: 'slow: first', sessionId: 'queue' });
      await waitUntil(() => slow.runs.length === 1);
      const refused = await chat({ message: 'slow: refused', sessionId: 'queue', concurrency: 'reject' });
      expect(refused.status).toBe(409);
      const waited = await chat({ message: 'slow: second', sessionId: 'queue', concurrency: 'wait' });
      expect(waited.body).toMatchObject({ status: 'completed', reply: 'slow done: second' });
      expect((await first).body.status).toBe('completed');
      expect(slow.runs.map((run) => run.message)).toEqual(['first', 'second']);
      expect(slow.runs[1]!.startedAt).toBeGreaterThanOrEqual(slow.runs[0]!.endedAt!);
      expectWellFormed(await session('queue'));
    });

    it.each([
      ['the app option', { concurrency: 'interrupt' as const }, {}],
      ['the chat body', {}, { concurrency: 'interrupt' }],
    ])(
      "with 'interrupt' from %s, a second message stops the running turn, which the new turn then sees",
      async (_from, appOptions, body) => {
        const slow = slowAgent('slow', 800);
        const { chat, session, orchestrator } = serve({ agents: [slow, echoAgent()], ...appOptions });
        const first = chat({ message: 'slow: first', sessionId: 'replaced' });
        await waitUntil(() => slow.runs.length === 1);

        const second = await chat({ message: 'echo: second', sessionId: 'replaced', ...body });
        const stopped = await first;
        expect(stopped.status).toBe(200);
        expect(stopped.body).toMatchObject({
          status: 'interrupted',
          reply: INTERRUPTED,
          error: { code: 'turn_interrupted' },
        });
        // Its agent was aborted: it never finished.
        expect(slow.runs).toHaveLength(1);
        expect(slow.runs[0]!.endedAt).toBeUndefined();

        expect(second.status).toBe(200);
        expect(second.body).toMatchObject({ status: 'completed', reply: 'echo: second' });
        const decided = orchestrator.seen.find((conversation) => conversation.turnId === second.body.turnId);
        expect(decided!.messages.map((message) => [message.role, message.content])).toEqual([
          ['user', 'slow: first'],
          ['assistant', INTERRUPTED],
          ['user', 'echo: second'],
        ]);

        const stored = await session('replaced');
        expect(stored!.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
          [stopped.body.turnId, 'interrupted'],
          [second.body.turnId, 'completed'],
        ]);
        expect(stored!.turns[0]!.error).toMatchObject({ code: 'turn_interrupted' });
        expect(contents(stored)).toEqual([
          ['user', 'slow: first'],
          ['assistant', INTERRUPTED],
          ['user', 'echo: second'],
          ['tool', 'echo: second'],
          ['assistant', 'echo: second'],
        ]);
        expectWellFormed(stored);
        await sleep(20);
        expect(slow.runs[0]!.endedAt).toBeUndefined();
      },
    );
    it("with 'interrupt', an orchestrator still deciding is aborted through the request's signal", async () => {
      let decisionDone = false;
      let decisionAborted = false;
      const answerNow = relay();
      const { chat, session } = serve({
        agents: [echoAgent()],
        handler: async (conversation) => {
          if (conversation.messages.at(-1)?.content === 'think slowly') {
            try {
              await sleep(800, RequestContext.current().signal);
            } catch (error) {
              decisionAborted = true;
              throw error;
            }
            decisionDone = true;
          }
          return answerNow(conversation);
        },
      });
      const first = chat({ message: 'think slowly', sessionId: 'slow-decision' });
      await waitUntil(async () => (await session('slow-decision'))?.activeTurn?.status === 'running');

      const second = await chat({
        message: 'quick one',
        sessionId: 'slow-decision',
        concurrency: 'interrupt',
      });
      expect(second.body).toMatchObject({ status: 'completed', reply: 'echo: quick one' });
      expect((await first).body).toMatchObject({ status: 'interrupted', reply: INTERRUPTED });
      // The decision was given up, not waited for.
      expect(decisionAborted).toBe(true);
      expect(decisionDone).toBe(false);
      const stored = await session('slow-decision');
      expect(contents(stored)).toEqual([
        ['user', 'think slowly'],
        ['assistant', INTERRUPTED],
        ['user', 'quick one'],
        ['tool', 'echo: quick one'],
        ['assistant', 'echo: quick one'],
      ]);
      expectWellFormed(stored);
    });
  });

  describe('cancel', () => {
    it('keeps the replies a fan-out stored before the cancel, and aborts the call still running', async () => {
      const slow = slowAgent('slow', 800);
      const { chat, cancel, session } = serve({
        agents: [echoAgent(), slow],
        handler: fanOut(['echo', 'slow']),
      });
      const running = chat({ message: 'both please', sessionId: 'half-done' });
      await waitUntil(async () => contents(await session('half-done')).length === 2);
      expect(slow.runs).toHaveLength(1);
      const { turnId } = (await session('half-done'))!.activeTurn!;

      const cancelled = await cancel('half-done', turnId);
      expect(cancelled.body).toMatchObject({ turnId, status: 'interrupted' });
      expect((await running).body).toMatchObject({ turnId, status: 'interrupted' });
      expect(slow.runs[0]!.endedAt).toBeUndefined();
      const stored = await session('half-done');
      expect(contents(stored)).toEqual([
        ['user', 'both please'],
        ['tool', 'echo: both please'],
        ['assistant', INTERRUPTED],
      ]);
      expect(stored!.turns[0]!.steps[0]).toMatchObject({ kind: 'fan-out' });
      expectWellFormed(stored);
    });

    it('stops a running turn found from its streamed turn-start; the stream ends interrupted', async () => {
      const slow = slowAgent('slow', 800);
      const { app, cancel, session } = serve({ agents: [slow] });
      const response = await app.request(
        '/v1/chat',
        postJson({ message: 'slow: first', sessionId: 'streamed' }, { accept: 'text/event-stream' }),
      );
      const events = followEvents(response);
      const start = await events.first;
      expect(start.event).toBe('turn-start');
      const { turnId } = start.data;
      await waitUntil(() => slow.runs.length === 1);

      const cancelled = await cancel('streamed', turnId);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        sessionId: 'streamed',
        turnId,
        status: 'interrupted',
        reply: INTERRUPTED,
        error: { code: 'turn_interrupted' },
      });
      const streamed = await events.all;
      expect(streamed.at(-1)!.data).toMatchObject({
        type: 'turn-end',
        turnId,
        status: 'interrupted',
        endOfDialog: true,
      });
      expect(slow.runs[0]!.endedAt).toBeUndefined();

      const stored = await session('streamed');
      expect(stored!.activeTurn).toBeUndefined();
      expect(stored!.turns).toMatchObject([{ turnId, status: 'interrupted' }]);
      expectWellFormed(stored);
    });

    it('stops a running turn found from GET /v1/sessions/:id; the running request ends interrupted; a second cancel answers the same', async () => {
      const slow = slowAgent('slow', 800);
      const { chat, cancel, session } = serve({ agents: [slow] });
      const running = chat({ message: 'slow: first', sessionId: 'cancel-me' });
      await waitUntil(() => slow.runs.length === 1);
      const active = (await session('cancel-me'))!.activeTurn;
      expect(active).toEqual({ turnId: expect.any(String), status: 'running' });

      const cancelled = await cancel('cancel-me', active!.turnId);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        turnId: active!.turnId,
        status: 'interrupted',
        reply: INTERRUPTED,
      });

      const stopped = await running;
      expect(stopped.status).toBe(200);
      expect(stopped.body).toMatchObject({
        turnId: active!.turnId,
        status: 'interrupted',
        reply: INTERRUPTED,
      });
      expect(slow.runs[0]!.endedAt).toBeUndefined();

      const again = await cancel('cancel-me', active!.turnId);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ turnId: active!.turnId, status: 'interrupted', reply: INTERRUPTED });

      const stored = await session('cancel-me');
      expect(contents(stored)).toEqual([
        ['user', 'slow: first'],
        ['assistant', INTERRUPTED],
      ]);
      expect(stored!.turns).toHaveLength(1);
      expectWellFormed(stored);
    });

    it('answers 409 turn_not_active for a completed turn and 404 for an unknown one, changing nothing', async () => {
      const { chat, cancel, session } = serve({ agents: [echoAgent()] });
      const done = await chat({ message: 'hello', sessionId: 'finished' });
      const before = await session('finished');

      const late = await cancel('finished', done.body.turnId);
      expect(late.status).toBe(409);
      expect(late.body.error).toMatchObject({ code: 'turn_not_active' });

      const unknown = await cancel('finished', 'turn_unknown');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ code: 'not_found' });
      const nowhere = await cancel('no-such-session', done.body.turnId);
      expect(nowhere.status).toBe(404);
      expect(nowhere.body.error).toMatchObject({ code: 'not_found' });

      expect(await session('finished')).toEqual(before);
      expectWellFormed(before);
    });

    it('refuses a cancel that carries a body (400) and leaves the running turn alone', async () => {
      const slow = slowAgent('slow', 150);
      const { app, chat, session } = serve({ agents: [slow] });
      const running = chat({ message: 'slow: first', sessionId: 'with-body' });
      await waitUntil(() => slow.runs.length === 1);
      const { turnId } = (await session('with-body'))!.activeTurn!;

      const withBody = await answer(
        app.request(`/v1/sessions/with-body/turns/${turnId}/cancel`, postJson({ reason: 'stop' })),
      );
      expect(withBody.status).toBe(400);
      expect(withBody.body.error).toMatchObject({ code: 'validation_error' });
      expect((await running).body).toMatchObject({ turnId, status: 'completed', reply: 'slow done: first' });
      expectWellFormed(await session('with-body'));
    });

    it('ends a turn paused for approval as interrupted and rejects its pending approval', async () => {
      const payouts = payoutAgent();
      const { app, chat, cancel, session, orchestrator } = serve({ agents: [payouts] });
      const paused = await chat({ message: 'payouts: 300 to Bob', sessionId: 'paused' });
      expect(paused.body.status).toBe('awaiting_approval');
      const approvalId = paused.body.approvals![0]!.id;

      const cancelled = await cancel('paused', paused.body.turnId);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        turnId: paused.body.turnId,
        status: 'interrupted',
        reply: INTERRUPTED,
      });
      expect(payouts.runs).toEqual([]);
      expect(orchestrator.seen).toHaveLength(1);

      const stored = await session('paused');
      expect(stored!.activeTurn).toBeUndefined();
      expect(stored!.pendingApprovals).toEqual([]);
      expect(stored!.turns).toMatchObject([
        {
          status: 'interrupted',
          approvals: [{ id: approvalId, status: 'withdrawn', comment: 'the turn was cancelled' }],
        },
      ]);
      expect(contents(stored)).toEqual([
        ['user', 'payouts: 300 to Bob'],
        ['assistant', INTERRUPTED],
      ]);
      expectWellFormed(stored);

      const resolved = await answer(
        app.request(`/v1/sessions/paused/approvals/${approvalId}`, postJson({ decision: 'approve' })),
      );
      expect(resolved.status).toBe(409);
      expect(resolved.body.error).toMatchObject({ code: 'approval_resolved' });
      expect(payouts.runs).toEqual([]);
    });
  });

  describe('Idempotency-Key', () => {
    it('a retry after completion returns the same turn without running it again', async () => {
      const slow = slowAgent('slow', 20);
      const { chat, session } = serve({ agents: [slow] });
      const key = { 'idempotency-key': 'order-42-refund-1' };
      const first = await chat({ message: 'slow: refund order 42', sessionId: 'retried' }, key);
      const retry = await chat({ message: 'slow: refund order 42', sessionId: 'retried' }, key);
      expect(first.status).toBe(200);
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({
        sessionId: 'retried',
        turnId: first.body.turnId,
        status: 'completed',
        reply: 'slow done: refund order 42',
      });
      expect(slow.runs).toHaveLength(1);

      const stored = await session('retried');
      expect(stored!.turns).toHaveLength(1);
      expect(contents(stored)).toEqual([
        ['user', 'slow: refund order 42'],
        ['tool', 'slow done: refund order 42'],
        ['assistant', 'slow done: refund order 42'],
      ]);
      expectWellFormed(stored);
    });

    it('without a sessionId, the first call and its retry land in the same session derived from the key', async () => {
      const slow = slowAgent('slow', 20);
      const { chat, session } = serve({ agents: [slow] });
      const key = 'first-message-7f3a';
      const first = await chat({ message: 'slow: hello' }, { 'idempotency-key': key });
      const retry = await chat({ message: 'slow: hello' }, { 'idempotency-key': key });
      expect(first.body.sessionId).toBe(sessionIdForKey(key));
      expect(retry.body).toMatchObject({ sessionId: first.body.sessionId, turnId: first.body.turnId });
      expect(slow.runs).toHaveLength(1);
      const stored = await session(first.body.sessionId);
      expect(stored!.turns).toHaveLength(1);
      expectWellFormed(stored);
    });

    it('two concurrent requests with the same key run one turn and both get its result', async () => {
      const slow = slowAgent('slow', 150);
      const { chat, session } = serve({ agents: [slow] });
      const key = { 'idempotency-key': 'double-click' };
      const [one, two] = await Promise.all([
        chat({ message: 'slow: pay', sessionId: 'double' }, key),
        chat({ message: 'slow: pay', sessionId: 'double' }, key),
      ]);
      expect([one.status, two.status]).toEqual([200, 200]);
      expect(two.body).toMatchObject({ turnId: one.body.turnId, status: 'completed', reply: one.body.reply });
      expect(one.body.reply).toBe('slow done: pay');
      expect(slow.runs).toHaveLength(1);
      const stored = await session('double');
      expect(stored!.turns).toHaveLength(1);
      expectWellFormed(stored);
    });

    it('a retry of a request whose turn paused for approval returns the paused turn, not a 409', async () => {
      const payouts = payoutAgent();
      const { chat, session } = serve({ agents: [payouts] });
      const key = { 'idempotency-key': 'payout-bob-1' };
      const first = await chat({ message: 'payouts: 300 to Bob', sessionId: 'paused-retry' }, key);
      const retry = await chat({ message: 'payouts: 300 to Bob', sessionId: 'paused-retry' }, key);
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ turnId: first.body.turnId, status: 'awaiting_approval' });
      expect(retry.body.approvals!.map((approval) => approval.id)).toEqual(
        first.body.approvals!.map((approval) => approval.id),
      );
      expect(payouts.runs).toEqual([]);
      const stored = await session('paused-retry');
      expect(stored!.turns).toHaveLength(1);
      expectWellFormed(stored);
    });

    it('the same key with another message or user answers 422 idempotency_key_reused and runs nothing', async () => {
      const slow = slowAgent('slow', 10);
      const { chat, session } = serve({ agents: [slow] });
      const key = { 'idempotency-key': 'reused-key' };
      const first = await chat({ message: 'slow: one', userId: 'ann' }, key);
      for (const body of [
        { message: 'slow: two', userId: 'ann' },
        { message: 'slow: one', userId: 'bob' },
        { message: 'slow: one', userId: 'ann', metadata: { channel: 'web' } },
      ]) {
        const reused = await chat(body, key);
        expect(reused.status).toBe(422);
        expect(reused.body.error).toMatchObject({ code: 'idempotency_key_reused' });
      }
      expect(slow.runs).toHaveLength(1);
      const stored = await session(first.body.sessionId);
      expect(stored!.turns).toHaveLength(1);
      expectWellFormed(stored);
    });

    it.each([
      ['with a space', 'order 42'],
      ['of 256 characters', 'k'.repeat(256)],
      ['of 300 characters', 'k'.repeat(300)],
      ['empty', ''],
      ['with a non-ASCII character', 'cl\u00e9'],
    ])('answers 400 to a key %s and stores nothing', async (_how, key) => {
      const slow = slowAgent('slow', 10);
      const { chat, session } = serve({ agents: [slow] });
      const refused = await chat({ message: 'slow: hi', sessionId: 'bad-key' }, { 'idempotency-key': key });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'validation_error' });
      expect(slow.runs).toEqual([]);
      expect(await session('bad-key')).toBeUndefined();
    });

    it('accepts a key of 255 visible characters', async () => {
      const { chat } = serve({ agents: [echoAgent()] });
      const accepted = await chat({ message: 'hi' }, { 'idempotency-key': `${'k'.repeat(254)}~` });
      expect(accepted.status).toBe(200);
      expect(accepted.body.status).toBe('completed');
    });
  });
});

describe('concurrency across two replicas sharing one Redis', () => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** Two apps on one key prefix (two replicas) hosting the same agents. */
  function replicas(options: TestAppOptions) {
    const keyPrefix = redis.prefix();
    const replica = () => {
      const { app, orchestrator } = createApp({
        interruptedMessage: INTERRUPTED,
        ...createRedisStores(REDIS_URL, { keyPrefix }),
        ...options,
      });
      apps.push(app);
      return { app, orchestrator, ...client(app) };
    };
    return { a: replica(), b: replica() };
  }

  it('a cancel sent to replica B stops the turn running on replica A', async () => {
    const slow = slowAgent('slow', 800);
    const { a, b } = replicas({ agents: [slow] });
    const running = a.chat({ message: 'slow: first', sessionId: 'remote-cancel' });
    await waitUntil(() => slow.runs.length === 1);
    const active = (await b.session('remote-cancel'))!.activeTurn!;
    expect(active.status).toBe('running');

    const cancelled = await b.cancel('remote-cancel', active.turnId);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      turnId: active.turnId,
      status: 'interrupted',
      reply: INTERRUPTED,
    });
    const stopped = await running;
    expect(stopped.body).toMatchObject({ turnId: active.turnId, status: 'interrupted', reply: INTERRUPTED });
    expect(slow.runs).toHaveLength(1);
    expect(slow.runs[0]!.endedAt).toBeUndefined();

    const stored = await a.session('remote-cancel');
    expect(contents(stored)).toEqual([
      ['user', 'slow: first'],
      ['assistant', INTERRUPTED],
    ]);
    expectWellFormed(stored);
  });

  it("a message with 'interrupt' sent to replica B stops the turn running on replica A", async () => {
    const slow = slowAgent('slow', 800);
    const { a, b } = replicas({ agents: [slow, echoAgent()] });
    const running = a.chat({ message: 'slow: first', sessionId: 'remote-interrupt' });
    await waitUntil(() => slow.runs.length === 1);

    const next = await b.chat({
      message: 'echo: second',
      sessionId: 'remote-interrupt',
      concurrency: 'interrupt',
    });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ status: 'completed', reply: 'echo: second' });
    const stopped = await running;
    expect(stopped.body).toMatchObject({ status: 'interrupted', reply: INTERRUPTED });
    expect(slow.runs[0]!.endedAt).toBeUndefined();

    const stored = await b.session('remote-interrupt');
    expect(stored!.turns.map((turn) => turn.status)).toEqual(['interrupted', 'completed']);
    expectWellFormed(stored);
  });

  it('the same Idempotency-Key sent to both replicas at once runs one turn; both get its result', async () => {
    const slow = slowAgent('slow', 150);
    const { a, b } = replicas({ agents: [slow] });
    const key = { 'idempotency-key': 'two-replicas' };
    const [one, two] = await Promise.all([
      a.chat({ message: 'slow: pay' }, key),
      b.chat({ message: 'slow: pay' }, key),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.body).toMatchObject({
      sessionId: one.body.sessionId,
      turnId: one.body.turnId,
      status: 'completed',
      reply: 'slow done: pay',
    });
    expect(slow.runs).toHaveLength(1);
    const stored = await a.session(one.body.sessionId);
    expect(stored!.turns).toHaveLength(1);
    expectWellFormed(stored);
  });
});
