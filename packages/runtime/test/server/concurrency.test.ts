import type { MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { readSessionHistory } from '../../src/testing/session-history.js';
import { buildApp, createApp, postJson, sleep, slowAgent } from '../support/app-fixtures.js';

/** Echoes after a random pause of 0–3 ms, so that concurrent turns really interleave. */
const jitteryEcho = defineAgent({
  name: 'echo',
  description: 'Repeats the message after a short random pause',
  run: async (message, { signal }) => {
    await sleep(Math.floor(Math.random() * 4), signal);
    return `echo: ${message}`;
  },
});

const chatBody = async (response: Response) =>
  (await response.json()) as { reply: string; sessionId: string };

async function waitUntil(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

describe('concurrent requests', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('100 concurrent requests on one session all succeed and leave 100 contiguous turns', async () => {
    ({ app } = createApp({ agents: [jitteryEcho], sessionWaitMs: 30_000 }));
    const served = app;
    const texts = Array.from({ length: 100 }, (_, index) => `message ${index}`);
    const responses = await Promise.all(
      texts.map((message) => served.request('/v1/chat', postJson({ message, sessionId: 'crowded' }))),
    );
    expect(responses.map((response) => response.status)).toEqual(texts.map(() => 200));
    const replies = await Promise.all(responses.map(chatBody));
    expect(replies.map((body) => body.reply)).toEqual(texts.map((text) => `echo: ${text}`));

    const history = await readSessionHistory((path) => served.request(path), 'crowded');
    expect(history.messages).toHaveLength(300);
    expect(history.turns).toHaveLength(100);
    const seen: string[] = [];
    for (let index = 0; index < 300; index += 3) {
      const [user, tool, answer] = history.messages.slice(index, index + 3);
      expect([user?.role, tool?.role, answer?.role]).toEqual(['user', 'tool', 'assistant']);
      expect(tool?.content).toBe(`echo: ${user?.content}`);
      expect(answer?.content).toBe(`echo: ${user?.content}`);
      expect(history.turns[index / 3]?.userMessageId).toBe(user?.id);
      seen.push(user!.content);
    }
    expect(seen.sort()).toEqual([...texts].sort());
    expect(new Set(history.messages.map((message) => message.id)).size).toBe(300);
  });

  it('100 concurrent requests on 100 sessions over a real port all succeed', async () => {
    const built = buildApp({ agents: [jitteryEcho] });
    app = built.app;
    const server = await built.app.start(built.orchestrator, { port: 0 });
    const sessions = Array.from({ length: 100 }, (_, index) => `session-${index}`);
    const responses = await Promise.all(
      sessions.map((sessionId) =>
        fetch(`${server.url}/v1/chat`, postJson({ message: `hi from ${sessionId}`, sessionId })),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(sessions.map(() => 200));
    const bodies = await Promise.all(responses.map(chatBody));
    expect(bodies.map((body) => [body.sessionId, body.reply])).toEqual(
      sessions.map((sessionId) => [sessionId, `echo: hi from ${sessionId}`]),
    );
    for (const sessionId of ['session-0', 'session-57', 'session-99']) {
      const history = (await (await fetch(`${server.url}/v1/sessions/${sessionId}`)).json()) as {
        messages: MessageItem[];
      };
      expect(history.messages.map((message) => message.content)).toEqual([
        `hi from ${sessionId}`,
        `echo: hi from ${sessionId}`,
        `echo: hi from ${sessionId}`,
      ]);
    }
    await server.close();
  });

  it('serves 20 concurrent turns without a MaxListenersExceededWarning in the logs', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      ({ app } = createApp({ agents: [slowAgent('slow', 20)], sessionWaitMs: 5_000 }));
      const served = app;
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          served.request(
            '/v1/chat',
            postJson({ message: 'slow: hi', sessionId: index % 2 ? 'shared' : `own-${index}` }),
          ),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
      await sleep(10);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
  });
});

describe('a second message on a busy session', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('waits for the running turn and then gets its own answer', async () => {
    const slow = slowAgent('slow', 150);
    ({ app } = createApp({ agents: [slow], sessionWaitMs: 5_000 }));
    const served = app;
    const send = (message: string) =>
      served.request('/v1/chat', postJson({ message: `slow: ${message}`, sessionId: 'queue' }));

    const first = send('first');
    await waitUntil(() => slow.runs.length === 1);
    const startedAt = performance.now();
    const second = await send('second');
    const waited = performance.now() - startedAt;

    expect((await first).status).toBe(200);
    expect(second.status).toBe(200);
    expect((await chatBody(second)).reply).toBe('slow done: second');
    // It could only start once the first turn had finished.
    expect(slow.runs[1]!.startedAt).toBeGreaterThanOrEqual(slow.runs[0]!.endedAt!);
    expect(waited).toBeGreaterThanOrEqual(100);
  });

  it.each([
    ['JSON', {}],
    ['a stream', { accept: 'text/event-stream' }],
  ])(
    'gets a 409 with a clear reason (%s) once sessionWaitMs is exceeded, and nothing is stored',
    async (_how, headers) => {
      const slow = slowAgent('slow', 400);
      ({ app } = createApp({ agents: [slow], sessionWaitMs: 50 }));
      const served = app;

      const first = served.request('/v1/chat', postJson({ message: 'slow: first', sessionId: 'contested' }));
      await waitUntil(() => slow.runs.length === 1);
      const startedAt = performance.now();
      const second = await served.request(
        '/v1/chat',
        postJson({ message: 'slow: second', sessionId: 'contested' }, headers),
      );
      const waited = performance.now() - startedAt;
      // It gave up while the first turn was still running, not once it was done.
      const firstStillRunning = slow.runs[0]?.endedAt === undefined;

      expect(second.status).toBe(409);
      expect(second.headers.get('content-type')).toContain('application/json');
      const { error } = (await second.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('session_busy');
      expect(error.message).toMatch(/is busy with another turn/);
      expect(error.message).toContain("Session 'contested'");
      expect(waited).toBeGreaterThanOrEqual(45);
      expect(firstStillRunning).toBe(true);

      expect((await first).status).toBe(200);
      const history = (await (await served.request('/v1/sessions/contested')).json()) as {
        messages: MessageItem[];
      };
      expect(history.messages.map((message) => message.content)).toEqual([
        'slow: first',
        'slow done: first',
        'slow done: first',
      ]);
    },
  );
});
