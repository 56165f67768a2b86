import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { ServerHandle } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { parseEventId } from '../../src/turns/event-ids.js';
import {
  buildApp,
  echoAgent,
  postJson,
  type ReceivedEvent,
  readEventStream,
  readEventsUntil,
  sleep,
} from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();

/** Says a first part, then waits for the gate (shared by both replicas' copies of the agent) before the second. */
function gatedAgent(gate: Promise<void>) {
  return defineAgent({
    name: 'gated',
    description: 'Answers in two parts, the second when let through',
    async *run() {
      yield 'first part. ';
      await gate;
      yield 'second part.';
    },
  });
}

describe('a turn streamed by one replica, rejoined on another (Redis)', () => {
  const servers: ServerHandle[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function replicas(prefix: string, gate: Promise<void>) {
    for (let index = 0; index < 2; index++) {
      const { app, orchestrator } = buildApp({
        agents: [gatedAgent(gate), echoAgent()],
        ...createRedisStores(REDIS_URL, { keyPrefix: prefix }),
      });
      servers.push(await app.start(orchestrator, { port: 0 }));
    }
    return servers as [ServerHandle, ServerHandle];
  }

  it('sends a client cut on replica A exactly the events it missed, from replica B, then turn-end', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const [a, b] = await replicas(redis.prefix(), gate);
    const cut = new AbortController();
    const response = await fetch(`${a.url}/v1/chat`, {
      ...postJson({ message: 'gated: go', sessionId: 'roaming', stream: true }),
      signal: cut.signal,
    });
    const seen = await readEventsUntil(response, (events) =>
      events.some((event) => event.event === 'agent-delta'),
    );
    cut.abort();
    await sleep(50);
    open();
    const last = seen.at(-1) as ReceivedEvent;
    const rest = await readEventStream(
      await fetch(`${b.url}/v1/sessions/roaming/turns/${last.data.turnId}/events`, {
        headers: { 'last-event-id': last.id as string },
      }),
    );
    expect(rest.map((event) => event.event)).toEqual([
      'agent-delta',
      'agent-end',
      'route',
      'message',
      'turn-end',
    ]);
    const all = [...seen, ...rest];
    expect(all.map((event) => parseEventId(event.id as string)?.seq)).toEqual(
      all.map((_, index) => index + 1),
    );
    expect(rest.at(-1)?.data).toMatchObject({ type: 'turn-end', status: 'completed' });

    // Replayed whole from B once it is over: the same ids A streamed, and the same events.
    const replay = await readEventStream(
      await fetch(`${b.url}/v1/sessions/roaming/turns/${last.data.turnId}/events`),
    );
    expect(replay.map((event) => event.id)).toEqual(all.map((event) => event.id));
  });

  it('lets replica B follow live a turn replica A runs', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const [a, b] = await replicas(redis.prefix(), gate);
    const chat = fetch(`${a.url}/v1/chat`, postJson({ message: 'gated: go', sessionId: 'watched' }));
    let turnId: string | undefined;
    while (turnId === undefined) {
      await sleep(10);
      const session = await fetch(`${b.url}/v1/sessions/watched`);
      if (session.status === 200)
        turnId = ((await session.json()) as { activeTurn?: { turnId: string } }).activeTurn?.turnId;
    }
    const following = fetch(`${b.url}/v1/sessions/watched/turns/${turnId}/events`).then(readEventStream);
    await sleep(100);
    open();
    const [events] = await Promise.all([following, chat]);
    expect(events.map((event) => event.event)).toEqual([
      'turn-start',
      'route',
      'agent-start',
      'agent-delta',
      'agent-delta',
      'agent-end',
      'route',
      'message',
      'turn-end',
    ]);
  });
});
