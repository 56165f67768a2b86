import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConfigurationError } from '@switchboard/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TurnEvent } from '../../src/engine/events.js';
import { RedisTurnEventLog } from '../../src/redis.js';
import { InMemoryTurnEventLog } from '../../src/stores/in-memory-turn-event-log.js';
import type { TurnEventLog, TurnLogKey } from '../../src/stores/turn-event-log.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const redis = useRedis();

/** `count` delta events of part `part`, numbered from `from`. */
function events(key: TurnLogKey, part: number, count: number, from = 1): TurnEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    type: 'answer-delta' as const,
    sessionId: key.sessionId,
    turnId: key.turnId,
    messageId: 'msg_1',
    delta: `chunk ${from + index}`,
    eventId: `${part}-${from + index}`,
  }));
}

/**
 * One event of every type, each with every field it may have, as the engine
 * builds them (fields in its order), numbered in part `part`; the part ends
 * with `turn-end` (`endOfDialog`), as a turn or a paused part does.
 */
function everyEvent(key: TurnLogKey, part: number): TurnEvent[] {
  const ids = { sessionId: key.sessionId, turnId: key.turnId };
  const call = { toolCallId: 'call_1', agent: 'billing' };
  const bodies = [
    {
      type: 'turn-start',
      ...ids,
      messageId: 'msg_u',
      message: 'refund me',
      resumed: 'approval',
      endOfMessage: true,
    },
    {
      type: 'route',
      ...ids,
      messageId: 'evt_1',
      step: {
        hop: 0,
        kind: 'call',
        calls: [{ ...call, message: 'refund me' }],
        decidedAt: '2026-11-29T09:00:00.000Z',
      },
      endOfMessage: true,
    },
    {
      type: 'agent-start',
      ...ids,
      messageId: 'msg_a',
      ...call,
      message: 'refund me',
      parentToolCallId: 'call_0',
    },
    { type: 'agent-delta', ...ids, messageId: 'msg_a', ...call, delta: 'Refun', parentToolCallId: 'call_0' },
    {
      type: 'agent-end',
      ...ids,
      messageId: 'msg_a',
      ...call,
      status: 'ok',
      content: 'Refunded',
      endOfMessage: true,
      parentToolCallId: 'call_0',
    },
    {
      type: 'approval-request',
      ...ids,
      messageId: 'evt_2',
      approvalId: 'apr_1',
      ...call,
      message: 'refund 30 EUR',
      reason: 'money moves',
      risk: 'high',
      expiresAt: null,
      endOfMessage: true,
    },
    { type: 'answer-delta', ...ids, messageId: 'msg_b', delta: 'Done', reset: true },
    { type: 'message', ...ids, messageId: 'msg_b', content: 'Done: refunded.', endOfMessage: true },
    {
      type: 'error',
      ...ids,
      messageId: 'evt_3',
      code: 'agent_failed',
      message: 'it failed',
      endOfMessage: true,
    },
    // An event that names another session (never built so, but kept as it came).
    { type: 'message', sessionId: 'ses_other', turnId: key.turnId, messageId: 'msg_c', content: 'elsewhere' },
    {
      type: 'turn-end',
      ...ids,
      messageId: 'evt_4',
      status: 'completed',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      endOfMessage: true,
      endOfDialog: true,
    },
  ];
  return bodies.map((body, index) => ({ ...body, eventId: `${part}-${index + 1}` }) as TurnEvent);
}

/** Expects `replay` to hold `written` as a client reads them: the same JSON, field for field and in order. */
function expectSameJson(replay: Awaited<ReturnType<TurnEventLog['replay']>>, written: readonly TurnEvent[]) {
  expect(replay.kind === 'events' && replay.events.map((event) => JSON.stringify(event))).toEqual(
    written.map((event) => JSON.stringify(event)),
  );
}

