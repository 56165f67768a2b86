import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { InMemoryTurnQueue } from '../../src/background/in-memory-turn-queue.js';
import type { QueuedTurn, QueueWork, TurnQueue } from '../../src/background/turn-queue.js';
import { apiKeys } from '../../src/index.js';
import { createApp, echoAgent, postJson, readEventStream, sleep } from '../support/app-fixtures.js';

/** An agent that waits for the test to let each run through, counting its runs. */
function gatedAgent(name = 'gated') {
  const gates: Array<() => void> = [];
  const runs: string[] = [];
  const agent = defineAgent({
    name,
    description: 'Answers once let through',
    async run(message) {
      runs.push(message);
      await new Promise<void>((resolve) => gates.push(resolve));
      return `done: ${message}`;
    },
  });
  return { agent, runs, release: () => gates.shift()?.() };
}

/** An app whose background turns run one at a time, on a gated agent the test lets through. */
function gatedApp(options: Omit<Parameters<typeof createApp>[0], 'agents' | 'background'> = {}) {
  const gated = gatedAgent();
  const { app } = createApp({
    ...options,
    agents: [gated.agent],
    background: { queue: new InMemoryTurnQueue({ concurrency: 1 }) },
  });
  return { app, gated };
}

type View = { status: string; reply?: string; turnId: string; sessionId: string; error?: { code: string } };

async function statusOf(
  app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> },
  sessionId: string,
  turnId: string,
  headers?: Record<string, string>,
) {
  const response = await app.request(`/v1/sessions/${sessionId}/turns/${turnId}`, { headers });
  return { code: response.status, body: (await response.json()) as View };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await sleep(10);
  }
  throw new Error('condition never met');
}

