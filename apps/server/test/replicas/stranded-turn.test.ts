import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyProblems } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, useRedis } from '../../../../packages/runtime/test/support/redis.js';
import { eventually } from './support/load.js';
import { chat, type Replica, readAgentLog, readSession, replyPid, useReplicas } from './support/replicas.js';

const redis = useRedis();
afterAll(() => rmSync(logDirectory, { recursive: true, force: true }));
const replicas = useReplicas();

let logDirectory: string;
let agentLog: string;
let a: Replica;
let b: Replica;

beforeAll(async () => {
  logDirectory = mkdtempSync(join(tmpdir(), 'switchboard-stranded-'));
  agentLog = join(logDirectory, 'agents.log');
  [a, b] = (await replicas.start(2, {
    REDIS_URL,
    KEY_PREFIX: redis.prefix(),
    ORCHESTRATOR: 'keyword',
    AGENT_LOG: agentLog,
    SWEEP_INTERVAL_MS: '500',
    SWEEP_AFTER_MS: '500',
  })) as [Replica, Replica];
}, 30_000);

interface StreamedEvent {
  type: string;
  eventId?: string;
  status?: string;
  resumed?: string;
}

/**
 * Follows a turn's stream from its start: `seen` resolves once `until` holds for the events so far,
 * `all` with every event once the stream ends.
 */
function followTurn(
  url: string,
  sessionId: string,
  turnId: string,
  until: (events: StreamedEvent[]) => boolean,
) {
  const events: StreamedEvent[] = [];
  let reached!: () => void;
  const seen = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const all = (async () => {
    const response = await fetch(`${url}/v1/sessions/${sessionId}/turns/${turnId}/events`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const data = text
          .slice(0, end)
          .split('\n')
          .find((line) => line.startsWith('data: '));
        text = text.slice(end + 2);
        if (data) events.push(JSON.parse(data.slice('data: '.length)) as StreamedEvent);
      }
      if (until(events)) reached();
    }
    reached();
    return events;
  })();
  return { seen, all };
}

describe('a turn whose replica dies, with nobody sending another message', () => {
  it('is completed by the other replica’s sweeper, and a client following its stream sees the rest and turn-end', async () => {
    const tag = randomBytes(4).toString('hex');
    const sessionId = `stranded-${tag}`;
    const message = `slow 3000 for ${tag}`;
    const asked = chat(a.url, { message, sessionId }).catch((error: unknown) => error);
    const slowRuns = () => readAgentLog(agentLog).filter((run) => run.message === message);
    const started = await eventually(() => slowRuns().some((run) => run.pid === a.pid), 10_000);
    expect(started, `${JSON.stringify(slowRuns())} ${String(await Promise.race([asked, 'pending']))}`).toBe(
      true,
    );
    const { activeTurn } = await readSession(b.url, sessionId);
    const turnId = activeTurn?.turnId as string;
    expect(activeTurn?.status).toBe('running');
    // A client follows the turn's stream on B, from its start, while A still runs it; A dies once the
    // client has seen the agent start (A's events reach the log up to 50 ms late: a replica killed sooner
    // takes its last ones with it).
    const following = followTurn(b.url, sessionId, turnId, (events) =>
      events.some((event) => event.type === 'agent-start'),
    );
    await following.seen;
    a.child.kill('SIGKILL');
    expect(await asked).toBeInstanceOf(Error);

    // No further message: B's sweeper takes the dead replica's lease over and finishes the turn.
    let status: string | undefined;
    for (let tries = 0; tries < 600 && status !== 'completed'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await readSession(b.url, sessionId)).turns[0]?.status;
    }
    expect(status).toBe('completed');
    const { messages, turns } = await readSession(b.url, sessionId);
    expect(historyProblems(messages, turns)).toEqual([]);
    expect(turns[0]).toMatchObject({ turnId, status: 'completed', recoveries: 1 });
    expect(replyPid(messages.at(-1)?.content)).toBe(b.pid);
    expect(
      slowRuns()
        .filter((run) => run.event === 'end')
        .map((run) => run.pid),
    ).toEqual([b.pid]);

    const events = await following.all;
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('turn-start');
    expect(events.filter((event) => event.type === 'turn-start').map((event) => event.resumed)).toEqual([
      undefined,
      'recovery',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', status: 'completed' });
    const ids = events.map((event) => event.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  }, 60_000);
});
