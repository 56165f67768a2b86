import { ConfigurationError, type MessageItem, type UserMessage } from '@switchboard/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  COMPACT_VERSION,
  packMessage,
  packTurn,
  unpackMessage,
  unpackTurn,
} from '../../src/stores/compact-records.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { SessionLease } from '../../src/stores/session-store.js';
import type { TurnRecord } from '../../src/turns/turn-record.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';
import { runningTurn, turnRecord, userMessage } from './session-store.contract.js';

/** What a store that writes the compact form as text reads back. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const START = '2026-03-04T05:06:07.089Z';
/** The exact ISO text of `ms` after {@link START}. */
const at = (ms: number) => new Date(Date.parse(START) + ms).toISOString();

describe('compact records: messages', () => {
  const messages: Record<string, MessageItem> = {
    user: { id: 'msg_1', role: 'user', content: 'refund order 42', createdAt: START },
    'user with metadata': {
      id: 'msg_2',
      role: 'user',
      content: '',
      createdAt: START,
      metadata: { channel: 'web', nested: { list: [1, 'two', { three: null }], flag: false } },
    },
    'tool ok': {
      id: 'msg_3',
      role: 'tool',
      name: 'billing',
      toolCallId: 'call_1',
      content: 'refunded',
      status: 'ok',
      createdAt: at(12),
    },
    'tool error with metadata': {
      id: 'msg_4',
      role: 'tool',
      name: 'shipping',
      toolCallId: 'call_2',
      content: 'timed out',
      status: 'error',
      createdAt: at(5000),
      metadata: { errorCode: 'agent_timeout', details: { attempts: 2 } },
    },
    assistant: { id: 'msg_5', role: 'assistant', content: 'Done.', toolCallId: 'call_3', createdAt: at(9) },
    'assistant with metadata': {
      id: 'msg_6',
      role: 'assistant',
      content: 'Done, with notes.',
      toolCallId: 'call_4',
      createdAt: at(-86_400_000),
      metadata: { citations: [{ url: 'https://example.com', title: 'x' }] },
    },
  };

  it.each(Object.entries(messages))('round-trips a %s message', (_label, message) => {
    const packed = packMessage(message);
    expect(packed[0]).toBe(COMPACT_VERSION);
    // An exact ISO time is kept as a number (epoch ms).
    expect(typeof packed[4]).toBe('number');
    expect(unpackMessage(packed)).toEqual(message);
    expect(unpackMessage(viaJson(packed))).toEqual(message);
  });

  it.each([
    ['without milliseconds', '2026-01-01T00:00:00Z'],
    ['with an offset', '2026-01-01T01:00:00.000+01:00'],
    ['with a lowercase z', '2026-01-01T00:00:00.000z'],
    ['a day that does not exist', '2026-02-30T00:00:00.000Z'],
    ['a date only', '2026-01-01'],
    ['not a time at all', 'yesterday'],
  ])('keeps a createdAt %s as its own text', (_label, createdAt) => {
    const message: MessageItem = { id: 'msg_1', role: 'user', content: 'hi', createdAt };
    const packed = viaJson(packMessage(message));
    expect(unpackMessage(packed).createdAt).toBe(createdAt);
    expect(unpackMessage(packed)).toEqual(message);
  });

  it.each([
    ['an unknown role', [COMPACT_VERSION, 'x', 'msg_1', 'hi', 0]],
    ['a missing id', [COMPACT_VERSION, 'u', null, 'hi', 0]],
    ['an empty id', [COMPACT_VERSION, 'u', '', 'hi', 0]],
    ['a content that is not a text', [COMPACT_VERSION, 'u', 'msg_1', 42, 0]],
    ['a missing time', [COMPACT_VERSION, 'u', 'msg_1', 'hi']],
    ['a tool status "maybe"', [COMPACT_VERSION, 't', 'msg_1', 'hi', 0, 'call_1', 'echo', 'maybe']],
    ['a tool without name', [COMPACT_VERSION, 't', 'msg_1', 'hi', 0, 'call_1', null, 'ok']],
    ['an assistant without toolCallId', [COMPACT_VERSION, 'a', 'msg_1', 'hi', 0]],
    ['metadata that is an array', [COMPACT_VERSION, 'u', 'msg_1', 'hi', 0, ['a']]],
    ['metadata that is a text', [COMPACT_VERSION, 'u', 'msg_1', 'hi', 0, 'meta']],
    ['another version', [COMPACT_VERSION + 1, 'u', 'msg_1', 'hi', 0]],
    ['an object', { id: 'msg_1', role: 'user', content: 'hi', createdAt: START }],
  ])('refuses %s with a TypeError', (_label, garbage) => {
    expect(() => unpackMessage(garbage)).toThrow(TypeError);
  });
});

