import { type MessageItem, StoreUnavailableError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { AppendOptions, SessionStore } from '../../src/stores/session-store.js';
import { createApp, echoAgent, postJson, readEventStream, STACK_LINE } from '../support/app-fixtures.js';

const SECRET = 'redis://admin:hunter2@10.0.0.9:6379';

/** An in-memory session store whose `append` fails with `failure()` while `failing` is set, once the agent replied. */
class FlakySessionStore extends InMemorySessionStore {
  failure: (() => Error) | undefined;

  override async append(
    sessionId: string,
    messages: readonly MessageItem[],
    options?: AppendOptions,
  ): Promise<void> {
    if (this.failure && messages.some((message) => message.role === 'tool')) throw this.failure();
    return super.append(sessionId, messages, options);
  }
}

describe('a session store failing in the middle of a turn', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  const setUp = () => {
    const store = new FlakySessionStore();
    const logged: unknown[] = [];
    app = createApp({
      agents: [echoAgent()],
      sessionStore: store as SessionStore,
      logger: (error) => logged.push(error),
    }).app;
    return { app, store, logged };
  };

  it('answers a 500 JSON error without internals or a stack, logs the error, and serves the session afterwards', async () => {
    const { app, store, logged } = setUp();
    store.failure = () => new Error(`connection to ${SECRET} reset`);
    const response = await app.request('/v1/chat', postJson({ message: 'hi', sessionId: 'flaky' }));

    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal_error', message: 'Internal server error' } });
    expect(text).not.toContain('hunter2');
    expect(text).not.toMatch(STACK_LINE);
    expect(logged).toHaveLength(1);
    expect(String(logged[0])).toContain('hunter2');

    // The lease was released: the same session works again once the store recovers.
    store.failure = undefined;
    const retry = await app.request('/v1/chat', postJson({ message: 'again', sessionId: 'flaky' }));
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as { reply: string }).reply).toBe('echo: again');
  });

  it("answers a 503 that says the message may have been stored, without the store's own text", async () => {
    const { app, store } = setUp();
    store.failure = () =>
      new StoreUnavailableError({ message: `Redis at ${SECRET} did not answer within 500 ms` });
    const response = await app.request('/v1/chat', postJson({ message: 'hi', sessionId: 'unknown-outcome' }));
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      code: 'store_unavailable',
      outcome: 'unknown',
      turnId: expect.any(String),
    });
    expect(body.error.message).toContain('Idempotency-Key');
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(JSON.stringify(body)).not.toContain('10.0.0.9');
  });

  it('ends a stream with an error event that still carries sessionId, turnId and messageId, and ends the dialog', async () => {
    const { app, store } = setUp();
    store.failure = () => new Error(`connection to ${SECRET} reset`);
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'flaky-stream', stream: true }),
    );
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toMatch(STACK_LINE);

    const events = await readEventStream(new Response(text));
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ endOfDialog: true, code: expect.any(String) });
    const turnId = events[0]!.data.turnId;
    for (const { data } of events) {
      expect(data).toMatchObject({ sessionId: 'flaky-stream', turnId });
      expect(data.messageId).toMatch(/^\S+$/);
    }
  });
});