describe('background turns, in memory', () => {
  it('answers 202 at once, reports queued then completed, and keeps the events to replay', async () => {
    const { app, gated } = gatedApp({ handler: undefined });
    const first = await app.request('/v1/chat', postJson({ message: 'gated: one', background: true }));
    expect(first.status).toBe(202);
    const receipt = (await first.json()) as {
      sessionId: string;
      turnId: string;
      status: string;
      events: string;
    };
    expect(receipt.status).toBe('queued');
    expect(first.headers.get('location')).toBe(`/v1/sessions/${receipt.sessionId}/turns/${receipt.turnId}`);
    // A second one waits behind the first (one at a time): queued while the first runs.
    const second = (await (
      await app.request('/v1/chat', postJson({ message: 'gated: two', background: true }))
    ).json()) as View;
    await until(
      () => statusOf(app, receipt.sessionId, receipt.turnId),
      (view) => view.body.status === 'running',
    );
    expect((await statusOf(app, second.sessionId, second.turnId)).body.status).toBe('queued');
    gated.release();
    const done = await until(
      () => statusOf(app, receipt.sessionId, receipt.turnId),
      (view) => view.body.status === 'completed',
    );
    expect(done.body.reply).toBe('done: one');
    await until(
      () => Promise.resolve(gated.runs.length),
      (runs) => runs === 2,
    );
    gated.release();
    await until(
      () => statusOf(app, second.sessionId, second.turnId),
      (view) => view.body.status === 'completed',
    );
    const events = await readEventStream(await app.request(receipt.events));
    expect(events.map((event) => event.event).at(-1)).toBe('turn-end');
    expect(
      events.some((event) => event.event === 'message' && JSON.stringify(event.data).includes('done: one')),
    ).toBe(true);
    await app.close();
  });

  it('cancels a queued turn, which then never runs', async () => {
    const { app, gated } = gatedApp();
    const first = await app.chat({ message: 'gated: first', background: true });
    const second = await app.chat({ message: 'gated: second', background: true });
    expect(second.status).toBe('queued');
    await until(
      () => Promise.resolve(gated.runs.length),
      (runs) => runs === 1,
    );
    const cancel = await app.request(`/v1/sessions/${second.sessionId}/turns/${second.turnId}/cancel`, {
      method: 'POST',
    });
    expect(cancel.status).toBe(200);
    expect(((await cancel.json()) as View).status).toBe('interrupted');
    gated.release();
    await until(
      () => statusOf(app, first.sessionId, first.turnId),
      (view) => view.body.status === 'completed',
    );
    expect((await statusOf(app, second.sessionId, second.turnId)).body.status).toBe('interrupted');
    await app.close();
    expect(gated.runs).toEqual(['first']);
  });

  it('queues a retried request (same Idempotency-Key) once', async () => {
    const { app } = createApp({ agents: [echoAgent()] });
    const send = () =>
      app.request(
        '/v1/chat',
        postJson({ message: 'echo: once', background: true }, { 'idempotency-key': 'bg-1' }),
      );
    const [a, b] = await Promise.all([send(), send()]);
    const [one, two] = (await Promise.all([a.json(), b.json()])) as View[];
    expect(one?.turnId).toBe(two?.turnId);
    expect(one?.sessionId).toBe(two?.sessionId);
    await until(
      () => statusOf(app, one!.sessionId, one!.turnId),
      (view) => view.body.status === 'completed',
    );
    const history = (await (await app.request(`/v1/sessions/${one!.sessionId}`)).json()) as {
      turns: unknown[];
    };
    expect(history.turns).toHaveLength(1);
    await app.close();
  });

  it('stores a job run twice (its replica died) once: the second run finds the first turn', async () => {
    const counted = { runs: 0 };
    const agent = defineAgent({
      name: 'echo',
      description: 'Counts',
      run: (message) => {
        counted.runs += 1;
        return message;
      },
    });
    const twice = new TwiceQueue();
    const { app } = createApp({ agents: [agent], background: { queue: twice } });
    const receipt = await app.chat({ message: 'echo: hello', background: true });
    await twice.settled();
    expect(twice.ran).toBe(2);
    expect(counted.runs).toBe(1);
    const history = (await (await app.request(`/v1/sessions/${receipt.sessionId}`)).json()) as {
      turns: unknown[];
      messages: Array<{ role: string }>;
    };
    expect(history.turns).toHaveLength(1);
    expect(history.messages.filter((message) => message.role === 'assistant')).toHaveLength(1);
    await app.close();
  });

  it('refuses with 409 at once under `reject` when the session is busy, and keeps the policy for queued turns', async () => {
    const gated = gatedAgent();
    const { app } = createApp({ agents: [gated.agent] });
    const running = await app.chat({ message: 'gated: long', background: true });
    await until(
      () => Promise.resolve(gated.runs.length),
      (runs) => runs === 1,
    );
    const refused = await app.request(
      '/v1/chat',
      postJson({
        message: 'gated: more',
        sessionId: running.sessionId,
        background: true,
        concurrency: 'reject',
      }),
    );
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('session_busy');
    // Under `wait`, a queued turn of a busy session waits for it, then runs.
    const waiting = await app.chat({
      message: 'gated: after',
      sessionId: running.sessionId,
      background: true,
    });
    // While the session is busy it stays queued (and cancellable), however often a replica looks.
    await sleep(50);
    expect((await statusOf(app, waiting.sessionId, waiting.turnId)).body.status).toBe('queued');
    gated.release();
    await until(
      () => Promise.resolve(gated.runs.length),
      (runs) => runs === 2,
    );
    gated.release();
    const after = await until(
      () => statusOf(app, waiting.sessionId, waiting.turnId),
      (view) => view.body.status === 'completed',
    );
    expect(after.body.reply).toBe('done: after');
    await app.close();
  });

  it('says what is wrong with a background request, and changes nothing', async () => {
    const { app } = createApp({ agents: [echoAgent()] });
    const cases: Array<[unknown, string]> = [
      [{ message: 'echo: x', background: true, stream: true }, 'no stream'],
      [{ message: 'echo: x', callbackUrl: 'https://example.test/hook' }, 'background: true'],
      [
        { message: 'echo: x', background: true, callbackUrl: 'https://example.test/hook' },
        'sends no callbacks',
      ],
    ];
    for (const [body, says] of cases) {
      const response = await app.request('/v1/chat', postJson(body));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(says);
    }
    expect(await (await app.request('/v1/background-turns')).json()).toEqual({ data: [] });
    await app.close();
    const { app: off } = createApp({ agents: [echoAgent()], background: false });
    const refused = await off.request('/v1/chat', postJson({ message: 'echo: x', background: true }));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('background_unavailable');
    await off.close();
  });

  it("keeps a user-bound key to its own user's background turns", async () => {
    const auth = apiKeys({
      keys: {
        'sk-ann-0123456789abcdef': { name: 'ann', tenantId: 't1', userId: 'ann' },
        'sk-bob-0123456789abcdef': { name: 'bob', tenantId: 't1', userId: 'bob' },
      },
    });
    const { app } = createApp({ agents: [echoAgent()], auth });
    const ann = { authorization: 'Bearer sk-ann-0123456789abcdef' };
    const bob = { authorization: 'Bearer sk-bob-0123456789abcdef' };
    const receipt = (await (
      await app.request('/v1/chat', postJson({ message: 'echo: mine', background: true }, ann))
    ).json()) as View;
    await until(
      () => statusOf(app, receipt.sessionId, receipt.turnId, ann),
      (view) => view.body.status === 'completed',
    );
    expect((await statusOf(app, receipt.sessionId, receipt.turnId, bob)).code).toBe(404);
    const listed = (await (await app.request('/v1/background-turns', { headers: bob })).json()) as {
      data: View[];
    };
    expect(listed.data).toEqual([]);
    const own = (await (
      await app.request('/v1/background-turns?status=completed', { headers: ann })
    ).json()) as { data: View[] };
    expect(own.data.map((turn) => turn.turnId)).toEqual([receipt.turnId]);
    // The latest turn of its session lists its answer too.
    expect(own.data[0]?.reply).toBe('echo: mine');
    await app.close();
  });
});

