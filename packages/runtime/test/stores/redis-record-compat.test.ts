import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRedisStores } from '../../src/redis.js';
import { historyProblems } from '../../src/testing/history-check.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();

/**
 * A session exactly as the previous version (before turns had states) wrote
 * it: `{ v: 1 }` message and turn records, turn records written only with the
 * turn's answer, statuses `completed` and `failed`.
 */
const PREVIOUS_VERSION_SESSION = {
  messages: [
    '{"v":1,"message":{"id":"msg_old1","role":"user","content":"echo: hello","createdAt":"2026-11-01T10:00:00.000Z"}}',
    '{"v":1,"message":{"id":"msg_old2","role":"tool","name":"echo","toolCallId":"call_old1","content":"echo: hello","status":"ok","createdAt":"2026-11-01T10:00:00.010Z"}}',
    '{"v":1,"message":{"id":"msg_old3","role":"assistant","content":"echo: hello","toolCallId":"call_old2","createdAt":"2026-11-01T10:00:00.011Z"}}',
    '{"v":1,"message":{"id":"msg_old4","role":"user","content":"loop","createdAt":"2026-11-01T10:01:00.000Z"}}',
    '{"v":1,"message":{"id":"msg_old5","role":"assistant","content":"Sorry, something went wrong","toolCallId":"error_turn_old2","createdAt":"2026-11-01T10:01:00.020Z","metadata":{"status":"error","errorCode":"max_hops_exceeded"}}}',
  ],
  turns: [
    '{"v":1,"turn":{"turnId":"turn_old1","userMessageId":"msg_old1","status":"completed","startedAt":"2026-11-01T10:00:00.000Z","endedAt":"2026-11-01T10:00:00.011Z","steps":[{"hop":0,"kind":"call","calls":[{"toolCallId":"call_old1","agent":"echo","reason":"named"}],"decidedAt":"2026-11-01T10:00:00.001Z","durationMs":0.1},{"hop":1,"kind":"answer","calls":[{"toolCallId":"call_old2","agent":"route_to_user"}],"decidedAt":"2026-11-01T10:00:00.011Z","durationMs":0.05}]}}',
    '{"v":1,"turn":{"turnId":"turn_old2","userMessageId":"msg_old4","status":"failed","startedAt":"2026-11-01T10:01:00.000Z","endedAt":"2026-11-01T10:01:00.020Z","steps":[],"error":{"code":"max_hops_exceeded","message":"Sorry, something went wrong"}}}',
  ],
};

/** The previous version's turn record schema: what an older replica accepts when it lists turns. */
const PreviousTurnEnvelope = z.object({
  v: z.literal(1),
  turn: z.object({
    turnId: z.string().min(1),
    userMessageId: z.string(),
    status: z.enum(['completed', 'failed']),
    startedAt: z.string(),
    endedAt: z.string(),
    steps: z.array(
      z.object({
        hop: z.number().int().nonnegative(),
        kind: z.enum(['call', 'fan-out', 'answer', 'error']),
        calls: z.array(z.object({ toolCallId: z.string(), agent: z.string() })),
        decidedAt: z.string(),
        durationMs: z.number(),
      }),
    ),
  }),
});