/** Waits until the log has flushed what was appended (Redis sends batches in the background). */
async function settled(log: TurnEventLog, key: TurnLogKey, lastId: string): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const replay = await log.replay(key, undefined);
    if (replay.kind === 'events' && replay.events.at(-1)?.eventId === lastId) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the log never held ${lastId}`);
}

const kinds: Array<[string, (options: { maxEventsPerTurn?: number; retentionMs?: number }) => TurnEventLog]> =
  [
    ['in memory', (options) => new InMemoryTurnEventLog(options)],
    ['on Redis', (options) => new RedisTurnEventLog(REDIS_URL, { keyPrefix: redis.prefix(), ...options })],
  ];

describe.each(kinds)('the turn event log %s', (_name, create) => {
  const logs: TurnEventLog[] = [];
  const make = (options: { maxEventsPerTurn?: number; retentionMs?: number } = {}) => {
    const log = create(options);
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close?.()));
  });
  const key: TurnLogKey = { tenantId: 'acme', sessionId: 'ses_1', turnId: 'turn_1' };

  it('replays every event in order, or those after an id, across parts', async () => {
    const log = make();
    const written = [...events(key, 1000, 3), ...events(key, 2000, 2)];
    for (const event of written) log.append(key, event);
    await settled(log, key, '2000-2');
    expect(await log.replay(key, undefined)).toEqual({ kind: 'events', events: written });
    expectSameJson(await log.replay(key, undefined), written);
    expect(await log.replay(key, '1000-2')).toEqual({
      kind: 'events',
      events: written.slice(2),
      from: written[1],
    });
    expect(await log.replay(key, '2000-2')).toEqual({ kind: 'events', events: [], from: written[4] });
  });

  it('replays the events of ended parts, of every type, field for field, and finds ids in any part', async () => {
    const log = make();
    const ended = [...everyEvent(key, 1000), ...everyEvent(key, 2000)];
    const running = events(key, 3000, 2);
    for (const event of [...ended, ...running]) log.append(key, event);
    await settled(log, key, '3000-2');
    const written = [...ended, ...running];
    expectSameJson(await log.replay(key, undefined), written);
    expect(await log.replay(key, '1000-11')).toEqual({
      kind: 'events',
      events: written.slice(11),
      from: written[10],
    });
    expect(await log.replay(key, '2000-5')).toEqual({
      kind: 'events',
      events: written.slice(16),
      from: written[15],
    });
    expect(await log.replay(key, '2000-12')).toEqual({ kind: 'unknown' });
    // A follower rejoining in an ended part, or in the running one.
    const signal = new AbortController().signal;
    expect(await log.waitAfter(key, '1000-3', 10_000, signal)).toEqual(written.slice(3));
    expect(await log.waitAfter(key, '3000-1', 10_000, signal)).toEqual(written.slice(-1));
    // The next part continues after the ended ones.
    for (const event of events(key, 4000, 1)) log.append(key, event);
    await settled(log, key, '4000-1');
    expect(await log.replay(key, '3000-2')).toEqual({
      kind: 'events',
      events: events(key, 4000, 1),
      from: running[1],
    });
  });

  it('tells an id it never held, and a turn it has nothing of, from an empty answer', async () => {
    const log = make();
    for (const event of events(key, 1000, 2)) log.append(key, event);
    await settled(log, key, '1000-2');
    expect(await log.replay(key, '1000-3')).toEqual({ kind: 'unknown' });
    expect(await log.replay(key, '999-1')).toEqual({ kind: 'unknown' });
    expect(await log.replay({ ...key, turnId: 'turn_other' }, undefined)).toEqual({ kind: 'missing' });
    // Another tenant's turn of the same ids is another log.
    expect(await log.replay({ ...key, tenantId: 'globex' }, undefined)).toEqual({ kind: 'missing' });
  });

  it('keeps about maxEventsPerTurn events and says an id older than those is expired', async () => {
    const log = make({ maxEventsPerTurn: 100 });
    const written = events(key, 1000, 1_000);
    // As a long turn writes them: a batch at a time.
    for (let chunk = 0; chunk < 10; chunk++) {
      for (const event of written.slice(chunk * 100, chunk * 100 + 100)) log.append(key, event);
      await settled(log, key, `1000-${chunk * 100 + 100}`);
    }
    const replay = await log.replay(key, undefined);
    expect(replay.kind).toBe('events');
    const kept = replay.kind === 'events' ? replay.events : [];
    // Redis trims whole nodes (`MAXLEN ~`): about the bound, never all.
    expect(kept.length).toBeGreaterThanOrEqual(100);
    expect(kept.length).toBeLessThan(400);
    expect(kept).toEqual(written.slice(-kept.length));
    expect(await log.replay(key, '1000-1')).toEqual({ kind: 'expired' });
  });

  it('wakes a waiting follower with the events that come after its id', async () => {
    const log = make();
    for (const event of events(key, 1000, 2)) log.append(key, event);
    await settled(log, key, '1000-2');
    const waiting = log.waitAfter(key, '1000-2', 10_000, new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 30));
    for (const event of events(key, 1000, 2, 3)) log.append(key, event);
    const woken = await waiting;
    expect(woken.map((event) => event.eventId)[0]).toBe('1000-3');
    // Already there: answered at once. Nothing more: an empty answer once the time is up.
    expect((await log.waitAfter(key, '1000-1', 10_000, new AbortController().signal)).length).toBeGreaterThan(
      0,
    );
    await settled(log, key, '1000-4');
    expect(await log.waitAfter(key, '1000-4', 50, new AbortController().signal)).toEqual([]);
  });

  it('lets a follower that leaves stop waiting at once', async () => {
    const log = make();
    const leaving = new AbortController();
    const waiting = log.waitAfter(key, undefined, 60_000, leaving.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    leaving.abort();
    expect(await waiting).toEqual([]);
  });
});

describe('the Redis turn event log', () => {
  it('sends the events of one tick, ending with turn-end, in one script call', async () => {
    const target = new URL(REDIS_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const log = new RedisTurnEventLog(`redis://127.0.0.1:${proxy.port}`, { keyPrefix: redis.prefix() });
    try {
      const key: TurnLogKey = { tenantId: undefined, sessionId: 'ses_batch', turnId: 'turn_batch' };
      // Warm-up: connects and loads the script.
      log.append(key, { ...events(key, 1, 1)[0], eventId: '1-1' } as TurnEvent);
      await log.idle();
      proxy.resetCount();
      for (const event of events(key, 2, 99)) log.append(key, event);
      log.append(key, {
        type: 'turn-end',
        sessionId: key.sessionId,
        turnId: key.turnId,
        messageId: 'evt_end',
        status: 'completed',
        eventId: '2-100',
      });
      await log.idle();
      expect(proxy.sent.match(/:events:/g)?.length).toBe(1);
      const replay = await log.replay(key, '1-1');
      expect(replay.kind === 'events' && replay.events.length).toBe(100);
    } finally {
      await log.close();
      await proxy.stop();
    }
  });

  it('keeps a finished short turn in about the bytes its events take, not a 4 KB stream node', async () => {
    const prefix = redis.prefix();
    const log = new RedisTurnEventLog(REDIS_URL, { keyPrefix: prefix });
    const key: TurnLogKey = { tenantId: undefined, sessionId: 'ses_small', turnId: 'turn_small' };
    const written: TurnEvent[] = [
      ...events(key, 1000, 6),
      {
        type: 'turn-end',
        sessionId: key.sessionId,
        turnId: key.turnId,
        messageId: 'evt_end',
        status: 'completed',
        endOfMessage: true,
        endOfDialog: true,
        eventId: '1000-7',
      },
    ];
    for (const event of written) log.append(key, event);
    await log.idle();
    const [stream] = await redis.keys(prefix);
    const bytes = Number(await redis.admin.call('MEMORY', 'USAGE', stream as string, 'SAMPLES', '0'));
    const eventBytes = written.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
    // Redis starts every stream node at 4 KB: a finished turn keeps what it uses (with the key's own overhead).
    expect(bytes).toBeLessThan(eventBytes + 1_000);
    expect(await log.replay(key, undefined)).toEqual({ kind: 'events', events: written });
    // A paused turn's part ended: the next part goes on in the same stream.
    log.append(key, { ...(events(key, 2000, 1)[0] as TurnEvent) });
    await log.idle();
    const replay = await log.replay(key, '1000-7');
    expect(replay.kind === 'events' && replay.events.map((event) => event.eventId)).toEqual(['2000-1']);
    await log.close();
  });

  it('replays an event built in another field order, or naming another session, as it was appended', async () => {
    const log = new RedisTurnEventLog(REDIS_URL, { keyPrefix: redis.prefix() });
    const key: TurnLogKey = { tenantId: undefined, sessionId: 'ses_odd', turnId: 'turn_odd' };
    const written = [
      {
        eventId: '1000-1',
        messageId: 'msg_1',
        type: 'message',
        content: 'hi',
        turnId: key.turnId,
        sessionId: key.sessionId,
      },
      {
        type: 'message',
        sessionId: 'ses_other',
        turnId: key.turnId,
        messageId: 'msg_2',
        content: '"quoted"',
        eventId: '1000-2',
      },
    ] as TurnEvent[];
    for (const event of written) log.append(key, event);
    await settled(log, key, '1000-2');
    expect(await log.replay(key, undefined)).toEqual({ kind: 'events', events: written });
    await log.close();
  });

  it('still wakes a follower waiting on a turn with the events that end it', async () => {
    const log = new RedisTurnEventLog(REDIS_URL, { keyPrefix: redis.prefix() });
    const key: TurnLogKey = { tenantId: undefined, sessionId: 'ses_wait', turnId: 'turn_wait' };
    for (const event of events(key, 1000, 2)) log.append(key, event);
    await settled(log, key, '1000-2');
    const waiting = log.waitAfter(key, '1000-2', 10_000, new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 30));
    log.append(key, {
      type: 'turn-end',
      sessionId: key.sessionId,
      turnId: key.turnId,
      messageId: 'evt_end',
      status: 'completed',
      eventId: '1000-3',
    });
    expect((await waiting).map((event) => [event.type, event.eventId])).toEqual([['turn-end', '1000-3']]);
    await log.close();
  });

  it('keeps a turn under its session hash tag, with an expiry', async () => {
    const prefix = redis.prefix();
    const log = new RedisTurnEventLog(REDIS_URL, { keyPrefix: prefix, retentionMs: 60_000 });
    const key: TurnLogKey = { tenantId: 'acme', sessionId: 'ses_1', turnId: 'turn_1' };
    for (const event of events(key, 1000, 3)) log.append(key, event);
    await settled(log, key, '1000-3');
    const keys = await redis.keys(prefix);
    expect(keys).toEqual([`${prefix}session:{acme%2Fses_1}:events:turn_1`]);
    const ttl = await redis.admin.pttl(keys[0] as string);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await log.close();
  });
});

