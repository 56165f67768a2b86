import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../src/app.js';
import { buildApp, createApp, echoAgent, postJson, STACK_LINE } from '../support/app-fixtures.js';

interface ErrorBody {
  error: { code: string; message: string; issues?: string[] };
}

const MAX_MESSAGE_LENGTH = 20;
const MAX_BODY_BYTES = 1024;
const limits = { maxMessageLength: MAX_MESSAGE_LENGTH, maxBodyBytes: MAX_BODY_BYTES };

/** Reads an error answer and checks what every error answer must look like. */
async function errorOf(response: Response): Promise<ErrorBody['error'] & { text: string }> {
  expect(response.headers.get('content-type')).toContain('application/json');
  const text = await response.text();
  expect(text).not.toMatch(STACK_LINE);
  const body = JSON.parse(text) as ErrorBody;
  expect(body.error.code).toMatch(/^[a-z_]+$/);
  return { ...body.error, text };
}

describe('POST /v1/chat with a bad body (in-process)', () => {
  const { app, orchestrator } = createApp({ agents: [echoAgent()], ...limits });
  afterAll(() => app.close());

  it.each([
    ['malformed JSON', '{"message": "hi", "sessionId": "bad-json"', 'bad-json', /malformed json/i],
    ['a missing message', { sessionId: 'bad-missing' }, 'bad-missing', /message/],
    ['a non-string message', { message: 42, sessionId: 'bad-number' }, 'bad-number', /message.*string/],
    ['a null message', { message: null, sessionId: 'bad-null' }, 'bad-null', /message.*string/],
    ['an empty message', { message: '', sessionId: 'bad-empty' }, 'bad-empty', /message.*empty/],
    [
      'an over-long message',
      { message: 'x'.repeat(MAX_MESSAGE_LENGTH + 1), sessionId: 'bad-long' },
      'bad-long',
      new RegExp(`message.*at most ${MAX_MESSAGE_LENGTH}`),
    ],
    ['an unknown field', { message: 'hi', sessionId: 'bad-field', colour: 'red' }, 'bad-field', /colour/],
    ['a non-string userId', { message: 'hi', sessionId: 'bad-user', userId: 7 }, 'bad-user', /userId/],
    [
      'a non-object metadata',
      { message: 'hi', sessionId: 'bad-meta', metadata: 'x' },
      'bad-meta',
      /metadata/,
    ],
    [
      'a non-boolean stream flag',
      { message: 'hi', sessionId: 'bad-stream', stream: 'yes' },
      'bad-stream',
      /stream/,
    ],
  ])(
    'rejects %s with a 400 naming the problem and stores nothing',
    async (_case, body, sessionId, problem) => {
      const response = await app.request('/v1/chat', postJson(body));
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe('validation_error');
      expect(error.message).toMatch(problem);

      expect((await app.request(`/v1/sessions/${sessionId}`)).status).toBe(404);
      expect(orchestrator.seen).toHaveLength(0);
    },
  );

  it.each([['null'], ['[]'], ['"hi"'], ['42'], ['']])('rejects the body %j with a 400', async (body) => {
    const response = await app.request('/v1/chat', postJson(body));
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('validation_error');
  });

  it.each([
    ['with a space', 'a b'],
    ['of 300 characters', 's'.repeat(300)],
    ['with a path', '../x'],
    ['with a slash', 'a/b'],
    ['empty', ''],
    ['with a newline', 'a\nb'],
  ])('rejects a sessionId %s with a 400 naming sessionId and stores nothing', async (_case, sessionId) => {
    const response = await app.request('/v1/chat', postJson({ message: 'hi', sessionId }));
    expect(response.status).toBe(400);
    const error = await errorOf(response);
    expect(error.message).toMatch(/sessionId/);
    expect(await app.sessions.exists(sessionId)).toBe(false);
    expect(orchestrator.seen).toHaveLength(0);
  });

  it.each([
    ['with a space', 'a%20b'],
    ['with a path', '..%2Fx'],
    ['of 300 characters', 's'.repeat(300)],
  ])('rejects GET and DELETE of a session id %s with a 400', async (_case, encoded) => {
    for (const method of ['GET', 'DELETE']) {
      const response = await app.request(`/v1/sessions/${encoded}`, { method });
      expect(response.status).toBe(400);
      expect((await errorOf(response)).message).toMatch(/session/i);
    }
  });

  it('rejects a body over maxBodyBytes with a 413 and stores nothing', async () => {
    const body = { message: 'y'.repeat(MAX_BODY_BYTES), sessionId: 'too-big' };
    const response = await app.request('/v1/chat', postJson(body));
    expect(response.status).toBe(413);
    const error = await errorOf(response);
    expect(error.code).toBe('payload_too_large');
    expect(error.message).toContain(String(MAX_BODY_BYTES));
    expect((await app.request('/v1/sessions/too-big')).status).toBe(404);
  });

  it('still serves a good request after all of that', async () => {
    const response = await app.request('/v1/chat', postJson({ message: 'fine', sessionId: 'good-one' }));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { reply: string }).reply).toBe('echo: fine');
  });
});