describe('sessions written by the previous version', () => {
  it('still read, and take new turns; with compactRecords off, finished turns stay readable by the previous version', async () => {
    const keyPrefix = redis.prefix();
    const base = `${keyPrefix}session:{old-session}`;
    await redis.admin.rpush(`${base}:messages`, ...PREVIOUS_VERSION_SESSION.messages);
    await redis.admin.rpush(`${base}:turns`, ...PREVIOUS_VERSION_SESSION.turns);
    const { app } = createApp({
      agents: [echoAgent()],
      ...createRedisStores(REDIS_URL, { keyPrefix, compactRecords: false }),
    });
    try {
      const before = (await (await app.request('/v1/sessions/old-session')).json()) as {
        messages: unknown[];
        turns: Array<{ turnId: string; status: string }>;
        pendingApprovals: unknown[];
        activeTurn?: unknown;
      };
      expect(before.messages).toHaveLength(5);
      expect(before.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
        ['turn_old1', 'completed'],
        ['turn_old2', 'failed'],
      ]);
      expect(before.pendingApprovals).toEqual([]);
      expect(before.activeTurn).toBeUndefined();

      // The window the orchestrator sees includes the old messages; the new turn follows them.
      const result = await app.chat({ message: 'echo: again', sessionId: 'old-session' });
      expect(result).toMatchObject({ status: 'completed', reply: 'echo: again' });
      const messages = await app.sessions.read('old-session');
      const turns = await app.sessions.listTurns('old-session');
      expect(messages).toHaveLength(8);
      expect(historyProblems(messages, turns)).toEqual([]);

      // A replica of the previous version listing this session still reads every turn, the new one included.
      const raw = await redis.admin.lrange(`${base}:turns`, 0, -1);
      expect(raw).toHaveLength(3);
      for (const record of raw) expect(PreviousTurnEnvelope.safeParse(JSON.parse(record)).success).toBe(true);
      const rawMessages = await redis.admin.lrange(`${base}:messages`, 0, -1);
      for (const record of rawMessages) expect(record).toMatch(/^\{"v":1,"message":\{/);
    } finally {
      await app.close();
    }
  });

  it('by default appends compact records after the old ones, and reads the mix as one history', async () => {
    const keyPrefix = redis.prefix();
    const base = `${keyPrefix}session:{old-session}`;
    await redis.admin.rpush(`${base}:messages`, ...PREVIOUS_VERSION_SESSION.messages);
    await redis.admin.rpush(`${base}:turns`, ...PREVIOUS_VERSION_SESSION.turns);
    const { app } = createApp({ agents: [echoAgent()], ...createRedisStores(REDIS_URL, { keyPrefix }) });
    try {
      const result = await app.chat({ message: 'echo: again', sessionId: 'old-session' });
      expect(result).toMatchObject({ status: 'completed', reply: 'echo: again' });
      const rawMessages = await redis.admin.lrange(`${base}:messages`, 0, -1);
      expect(rawMessages.slice(0, 5)).toEqual(PREVIOUS_VERSION_SESSION.messages);
      for (const record of rawMessages.slice(5)) expect(record).toMatch(/^\[3,"[uta]",/);
      const rawTurns = await redis.admin.lrange(`${base}:turns`, 0, -1);
      expect(rawTurns[2]).toMatch(/^\[3,"turn_/);
      // The three new records take fewer bytes than the three first old ones, which hold the same kind of turn.
      const newChars = rawMessages.slice(5).join('').length;
      const oldChars = rawMessages.slice(0, 3).join('').length;
      expect(newChars).toBeLessThan(oldChars * 0.75);

      const session = (await (await app.request('/v1/sessions/old-session')).json()) as {
        messages: Array<{ content: string; role: string }>;
        turns: Array<{ turnId: string; status: string; steps: unknown[] }>;
      };
      expect(session.messages.map((message) => message.content)).toEqual([
        'echo: hello',
        'echo: hello',
        'echo: hello',
        'loop',
        'Sorry, something went wrong',
        'echo: again',
        'echo: again',
        'echo: again',
      ]);
      expect(session.turns.map((turn) => turn.status)).toEqual(['completed', 'failed', 'completed']);
      expect(session.turns[2]?.steps).toHaveLength(2);
      const messages = await app.sessions.read('old-session');
      const turns = await app.sessions.listTurns('old-session');
      expect(historyProblems(messages, turns)).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('writes a turn that has not ended as a v2 record, with its status first', async () => {
    const keyPrefix = redis.prefix();
    const { app } = createApp({
      agents: [defineSlowEcho()],
      ...createRedisStores(REDIS_URL, { keyPrefix }),
    });
    try {
      const running = app.chat({ message: 'slow', sessionId: 'running' });
      let record: string | null = null;
      for (let tries = 0; tries < 100 && !record; tries += 1) {
        record = await redis.admin.lindex(`${keyPrefix}session:{running}:turns`, -1);
        if (!record) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(record).toMatch(/^\{"v":2,"s":"running","turn":\{/);
      expect(PreviousTurnEnvelope.safeParse(JSON.parse(record ?? '')).success).toBe(false);
      await running;
      // Once ended, the record is compact.
      expect(await redis.admin.lindex(`${keyPrefix}session:{running}:turns`, -1)).toMatch(
        /^\[3,"turn_[^"]+",(?:"msg_[^"]+"|\["msg",\d+,"[^"]+"\]),"completed",/,
      );
    } finally {
      await app.close();
    }
  });
});

function defineSlowEcho() {
  const agent = echoAgent();
  return {
    ...agent,
    run: async (message: string) => new Promise<string>((resolve) => setTimeout(() => resolve(message), 100)),
  };
}
