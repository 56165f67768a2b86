import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { ServerHandle } from '../../src/app.js';
import { apiKeys } from '../../src/index.js';
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

/** An agent that says a first part, then waits for the test to open its gate before the second. */
function gatedAgent() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const agent = defineAgent({
    name: 'gated',
    description: 'Answers in two parts, the second when let through',
    async *run() {
      yield 'first part. ';
      await gate;
      yield 'second part.';
    },
  });
  return { agent, open };
}

const ids = (events: readonly ReceivedEvent[]) => events.map((event) => event.id);
const types = (events: readonly ReceivedEvent[]) => events.map((event) => event.event);

async function turnStatus(server: ServerHandle, sessionId: string, headers?: Record<string, string>) {
  const response = await fetch(`${server.url}/v1/sessions/${sessionId}`, { headers });
  const body = (await response.json()) as { turns: Array<{ turnId: string; status: string }> };
  return body.turns[0]?.status;
}

describe("a turn's events, rejoined", () => {
  let server: ServerHandle | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('numbers every event uniquely and in increasing order, the same on the stream and in the replay', async () => {
    const { app, orchestrator } = buildApp({ agents: [echoAgent()] });
    server = await app.start(orchestrator, { port: 0 });
    const streamed = await readEventStream(
      await fetch(`${server.url}/v1/chat`, postJson({ message: 'echo: hi', sessionId: 'ids', stream: true })),
    );
    expect(types(streamed)).toEqual([
      'turn-start',
      'route',
      'agent-start',
      'agent-end',
      'route',
      'message',
      'turn-end',
    ]);
    const positions = streamed.map((event) => parseEventId(event.id ?? ''));
    expect(positions.every((position) => position !== undefined)).toBe(true);
    expect(new Set(ids(streamed)).size).toBe(streamed.length);
    expect(positions.map((position) => position?.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(streamed.every((event) => event.data.eventId === event.id)).toBe(true);
    // The turn-start says where to rejoin.
    const start = streamed[0]?.data as unknown as { events: string; turnId: string };
    expect(start.events).toBe(`/v1/sessions/ids/turns/${start.turnId}/events`);

    const replayed = await readEventStream(await fetch(`${server.url}${start.events}`));
    expect(ids(replayed)).toEqual(ids(streamed));
    // As the engine builds them: the id a field of every event from the start, and the last.
    expect(replayed.map(({ data }) => Object.keys(data).at(-1))).toEqual(replayed.map(() => 'eventId'));
    expect(replayed.map((event) => event.data)).toEqual(
      streamed.map(({ data }) => {
        const { events: _, ...rest } = data as unknown as Record<string, unknown>;
        return rest;
      }),
    );
  });

  it('gives a client cut mid-turn exactly the events it missed, in order, then turn-end; the turn was never cancelled', async () => {
    const gated = gatedAgent();
    const { app, orchestrator } = buildApp({ agents: [gated.agent, echoAgent()] });
    server = await app.start(orchestrator, { port: 0 });
    const cut = new AbortController();
    const response = await fetch(`${server.url}/v1/chat`, {
      ...postJson({ message: 'gated: go', sessionId: 'cut', stream: true }),
      signal: cut.signal,
    });
    const seen = await readEventsUntil(response, (events) =>
      events.some((event) => event.event === 'agent-delta'),
    );
    cut.abort();
    await sleep(50);
    gated.open();

    const last = seen.at(-1) as ReceivedEvent;
    const turnId = last.data.turnId;
    const rest = await readEventStream(
      await fetch(`${server.url}/v1/sessions/cut/turns/${turnId}/events`, {
        headers: { 'last-event-id': last.id as string },
      }),
    );
    expect(types(rest)).toEqual(['agent-delta', 'agent-end', 'route', 'message', 'turn-end']);
    const all = [...seen, ...rest];
    expect(new Set(ids(all)).size).toBe(all.length);
    expect(all.map((event) => parseEventId(event.id as string)?.seq)).toEqual(
      all.map((_, index) => index + 1),
    );
    expect(rest.at(-1)?.data).toMatchObject({ type: 'turn-end', status: 'completed' });
    expect(await turnStatus(server, 'cut')).toBe('completed');

    // ?after= is the same as Last-Event-ID.
    const again = await readEventStream(
      await fetch(`${server.url}/v1/sessions/cut/turns/${turnId}/events?after=${last.id}`),
    );
    expect(ids(again)).toEqual(ids(rest));
  });

  it('follows a running turn live from its start until turn-end', async () => {
    const gated = gatedAgent();
    const { app, orchestrator } = buildApp({ agents: [gated.agent, echoAgent()] });
    server = await app.start(orchestrator, { port: 0 });
    const chat = fetch(`${server.url}/v1/chat`, postJson({ message: 'gated: go', sessionId: 'live' }));
    let turnId: string | undefined;
    while (turnId === undefined) {
      await sleep(10);
      const response = await fetch(`${server.url}/v1/sessions/live`);
      if (response.status === 200)
        turnId = ((await response.json()) as { activeTurn?: { turnId: string } }).activeTurn?.turnId;
    }
    const following = fetch(`${server.url}/v1/sessions/live/turns/${turnId}/events`).then(readEventStream);
    await sleep(50);
    gated.open();
    const [events, reply] = await Promise.all([following, chat.then((response) => response.json())]);
    expect(types(events)).toEqual([
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
    expect((reply as { reply: string }).reply).toBe('first part. second part.');
  });

  it('numbers a resumed part after the part before it, and a rejoin after the pause gets the rest', async () => {
    const refunds = defineAgent({
      name: 'refunds',
      description: 'Refunds an order, with a person’s approval',
      requiresApproval: () => ({ required: true, risk: 'high', reason: 'every refund' }),
      run: () => 'refunded',
    });
    const { app, orchestrator } = buildApp({ agents: [refunds, echoAgent()] });
    server = await app.start(orchestrator, { port: 0 });
    const paused = (await (
      await fetch(`${server.url}/v1/chat`, postJson({ message: 'refunds: order 7', sessionId: 'parts' }))
    ).json()) as { turnId: string; status: string; approvals: Array<{ id: string }> };
    expect(paused.status).toBe('awaiting_approval');
    const path = `${server.url}/v1/sessions/parts/turns/${paused.turnId}/events`;
    const first = await readEventStream(await fetch(path));
    expect(first.at(-1)?.data).toMatchObject({ type: 'turn-end', status: 'awaiting_approval' });
    await sleep(5);
    const approval = paused.approvals[0]?.id as string;
    expect(
      (
        await fetch(
          `${server.url}/v1/sessions/parts/approvals/${approval}`,
          postJson({ decision: 'approve' }),
        )
      ).status,
    ).toBe(200);
    const rest = await readEventStream(
      await fetch(path, { headers: { 'last-event-id': first.at(-1)?.id as string } }),
    );
    expect(rest[0]?.data).toMatchObject({ type: 'turn-start', resumed: 'approval' });
    expect(rest.at(-1)?.data).toMatchObject({ type: 'turn-end', status: 'completed' });
    const firstPart = parseEventId(first[0]?.id as string)?.part as number;
    const secondPart = parseEventId(rest[0]?.id as string)?.part as number;
    expect(secondPart).toBeGreaterThan(firstPart);
    expect(rest.map((event) => parseEventId(event.id as string)?.seq)).toEqual(
      rest.map((_, index) => index + 1),
    );
    // The whole turn replays as both parts in order.
    const whole = await readEventStream(await fetch(path));
    expect(ids(whole)).toEqual([...ids(first), ...ids(rest)]);
  });

  it('refuses ids that are not event ids, or that the turn does not have, and unknown turns', async () => {
    const { app, orchestrator } = buildApp({ agents: [echoAgent()] });
    server = await app.start(orchestrator, { port: 0 });
    const done = (await (
      await fetch(`${server.url}/v1/chat`, postJson({ message: 'echo: hi', sessionId: 'bad-ids' }))
    ).json()) as { turnId: string };
    const path = `${server.url}/v1/sessions/bad-ids/turns/${done.turnId}/events`;
    for (const bad of ['-1', '0', '$', '0-0', '+', 'abc', '1-2-3']) {
      const response = await fetch(path, { headers: { 'last-event-id': bad } });
      expect(response.status, bad).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_event_id');
    }
    const unknown = await fetch(`${path}?after=1-5`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('event_not_found');
    expect((await fetch(`${server.url}/v1/sessions/bad-ids/turns/turn_nope/events`)).status).toBe(404);
    expect((await fetch(`${server.url}/v1/sessions/nobody/turns/${done.turnId}/events`)).status).toBe(404);
  });

  it("cancels the turn when a client asking onDisconnect: 'cancel' goes away", async () => {
    const gated = gatedAgent();
    const { app, orchestrator } = buildApp({ agents: [gated.agent, echoAgent()] });
    server = await app.start(orchestrator, { port: 0 });
    const cut = new AbortController();
    const response = await fetch(`${server.url}/v1/chat`, {
      ...postJson({ message: 'gated: go', sessionId: 'cancel-me', stream: true, onDisconnect: 'cancel' }),
      signal: cut.signal,
    });
    await readEventsUntil(response, (events) => events.some((event) => event.event === 'agent-delta'));
    cut.abort();
    let status: string | undefined;
    for (let tries = 0; tries < 200 && status !== 'interrupted'; tries++) {
      await sleep(10);
      status = await turnStatus(server, 'cancel-me');
    }
    expect(status).toBe('interrupted');
  });

  it("keeps another user's and another tenant's turn events out of reach", async () => {
    const keys = {
      'sk-alice-0123456789abcdef': { tenantId: 'acme', userId: 'alice' },
      'sk-bob-0123456789abcdefgh': { tenantId: 'acme', userId: 'bob' },
      'sk-other-0123456789abcdef': { tenantId: 'globex' },
    };
    const { app, orchestrator } = buildApp({ agents: [echoAgent()], auth: apiKeys({ keys }) });
    server = await app.start(orchestrator, { port: 0 });
    const as = (key: string) => ({ authorization: `Bearer ${key}` });
    const done = (await (
      await fetch(
        `${server.url}/v1/chat`,
        postJson({ message: 'echo: mine', sessionId: 'alices' }, as('sk-alice-0123456789abcdef')),
      )
    ).json()) as { turnId: string };
    const path = `${server.url}/v1/sessions/alices/turns/${done.turnId}/events`;
    const own = await readEventStream(await fetch(path, { headers: as('sk-alice-0123456789abcdef') }));
    expect(own.at(-1)?.event).toBe('turn-end');
    expect((await fetch(path, { headers: as('sk-bob-0123456789abcdefgh') })).status).toBe(404);
    expect((await fetch(path, { headers: as('sk-other-0123456789abcdef') })).status).toBe(404);
    expect((await fetch(path)).status).toBe(401);
  });
});