describe('compact records: times', () => {
  // What the stores may write as a number: exactly the texts that read back the same through Date.
  const reference = (iso: string) => {
    const ms = Date.parse(iso);
    return iso.length === 24 && Number.isFinite(ms) && new Date(ms).toISOString() === iso ? ms : iso;
  };
  const packedTime = (createdAt: string) =>
    packMessage({ id: 'm1', role: 'user', content: '', createdAt })[4];

  it.each([
    '2026-11-25T16:50:00.123Z',
    '0000-01-01T00:00:00.000Z',
    '0050-03-01T10:00:00.000Z',
    '1969-12-31T23:59:59.999Z',
    '2024-02-29T00:00:00.000Z',
    '2000-02-29T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2023-02-29T00:00:00.000Z',
    '2026-04-31T00:00:00.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-01-01T24:00:00.000Z',
    '2026-01-01T00:60:00.000Z',
    '2026-01-01T00:00:00.000z',
    '2026-01-01 00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
  ])('packs %s as Date reads it', (iso) => {
    expect(packedTime(iso)).toBe(reference(iso));
    expect(
      unpackMessage(viaJson(packMessage({ id: 'm1', role: 'user', content: '', createdAt: iso }))).createdAt,
    ).toBe(iso);
  });

  it('packs every time of a sweep over ten thousand years as Date reads it', () => {
    const step = 9_999_999_937; // about 116 days, so that days, months and leap years vary
    for (let ms = Date.UTC(0, 0, 1) - 62_167_219_200_000 + 1; ms < 253_402_300_799_999; ms += step) {
      const iso = new Date(ms).toISOString();
      expect(packedTime(iso)).toBe(reference(iso));
      // And reads back as the same text.
      const message = { id: 'm1', role: 'user' as const, content: '', createdAt: iso };
      expect(unpackMessage(viaJson(packMessage(message))).createdAt).toBe(iso);
    }
  });
});