describe('background turns in code', () => {
  it('are read, listed and cancelled with the tenant and user as options', async () => {
    const { app, gated } = gatedApp();
    const ann = { tenantId: 't1', userId: 'ann' };
    const first = await app.chat({ message: 'gated: first', background: true, ...ann });
    const second = await app.chat({ message: 'gated: second', background: true, ...ann });
    await until(
      () => Promise.resolve(gated.runs.length),
      (runs) => runs === 1,
    );
    const background = app.background;
    if (!background) throw new Error('the app has background turns');
    expect((await background.status(second.sessionId, second.turnId, ann))?.status).toBe('queued');
    // Another tenant, another user of the tenant, or no tenant at all: not theirs.
    expect(await background.status(second.sessionId, second.turnId, { tenantId: 't2' })).toBeUndefined();
    expect(
      await background.status(second.sessionId, second.turnId, { tenantId: 't1', userId: 'bob' }),
    ).toBeUndefined();
    expect(await background.status(second.sessionId, second.turnId)).toBeUndefined();
    expect((await background.list({ tenantId: 't1' })).map((turn) => turn.turnId)).toEqual([
      second.turnId,
      first.turnId,
    ]);
    expect(await background.list({ tenantId: 't1', userId: 'bob' })).toEqual([]);
    expect(await background.list()).toEqual([]);
    expect(
      await background.cancelQueued(second.sessionId, second.turnId, { tenantId: 't1', userId: 'bob' }),
    ).toBeUndefined();
    expect((await background.cancelQueued(second.sessionId, second.turnId, ann))?.status).toBe('interrupted');
    // The deprecated positional form answers the same until the next minor.
    expect((await background.status(second.sessionId, second.turnId, 't1', 'ann'))?.status).toBe(
      'interrupted',
    );
    expect(await background.status(second.sessionId, second.turnId, 't1', 'bob')).toBeUndefined();
    expect((await background.list('t1', 'ann')).map((turn) => turn.turnId)).toEqual([
      second.turnId,
      first.turnId,
    ]);
    gated.release();
    await app.close();
    expect(gated.runs).toEqual(['first']);
  });
});

describe("a queued turn's stream", () => {
  it('opens at once and streams the turn from its start once it runs; a cancelled one ends interrupted', async () => {
    const { app, gated } = gatedApp();
    await app.chat({ message: 'gated: first', background: true });
    const second = (await (
      await app.request('/v1/chat', postJson({ message: 'gated: second', background: true }))
    ).json()) as {
      events: string;
      sessionId: string;
      turnId: string;
    };
    const third = await app.chat({ message: 'gated: third', background: true });
    const following = app.request(second.events);
    const cancelledStream = app.request(`/v1/sessions/${third.sessionId}/turns/${third.turnId}/events`);
    expect(
      (await app.request(`/v1/sessions/${third.sessionId}/turns/${third.turnId}/cancel`, { method: 'POST' }))
        .status,
    ).toBe(200);
    const cancelled = await readEventStream(await cancelledStream);
    expect(cancelled.map((event) => [event.event, (event.data as { status?: string }).status])).toEqual([
      ['turn-end', 'interrupted'],
    ]);
    gated.release();
    await until(
      () => Promise.resolve(gated.runs.length),
      (runs) => runs === 2,
    );
    gated.release();
    const events = await readEventStream(await following);
    expect(events[0]?.event).toBe('turn-start');
    expect(events.at(-1)?.event).toBe('turn-end');
    expect(JSON.stringify(events)).toContain('done: second');
    // An unknown turn is still a 404.
    expect((await app.request(`/v1/sessions/${second.sessionId}/turns/turn_nope/events`)).status).toBe(404);
    await app.close();
  });
});

/** A queue that runs every job twice in a row, as BullMQ may after a replica died holding it. */
class TwiceQueue implements TurnQueue {
  readonly durable = false;
  ran = 0;
  #work?: QueueWork;
  readonly #pending: Promise<unknown>[] = [];
  async add(job: QueuedTurn): Promise<void> {
    const work = this.#work;
    if (!work) throw new Error('not started');
    this.#pending.push(
      (async () => {
        await work(job);
        this.ran += 1;
        await work(job);
        this.ran += 1;
      })(),
    );
  }
  async remove(): Promise<void> {}
  async schedule(): Promise<void> {}
  async unschedule(): Promise<void> {}
  start(work: QueueWork): void {
    this.#work = work;
  }
  async stop(): Promise<void> {
    await this.settled();
  }
  async close(): Promise<void> {}
  async settled(): Promise<void> {
    await Promise.all(this.#pending);
  }
}