describe('POST /v1/chat metadata limits', () => {
  const { app, orchestrator } = createApp({ agents: [echoAgent()] });
  afterAll(() => app.close());

  /** `levels` objects, one inside the other: `{ a: { a: … { a: 1 } } }`. */
  const nested = (levels: number) => {
    let value: unknown = 1;
    for (let level = 0; level < levels; level += 1) value = { a: value };
    return value as Record<string, unknown>;
  };
  /** The same nesting as raw JSON text, for depths too deep to stringify. */
  const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

  it.each([
    [
      'nested 9 levels deep',
      JSON.stringify({ message: 'hi', sessionId: 'meta-deep', metadata: nested(9) }),
      /metadata.*8 levels/,
    ],
    [
      'nested 50 000 levels deep',
      `{"message":"hi","sessionId":"meta-deep","metadata":${nestedJson(50_000)}}`,
      // Past the bound of every request body (32 levels), refused before the schema walks it.
      /metadata.*32 levels/,
    ],
    [
      'of more than 16 KiB',
      JSON.stringify({ message: 'hi', sessionId: 'meta-deep', metadata: { note: 'x'.repeat(16 * 1024) } }),
      /metadata.*16384 bytes/,
    ],
    [
      'with many small entries over 16 KiB',
      JSON.stringify({
        message: 'hi',
        sessionId: 'meta-deep',
        metadata: Object.fromEntries(Array.from({ length: 3000 }, (_, index) => [`k${index}`, [index]])),
      }),
      /metadata.*16384 bytes/,
    ],
  ])('rejects metadata %s with a 400 and stores nothing', async (_case, body, problem) => {
    const response = await app.request('/v1/chat', postJson(body));
    expect(response.status).toBe(400);
    const error = await errorOf(response);
    expect(error.code).toBe('validation_error');
    expect(error.message).toMatch(problem);
    expect((await app.request('/v1/sessions/meta-deep')).status).toBe(404);
    expect(orchestrator.seen).toHaveLength(0);
  });

  it('accepts metadata 8 levels deep, and arrays count as levels', async () => {
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'fine', sessionId: 'meta-ok', metadata: { list: [[[[[[{ leaf: true }]]]]]] } }),
    );
    expect(response.status).toBe(200);
    const deep = await app.request('/v1/chat', postJson({ message: 'x', metadata: nested(8) }));
    expect(deep.status).toBe(200);
    const tooDeep = await app.request(
      '/v1/chat',
      postJson({ message: 'x', metadata: { list: [[[[[[[{ leaf: true }]]]]]]] } }),
    );
    expect(tooDeep.status).toBe(400);
  });
});

describe('session ids made only of dots', () => {
  const { app: dotted } = createApp({ agents: [echoAgent()] });
  afterAll(() => dotted.close());

  it.each([['.'], ['..']])(
    'rejects the sessionId %j, which no URL of GET or DELETE /v1/sessions/:id can address',
    async (sessionId) => {
      // A URL normalises /v1/sessions/.. to /v1/, so such a session could never be read or deleted.
      expect(new URL(`/v1/sessions/${sessionId}`, 'http://localhost').pathname).not.toBe(
        `/v1/sessions/${sessionId}`,
      );
      const response = await dotted.request('/v1/chat', postJson({ message: 'hi', sessionId }));
      expect(response.status).toBe(400);
      expect((await errorOf(response)).message).toMatch(/sessionId/);
      expect(await dotted.sessions.exists(sessionId)).toBe(false);
    },
  );
});

describe('POST /v1/chat with a bad body (real port)', () => {
  let server: ServerHandle;
  const { app, orchestrator } = buildApp({ agents: [echoAgent()], ...limits });
  beforeAll(async () => {
    server = await app.start(orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  it('answers 400 for malformed JSON and an over-long message', async () => {
    const malformed = await fetch(`${server.url}/v1/chat`, postJson('{"message":'));
    expect(malformed.status).toBe(400);
    expect((await errorOf(malformed)).message).toMatch(/malformed json/i);

    const long = await fetch(
      `${server.url}/v1/chat`,
      postJson({ message: 'z'.repeat(MAX_MESSAGE_LENGTH + 5) }),
    );
    expect(long.status).toBe(400);
    expect((await errorOf(long)).message).toMatch(/at most/);
  });

  it('answers 413 for a body over maxBodyBytes, with or without a Content-Length', async () => {
    const payload = JSON.stringify({ message: 'y'.repeat(MAX_BODY_BYTES * 4), sessionId: 'too-big-port' });
    const declared = await fetch(`${server.url}/v1/chat`, postJson(payload));
    expect(declared.status).toBe(413);
    expect((await errorOf(declared)).code).toBe('payload_too_large');

    const chunks = [payload.slice(0, MAX_BODY_BYTES), payload.slice(MAX_BODY_BYTES)];
    const streamed = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await errorOf(streamed)).code).toBe('payload_too_large');

    expect((await fetch(`${server.url}/v1/sessions/too-big-port`)).status).toBe(404);
    expect(orchestrator.seen).toHaveLength(0);
  });
});
