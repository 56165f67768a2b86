import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { historyProblems } from '@switchboard/runtime/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { lapse, settlesBefore } from '../../../../packages/runtime/test/support/settles-before.js';
import { chat, type Replica, readSession, replyPid, useReplicas } from './support/replicas.js';

const redis = useRedis();
const replicas = useReplicas();

const SESSIONS = 10;
const REQUESTS = 300;
/** The default lease: a crashed replica's sessions must be served again long before it runs out. */
const LEASE_TTL_MS = 30_000;

let servers: Replica[];
let sessionPrefix: string;
let keyPrefix: string;

/** The lease keys left under the replicas' prefix. */
async function leaseKeys(): Promise<string[]> {
  return (await redis.keys(keyPrefix)).filter((key) => key.endsWith(':lease'));
}

beforeAll(async () => {
  sessionPrefix = `replicas-${randomBytes(4).toString('hex')}`;
  keyPrefix = redis.prefix();
  servers = await replicas.start(3, {
    REDIS_URL,
    KEY_PREFIX: keyPrefix,
    ORCHESTRATOR: 'keyword',
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    SESSION_WAIT_MS: '60000',
  });
}, 30_000);

describe('three replicas sharing one Redis', () => {
  it('keep every turn of 300 concurrent requests over 10 sessions, each turn contiguous, none duplicated', async () => {
    const sessionOf = (index: number) => `${sessionPrefix}-s${index % SESSIONS}`;
    const outcomes = await Promise.all(
      Array.from({ length: REQUESTS }, (_, index) =>
        chat(
          servers[index % servers.length]!.url,
          { message: `echo request ${index}`, sessionId: sessionOf(index) },
          { timeoutMs: 40_000 },
        ),
      ),
    );

    const failures = outcomes.filter(
      (outcome) => outcome.status !== 200 || outcome.body.status !== 'completed',
    );
    expect(failures.map((failure) => failure.body)).toEqual([]);
    // Each request was answered by the replica it was sent to, and all three took part.
    outcomes.forEach((outcome, index) => {
      expect(outcome.body.reply).toBe(`echo: echo request ${index} (pid ${servers[index % 3]!.pid})`);
    });
    expect(new Set(outcomes.map((outcome) => replyPid(outcome.body.reply))).size).toBe(3);

    const allIds = new Set<string>();
    for (let session = 0; session < SESSIONS; session += 1) {
      // Any replica serves any session's history.
      const { messages, turns } = await readSession(servers[session % 3]!.url, sessionOf(session));
      expect(messages).toHaveLength(3 * (REQUESTS / SESSIONS));
      expect(turns).toHaveLength(REQUESTS / SESSIONS);
      const userTexts: string[] = [];
      for (let turn = 0; turn < turns.length; turn += 1) {
        const [user, tool, assistant] = messages.slice(3 * turn, 3 * turn + 3);
        expect([user?.role, tool?.role, assistant?.role]).toEqual(['user', 'tool', 'assistant']);
        // The three messages belong to the same turn: the agent echoed this user message.
        expect(tool?.content).toMatch(new RegExp(`^echo: ${user?.content} \\(pid \\d+\\)$`));
        expect(assistant?.content).toBe(tool?.content);
        expect(turns[turn]?.userMessageId).toBe(user?.id);
        expect(turns[turn]?.status).toBe('completed');
        userTexts.push(user?.content ?? '');
      }
      const expected = Array.from(
        { length: REQUESTS / SESSIONS },
        (_, k) => `echo request ${session + k * SESSIONS}`,
      );
      expect(userTexts.sort()).toEqual(expected.sort());
      for (const message of messages) allIds.add(message.id);
    }
    expect(allIds.size).toBe(3 * REQUESTS);
    // Every turn gave its lease back: once the load is over, no session is held.
    expect(await leaseKeys()).toEqual([]);
  }, 45_000);

  // Its timeout lets the lease run out: the race below, not the timeout, tells a takeover that waited for it.
  it('recovers the turn of a replica killed mid-turn on another replica, once its liveness key lapsed (not its lease), before the next message', {
    timeout: LEASE_TTL_MS + 15_000,
  }, async () => {
    const [victim, survivor] = [servers[0]!, servers[1]!];
    const sessionId = `${sessionPrefix}-crash`;
    const interrupted = chat(victim.url, { message: 'slow 1500', sessionId }).catch(
      (error: unknown) => error,
    );

    // The turn is under way once its user message is stored.
    const deadline = Date.now() + 5_000;
    for (;;) {
      const stored = await readSession(survivor.url, sessionId).catch(() => undefined);
      if (stored?.messages.some((message) => message.content === 'slow 1500')) break;
      if (Date.now() > deadline) throw new Error('the slow turn never started');
      await delay(20);
    }
    await delay(300);
    victim.child.kill('SIGKILL');
    const killedAt = performance.now();
    const leaseLapses = lapse(await redis.admin.pttl(`${keyPrefix}session:{${sessionId}}:lease`));
    expect(await interrupted).toBeInstanceOf(Error);
    // Killed mid-agent: the turn is stored as running, with no reply and no answer.
    const left = await readSession(survivor.url, sessionId);
    expect(left.turns.map((turn) => turn.status)).toEqual(['running']);
    expect(left.activeTurn).toMatchObject({ status: 'running' });

    // The survivor took the session over once the dead replica's liveness key was gone, before the 30 s
    // lease ran out (it would wait for that: SESSION_WAIT_MS is longer). The answer also waited for the
    // recovered turn's slow call (1.5 s).
    const next = await settlesBefore(
      chat(survivor.url, { message: 'echo after the crash', sessionId }),
      leaseLapses,
      "the dead replica's lease running out",
    );
    const answeredAfter = performance.now() - killedAt;
    expect(next.status).toBe(200);
    expect(next.body.reply).toBe(`echo: echo after the crash (pid ${survivor.pid})`);
    console.info(
      `taken over ${Math.round(answeredAfter - 1_500)} ms after the kill (answered after ${Math.round(answeredAfter)} ms)`,
    );

    // The survivor resumed the killed turn first (its call ran again, at least once), then answered.
    const { messages, turns } = await readSession(survivor.url, sessionId);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'slow 1500'],
      ['tool', `echo: slow 1500 (pid ${survivor.pid})`],
      ['assistant', `echo: slow 1500 (pid ${survivor.pid})`],
      ['user', 'echo after the crash'],
      ['tool', next.body.reply],
      ['assistant', next.body.reply],
    ]);
    expect(turns.map((turn) => [turn.status, turn.recoveries])).toEqual([
      ['completed', 1],
      ['completed', undefined],
    ]);
    expect(await leaseKeys()).toEqual([]);
  });
});