/** A full collection on demand, as `node --expose-gc` gives one. */
function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('the in-memory turn event log', () => {
  it('keeps at most maxEvents in all, dropping the oldest turns first', async () => {
    const log = new InMemoryTurnEventLog({ maxEvents: 20 });
    const keys = Array.from(
      { length: 10 },
      (_, index): TurnLogKey => ({
        tenantId: undefined,
        sessionId: `ses_${index}`,
        turnId: `turn_${index}`,
      }),
    );
    for (const key of keys) for (const event of events(key, 1000, 5)) log.append(key, event);
    const kinds = await Promise.all(keys.map(async (key) => (await log.replay(key, undefined)).kind));
    // The newest four turns (20 events) are kept whole; the older ones are gone.
    expect(kinds).toEqual([...Array(6).fill('missing'), ...Array(4).fill('events')]);
    for (let round = 0; round < 3; round++) {
      for (const key of keys) for (const event of events(key, 2000 + round, 5)) log.append(key, event);
    }
    const last = await log.replay(keys[9] as TurnLogKey, undefined);
    expect(last.kind === 'events' && last.events.length).toBe(5);
  });

  it('keeps each turn of interleaved turns apart, and follows one among the others', async () => {
    const log = new InMemoryTurnEventLog({ maxEvents: 100 });
    const keys = ['a', 'b', 'c'].map(
      (name): TurnLogKey => ({ tenantId: undefined, sessionId: `ses_${name}`, turnId: `turn_${name}` }),
    );
    const written = keys.map((key) => events(key, 1000, 6));
    for (let index = 0; index < 6; index++)
      for (const [at, key] of keys.entries()) {
        log.append(key, written[at]?.[index] as TurnEvent);
      }
    for (const [at, key] of keys.entries()) {
      expect(await log.replay({ ...key }, undefined)).toEqual({ kind: 'events', events: written[at] });
    }
    const b = keys[1] as TurnLogKey;
    const following = log.waitAfter({ ...b }, '1000-6', 10_000, new AbortController().signal);
    // Another turn's events do not answer the follower; its own turn's next one does.
    for (const event of events(keys[0] as TurnLogKey, 1000, 1, 7)) log.append(keys[0] as TurnLogKey, event);
    for (const event of events(b, 1000, 1, 7)) log.append(b, event);
    expect(await following).toEqual(events(b, 1000, 1, 7));
  });

  it('overwrites the oldest events first, and says an id older than what a turn still shows is expired', async () => {
    const log = new InMemoryTurnEventLog({ maxEvents: 10 });
    const old: TurnLogKey = { tenantId: undefined, sessionId: 'ses_old', turnId: 'turn_old' };
    const recent: TurnLogKey = { tenantId: undefined, sessionId: 'ses_new', turnId: 'turn_new' };
    const oldEvents = events(old, 1000, 6);
    for (const event of oldEvents) log.append(old, event);
    for (const event of events(recent, 1000, 7)) log.append(recent, event);
    // 13 events in 10 slots: the old turn's first three are gone, its last three are still shown.
    expect(await log.replay(old, undefined)).toEqual({ kind: 'events', events: oldEvents.slice(3) });
    expect(await log.replay(old, '1000-2')).toEqual({ kind: 'expired' });
    expect(await log.replay(old, '1000-4')).toEqual({
      kind: 'events',
      events: oldEvents.slice(4),
      from: oldEvents[3],
    });
    expect(await log.replay(old, '1000-9')).toEqual({ kind: 'unknown' });
  });

  it('clears events once they are older than retentionMs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const log = new InMemoryTurnEventLog({ retentionMs: 60_000 });
      const early: TurnLogKey = { tenantId: undefined, sessionId: 'ses_early', turnId: 'turn_early' };
      const late: TurnLogKey = { tenantId: undefined, sessionId: 'ses_late', turnId: 'turn_late' };
      for (const event of events(early, 1000, 3)) log.append(early, event);
      vi.advanceTimersByTime(30_000);
      for (const event of events(late, 2000, 3)) log.append(late, event);
      vi.advanceTimersByTime(30_001);
      expect(await log.replay(early, undefined)).toEqual({ kind: 'missing' });
      expect(await log.replay(late, undefined)).toEqual({ kind: 'events', events: events(late, 2000, 3) });
      vi.advanceTimersByTime(30_000);
      expect(await log.replay(late, undefined)).toEqual({ kind: 'missing' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('takes memory as events come, not for its whole ring up front, and refuses a size that is not a count', async () => {
    const collect = fullCollection();
    collect();
    const before = process.memoryUsage().heapUsed;
    // Twenty logs of a million slots each: allocated up front, their slots alone would be 160 MB of heap.
    const logs = Array.from({ length: 20 }, () => new InMemoryTurnEventLog({ maxEvents: 1_000_000 }));
    collect();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(10_000_000);
    expect(logs).toHaveLength(20);
    for (const maxEvents of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new InMemoryTurnEventLog({ maxEvents })).toThrow(ConfigurationError);
    }
    expect(() => new InMemoryTurnEventLog({ retentionMs: 0 })).toThrow(/retentionMs must be above 0/);
    expect(() => new InMemoryTurnEventLog({ maxEventsPerTurn: Number.NaN })).toThrow(ConfigurationError);
    // No bound per turn or in time is a choice, not a mistake.
    expect(
      () =>
        new InMemoryTurnEventLog({
          maxEventsPerTurn: Number.POSITIVE_INFINITY,
          retentionMs: Number.POSITIVE_INFINITY,
        }),
    ).not.toThrow();
  });

  it("lets go of a dropped turn's events at once, not when its queue next compacts", async () => {
    const collect = fullCollection();
    const log = new InMemoryTurnEventLog({ maxEvents: 10 });
    const first: TurnLogKey = { tenantId: undefined, sessionId: 'ses_first', turnId: 'turn_first' };
    let dropped: WeakRef<TurnEvent> | undefined;
    for (const event of events(first, 1000, 5)) {
      dropped ??= new WeakRef(event);
      log.append(first, event);
    }
    // Later turns push the first one out of the log.
    for (let index = 0; index < 5; index++) {
      const key = { tenantId: undefined, sessionId: `ses_${index}`, turnId: `turn_${index}` };
      for (const event of events(key, 1000, 5)) log.append(key, event);
    }
    expect((await log.replay(first, undefined)).kind).toBe('missing');
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(dropped?.deref()).toBeUndefined();
  });
});