describe('compact records: turns', () => {
  const completed: TurnRecord = {
    turnId: 'turn_0123456789abcdef1',
    userMessageId: 'msg_1',
    status: 'completed',
    startedAt: START,
    updatedAt: at(950),
    endedAt: at(950),
    steps: [
      {
        hop: 0,
        kind: 'call',
        calls: [
          {
            toolCallId: 'call_1',
            agent: 'billing',
            message: 'refund order 42',
            thought: 'The user wants billing',
            reason: 'default agent',
          },
        ],
        decidedAt: at(1),
        durationMs: 1,
      },
      {
        hop: 1,
        kind: 'answer',
        calls: [{ toolCallId: 'call_2', agent: 'route_to_user', reason: 'the agent answered' }],
        decidedAt: at(940),
        durationMs: 0,
      },
    ],
  };

  const rich: TurnRecord = {
    turnId: 'turn_0123456789abcdef2',
    userMessageId: 'msg_2',
    status: 'failed',
    startedAt: START,
    updatedAt: at(7000),
    endedAt: at(6500),
    steps: [
      {
        hop: 0,
        kind: 'note',
        calls: [],
        label: 'plan',
        annotations: { pattern: 'fan-out', correlationId: 'corr_1', steps: ['research', 'write'] },
        decidedAt: at(0),
        durationMs: 0,
      },
      {
        hop: 0,
        kind: 'fan-out',
        calls: [
          {
            toolCallId: 'call_1',
            agent: 'billing',
            message: 'refund order 42',
            input: { orderId: 42, lines: [{ sku: 'a', quantity: 2 }], note: null },
            thought: 'two parts',
            reason: 'billing knows refunds',
            timeoutMs: 5000,
            fanInGraceMs: 250,
            approvalId: 'appr_1',
          },
          { toolCallId: 'call_2', agent: 'shipping', message: 'where is 42', timeoutMs: 0 },
          { toolCallId: 'call_3', agent: 'faq', message: '', input: null, thought: '' },
          {
            toolCallId: 'call_4',
            agent: 'planner',
            message: 'plan it',
            innerSteps: [
              {
                hop: 0,
                kind: 'call',
                calls: [
                  {
                    toolCallId: 'call_5',
                    agent: 'writer',
                    message: 'draft',
                    status: 'error',
                    errorCode: 'agent_timeout',
                  },
                ],
                decidedAt: at(20),
                durationMs: 2,
                usage: { inputTokens: 3, outputTokens: 4 },
              },
            ],
          },
        ],
        annotations: { expectedBranches: 4, correlationId: 'corr_1' },
        usage: { inputTokens: 120, outputTokens: 7 },
        decidedAt: at(12),
        durationMs: 11,
      },
      { hop: 1, kind: 'error', calls: [], error: 'agent_timeout', decidedAt: at(6400), durationMs: 3 },
    ],
    traceId: '0af7651916cd43dd8448eb211c80319c',
    traces: [
      { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' },
      { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' },
    ],
    error: { code: 'agent_timeout', message: 'The shipping agent did not answer in time' },
    approvals: [
      {
        id: 'appr_1',
        toolCallId: 'call_1',
        agent: 'billing',
        message: 'refund order 42',
        input: { orderId: 42 },
        risk: 'high',
        requestedBy: 'agent',
        requestedAt: at(13),
        expiresAt: null,
        status: 'approved',
        decidedAt: at(3000),
        decidedBy: 'user_7',
        comment: 'ok',
        tool: 'refund',
        toolUseId: 'toolu_1',
        pauseId: 'pause_1',
        agentState: { conversation: [{ role: 'user', content: 'refund' }], step: 2 },
      },
      {
        id: 'appr_2',
        toolCallId: 'call_2',
        agent: 'shipping',
        message: 'where is 42',
        risk: 'low',
        requestedBy: 'policy',
        requestedAt: at(14),
        expiresAt: at(60_000),
        status: 'withdrawn',
      },
    ],
    recoveries: 2,
    usage: { inputTokens: 123, outputTokens: 11 },
    profile: 'careful',
  };

  const cases: [string, TurnRecord][] = [
    ['a completed turn with two steps', completed],
    ['a rich failed turn (fan-out, note, error, approvals, traces, usage, inner steps)', rich],
    ['updatedAt different from endedAt', { ...completed, updatedAt: at(2000) }],
    ['updatedAt and endedAt equal to startedAt', { ...completed, updatedAt: START, endedAt: START }],
    ['updatedAt equal to startedAt, endedAt later', { ...completed, updatedAt: START }],
    ['no updatedAt', { ...completed, updatedAt: undefined }],
    ['no updatedAt nor endedAt (running)', { ...runningTurn('msg_9'), startedAt: START }],
    [
      'a running turn written after its start',
      { ...completed, status: 'running', endedAt: undefined, updatedAt: at(10) },
    ],
    ['times before its start', { ...completed, endedAt: at(-5), updatedAt: at(-10) }],
    ['startedAt not exact ISO', { ...rich, startedAt: '2026-03-04T05:06:07Z' }],
    [
      'startedAt with an offset and updatedAt as endedAt',
      { ...completed, startedAt: '2026-03-04T06:06:07.089+01:00', updatedAt: at(950) },
    ],
    ['endedAt not exact ISO', { ...completed, endedAt: '2026-03-04T05:06:08Z', updatedAt: undefined }],
    [
      'updatedAt as endedAt, both not exact ISO',
      { ...completed, endedAt: '2026-03-04T05:06:08Z', updatedAt: '2026-03-04T05:06:08Z' },
    ],
    [
      'a step time not exact ISO',
      {
        ...completed,
        steps: [{ ...(completed.steps[0] as TurnRecord['steps'][number]), decidedAt: 'soon' }],
      },
    ],
    ['no steps', { ...completed, steps: [] }],
    [
      'an answer with nothing but its id, and ids and phrases that pack short',
      {
        ...completed,
        turnId: 'turn_abcdefghijkl7',
        userMessageId: 'msg_abcdefghijkl6',
        steps: [
          {
            hop: 0,
            kind: 'call',
            calls: [
              {
                toolCallId: 'call_abcdefghijkl8',
                agent: 'billing',
                thought: 'Keyword scores: billing 1 (billing); chose billing',
                reason: 'matched keywords: billing',
              },
            ],
            decidedAt: at(1),
            durationMs: 0.25,
          },
          {
            hop: 1,
            kind: 'answer',
            calls: [{ toolCallId: 'call_abcdefghijkl9', agent: 'route_to_user' }],
            decidedAt: at(2),
            durationMs: 0.5,
          },
          {
            hop: 2,
            kind: 'answer',
            calls: [
              {
                toolCallId: 'call_zz',
                agent: 'route_to_user',
                thought: 'Returning the reply of billing to the user',
                reason: 'answered by billing',
              },
            ],
            decidedAt: at(3),
            durationMs: 0.5,
          },
        ],
      },
    ],
  ];

  it.each(cases)('round-trips %s', (_label, turn) => {
    expect(unpackTurn(packTurn(turn))).toEqual(turn);
    expect(unpackTurn(viaJson(packTurn(turn)))).toEqual(turn);
  });

  it('keeps updatedAt absent rather than as endedAt', () => {
    const { updatedAt: _absent, ...turn } = completed;
    const unpacked = unpackTurn(viaJson(packTurn(turn)));
    expect(unpacked).not.toHaveProperty('updatedAt');
    expect(unpacked.endedAt).toBe(completed.endedAt);
  });

  it('refuses a frame that is not a compact turn', () => {
    expect(() => unpackTurn({ ...completed })).toThrow(TypeError);
    expect(() => unpackTurn([COMPACT_VERSION, 'turn_1', 'msg_1', 'completed', 0, 5, true, null])).toThrow(
      TypeError,
    );
    expect(() => unpackTurn([COMPACT_VERSION + 1, ...packTurn(completed).slice(1)])).toThrow(TypeError);
  });
});

describe('InMemorySessionStore compaction through an App', () => {
  /** Everything a client can read of a session. */
  const snapshot = async (store: InMemorySessionStore, sessionId: string) => {
    const newest = store.readPage(sessionId, { limit: 3 });
    return {
      read: store.read(sessionId),
      window: store.read(sessionId, { limit: 4 }),
      newest,
      older: newest.before ? store.readPage(sessionId, { limit: 3, before: newest.before }) : undefined,
      turns: store.listTurns(sessionId),
      lastTurn: store.lastTurn(sessionId),
    };
  };

  it('answers every read of a compacted session as before, and unpacks it for the next turn', async () => {
    const sessions = new InMemorySessionStore({ compactAfterSeconds: false });
    const { app } = createApp({ agents: [echoAgent()], sessionStore: sessions });
    const asked = { a: ['hello', 'how are you', 'bye'], b: ['one', 'two', 'three'] };
    for (let index = 0; index < 3; index++) {
      for (const sessionId of ['a', 'b'] as const) {
        const result = await app.chat({ sessionId, message: asked[sessionId][index] as string });
        expect(result.reply).toBe(`echo: ${asked[sessionId][index]}`);
      }
    }
    const before = { a: await snapshot(sessions, 'a'), b: await snapshot(sessions, 'b') };
    const listed = sessions.listSessions({ limit: 10 });
    expect(listed.sessions.map((session) => session.sessionId)).toEqual(['b', 'a']);
    expect(before.a.turns).toHaveLength(3);
    expect(before.a.older).toBeDefined();

    expect(sessions.compactSessions()).toBe(2);
    expect(sessions.stats()).toEqual({ sessions: 2, compacted: 2 });
    // Nothing left to compact.
    expect(sessions.compactSessions()).toBe(0);

    // Listing and existence answer from the compacted form.
    expect(sessions.listSessions({ limit: 10 })).toEqual(listed);
    expect(sessions.exists('a')).toBe(true);
    expect(sessions.exists('b')).toBe(true);
    expect(sessions.exists('c')).toBe(false);
    expect(sessions.stats().compacted).toBe(2);

    const afterA = await snapshot(sessions, 'a');
    expect(afterA).toEqual(before.a);
    expect(sessions.stats()).toEqual({ sessions: 2, compacted: 1 });
    // Unpacked history is as immutable as the history it replaced.
    expect(Object.isFrozen(afterA.read[0])).toBe(true);
    expect(await snapshot(sessions, 'b')).toEqual(before.b);
    expect(sessions.stats()).toEqual({ sessions: 2, compacted: 0 });
    expect(sessions.listSessions({ limit: 10 })).toEqual(listed);

    expect(sessions.compactSessions()).toBe(2);
    const fourth = await app.chat({ sessionId: 'a', message: 'one more thing' });
    expect(fourth.reply).toBe('echo: one more thing');
    expect(sessions.stats()).toEqual({ sessions: 2, compacted: 1 });
    const history = sessions.read('a');
    expect(history.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      ...asked.a,
      'one more thing',
    ]);
    expect(history.slice(0, before.a.read.length)).toEqual(before.a.read);
    expect(history.at(-1)).toMatchObject({ role: 'assistant', content: 'echo: one more thing' });
    const turns = sessions.listTurns('a');
    expect(turns).toHaveLength(4);
    expect(turns.slice(0, 3)).toEqual(before.a.turns);
    expect(turns[3]).toMatchObject({ turnId: fourth.turnId, status: 'completed' });
    // The session written last lists first, with its new message count.
    expect(sessions.listSessions({ limit: 10 }).sessions).toMatchObject([
      { sessionId: 'a', messageCount: history.length },
      { sessionId: 'b' },
    ]);
    await app.close();
  });

  it('keeps texts that look like the shortened id tag exactly', async () => {
    const sessions = new InMemorySessionStore({ compactAfterSeconds: false });
    const { app } = createApp({ agents: [echoAgent()], sessionStore: sessions });
    const first = await app.chat({ sessionId: 'probe', message: 'hi' });
    const tag = first.turnId.match(/_([0-9a-z]{12})/)?.[1] as string;
    expect(tag).toMatch(/^[0-9a-z]{12}$/);
    const texts = {
      tilde: 'a_~b and _~ and ~_~~',
      tag: `see turn_${tag}zz, _${tag}, ${tag} and _${tag}_${tag}`,
      both: `_~ next to _${tag}0 and \\_${tag}`,
    };
    for (const [sessionId, text] of Object.entries(texts)) {
      const result = await app.chat({ sessionId, message: text });
      expect(result.reply).toBe(`echo: ${text}`);
    }
    const before = Object.fromEntries(
      Object.keys(texts).map((id) => [id, { read: sessions.read(id), turns: sessions.listTurns(id) }]),
    );
    expect(sessions.compactSessions()).toBe(4);
    for (const [sessionId, text] of Object.entries(texts)) {
      const read = sessions.read(sessionId);
      expect(read).toEqual(before[sessionId]?.read);
      expect(read.map((message) => message.content)).toEqual([text, `echo: ${text}`, `echo: ${text}`]);
      expect(sessions.listTurns(sessionId)).toEqual(before[sessionId]?.turns);
    }
    await app.close();
  });
});

describe('InMemorySessionStore compaction timer', () => {
  const stores: InMemorySessionStore[] = [];
  const open = (options: ConstructorParameters<typeof InMemorySessionStore>[0]) => {
    const store = new InMemorySessionStore(options);
    stores.push(store);
    return store;
  };
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
    vi.useRealTimers();
  });

  /** Opens and finishes one turn in `sessionId`. */
  const finishTurn = (store: InMemorySessionStore, sessionId: string, lease?: SessionLease) => {
    const asked = userMessage(`hello ${sessionId}`) as UserMessage;
    const turn = runningTurn(asked.id);
    store.openTurn(sessionId, asked, { turn, limit: 10, ...(lease ? { lease } : {}) });
    store.append(sessionId, [], {
      turn: { ...turnRecord(asked.id), turnId: turn.turnId },
      ...(lease ? { lease } : {}),
    });
  };

  it('compacts a session idle for compactAfterSeconds, and again after a read', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    finishTurn(store, 's');
    const before = store.read('s');
    vi.advanceTimersByTime(4000);
    expect(store.stats()).toEqual({ sessions: 1, compacted: 0 });
    vi.advanceTimersByTime(12_000);
    expect(store.stats()).toEqual({ sessions: 1, compacted: 1 });
    expect(store.read('s')).toEqual(before);
    expect(store.stats().compacted).toBe(0);
    // A read is no write: the session is still idle, so the next tick compacts it again.
    vi.advanceTimersByTime(5000);
    expect(store.stats().compacted).toBe(1);
  });

  it('by default compacts after 30 s, looking every 5 s (not every half of the delay)', () => {
    vi.useFakeTimers();
    const store = open({});
    vi.advanceTimersByTime(1_000);
    finishTurn(store, 's');
    vi.advanceTimersByTime(29_500);
    expect(store.stats().compacted).toBe(0);
    // Written at 1 s: the tick at 35 s finds it idle; ticks every 15 s (at 30 and 45 s) would not yet.
    vi.advanceTimersByTime(5_000);
    expect(store.stats().compacted).toBe(1);
  });

  it('reads back what it compacted as JSON carries it: a Date in metadata as its ISO text', () => {
    const store = open({ compactAfterSeconds: false });
    const at = new Date('2026-11-25T10:00:00.000Z');
    const dated = { ...userMessage('dated'), metadata: { at, nested: { list: [1, 'two'] } } };
    store.append('dated', [dated], { turn: turnRecord(dated.id) });
    expect(store.read('dated')[0]?.metadata?.at).toBe(at);
    expect(store.compactSessions()).toBe(1);
    expect(store.read('dated')[0]?.metadata).toEqual({ at: at.toISOString(), nested: { list: [1, 'two'] } });
  });

  it('waits for the last write, not the first', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    finishTurn(store, 's');
    vi.advanceTimersByTime(8000);
    finishTurn(store, 's');
    vi.advanceTimersByTime(8000);
    expect(store.stats().compacted).toBe(0);
    vi.advanceTimersByTime(8000);
    expect(store.stats().compacted).toBe(1);
    expect(store.read('s').map((message) => message.content)).toEqual(['hello s', 'hello s']);
  });

  it('leaves a session alone while its turn runs or its lease is held', async () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    const asked = userMessage('still thinking') as UserMessage;
    store.openTurn('running', asked, { turn: runningTurn(asked.id), limit: 10 });
    const lease = store.acquireLease('held', { ttlMs: 3_600_000, waitMs: 0 }) as SessionLease;
    finishTurn(store, 'held', lease);
    finishTurn(store, 'idle');
    vi.advanceTimersByTime(60_000);
    expect(store.stats()).toEqual({ sessions: 3, compacted: 1 });
    expect(store.compactSessions()).toBe(0);
    expect(store.lastTurn('running')?.status).toBe('running');
    // Once the lease is free, the idle session is compacted at the next tick.
    await lease.release();
    vi.advanceTimersByTime(5000);
    expect(store.stats()).toEqual({ sessions: 3, compacted: 2 });
    expect(store.read('held').map((message) => message.content)).toEqual(['hello held']);
  });

  it('compacts nothing with compactAfterSeconds: false', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: false });
    finishTurn(store, 's');
    vi.advanceTimersByTime(3_600_000);
    expect(store.stats()).toEqual({ sessions: 1, compacted: 0 });
    // compactSessions still works on demand.
    expect(store.compactSessions()).toBe(1);
  });

  it('compacts a thousand sessions per tick and the rest a few ms later', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    for (let index = 0; index < 1500; index++) {
      const asked = userMessage(`hello ${index}`);
      store.append(`s${index}`, [asked], { turn: turnRecord(asked.id) });
    }
    vi.advanceTimersByTime(10_000);
    expect(store.stats()).toEqual({ sessions: 1500, compacted: 1000 });
    vi.advanceTimersByTime(100);
    expect(store.stats()).toEqual({ sessions: 1500, compacted: 1500 });
  });

  // Agents may keep any object as a reply's metadata (a database row with a bigint id, say), and
  // the in-memory store never had to write it as JSON before compaction.
  it('leaves a session it cannot write as JSON as it is, and still compacts the others', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    const odd: MessageItem = { ...userMessage('row 42'), metadata: { rowId: 42n } };
    let kept = true;
    try {
      store.append('odd', [odd], { turn: turnRecord(odd.id) });
    } catch {
      // Refusing such a message when it is written is as good as keeping it.
      kept = false;
    }
    finishTurn(store, 'plain');
    // The timer must not throw (in a real process, an uncaught error in a timer ends it).
    expect(() => vi.advanceTimersByTime(15_000)).not.toThrow();
    expect(store.stats().compacted).toBe(1);
    expect(() => store.compactSessions()).not.toThrow();
    if (kept) expect(store.read('odd')).toEqual([odd]);
    expect(store.read('plain').map((message) => message.content)).toEqual(['hello plain']);
  });

  it('leaves a session alone whose messages would not read back, so that it stays readable', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    // Appended without the types (a hand-written store client): an assistant message without its toolCallId.
    const broken = { id: 'm-broken', role: 'assistant', content: 'hi', createdAt: new Date().toISOString() };
    store.append('broken', [broken as MessageItem], { turn: turnRecord('m-broken') });
    vi.advanceTimersByTime(15_000);
    expect(store.stats()).toEqual({ sessions: 1, compacted: 0 });
    expect(store.read('broken')).toEqual([broken]);
  });

  it('stops compacting once closed', () => {
    vi.useFakeTimers();
    const store = open({ compactAfterSeconds: 10 });
    finishTurn(store, 's');
    store.close();
    vi.advanceTimersByTime(60_000);
    expect(store.stats().compacted).toBe(0);
    expect(store.read('s')).toHaveLength(1);
  });
});

describe('InMemorySessionStore compactAfterSeconds option', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s with a ConfigurationError', (value) => {
    expect(() => new InMemorySessionStore({ compactAfterSeconds: value })).toThrow(ConfigurationError);
    expect(() => new InMemorySessionStore({ compactAfterSeconds: value })).toThrow(/compactAfterSeconds/);
  });

  it('accepts a fraction of a second and false', () => {
    for (const compactAfterSeconds of [0.5, false] as const) {
      const store = new InMemorySessionStore({ compactAfterSeconds });
      store.close();
    }
  });
});
