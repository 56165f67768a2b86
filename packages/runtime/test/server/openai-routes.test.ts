import { readFileSync } from 'node:fs';
import {
  latestToolResults,
  type MessageItem,
  routeToUser,
  StoreUnavailableError,
  toolCall,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { TurnResult } from '../../src/engine/turn-engine.js';
import { apiKeys } from '../../src/server/auth.js';
import { chatCompletion, FINISH_REASON_BY_STATUS } from '../../src/server/openai-completion.js';
import { responseIds, responseObject, turnOfId } from '../../src/server/openai-responses.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { AppendOptions } from '../../src/stores/session-store.js';
import type { TurnStatus } from '../../src/turns/turn-record.js';
import {
  createApp,
  echoAgent,
  postJson,
  STACK_LINE,
  slowAgent,
  streamingAgent,
  type TestAppOptions,
} from '../support/app-fixtures.js';

const SECRET = 'redis://admin:hunter2@10.0.0.9:6379';

interface Completion {
  id: string;
  choices: Array<{ message: { content: string }; finish_reason: string }>;
  switchboard: {
    sessionId: string;
    turnId: string;
    status: string;
    error?: { code: string; message: string };
  };
}
interface OpenAiError {
  error: { message: string; type: string; code: string | null; param: string | null };
}

/** An in-memory store whose `append` of an agent's reply fails with `failure()` while it is set. */
class FlakySessionStore extends InMemorySessionStore {
  failure: (() => Error) | undefined;

  override async append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions) {
    if (this.failure && messages.some((message) => message.role === 'tool')) throw this.failure();
    return super.append(sessionId, messages, options);
  }
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'scripted',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** The `data:` payloads of an OpenAI stream, in order. */
function dataLines(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      expect(block).toMatch(/^data: /);
      return block.slice('data: '.length);
    });
}

describe('POST /v1/chat/completions in-process', () => {
  let app: App | undefined;
  afterEach(() => app?.close());
  const serve = (options: Partial<TestAppOptions> = {}) => {
    app = createApp({ agents: [echoAgent()], ...options }).app;
    return app;
  };
  const complete = (body: unknown, headers: Record<string, string> = {}) =>
    app!.request('/v1/chat/completions', postJson(body, headers));

  it('continues the session named by metadata.session_id; the x-session-id header wins over it; the rest of metadata reaches the turn', async () => {
    serve();
    const first = await complete(ask('one', { metadata: { session_id: 'by-metadata', channel: 'web' } }));
    expect(first.headers.get('x-session-id')).toBe('by-metadata');
    const second = await complete(ask('two', { metadata: { session_id: 'ignored' } }), {
      'x-session-id': 'by-metadata',
    });
    expect(second.headers.get('x-session-id')).toBe('by-metadata');
    const stored = await app!.sessions.read('by-metadata');
    expect(stored.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'one',
      'two',
    ]);
    expect(stored[0]!.metadata).toEqual({ channel: 'web' });
    expect(await app!.sessions.read('ignored')).toEqual([]);
  });

  it('with the same Idempotency-Key, answers the first turn again instead of running another', async () => {
    const slow = slowAgent('slow', 1);
    serve({ agents: [slow] });
    const key = { 'idempotency-key': 'retry-7' };
    const first = (await (await complete(ask('slow: once'), key)).json()) as Completion;
    const again = await complete(ask('slow: once'), key);
    const second = (await again.json()) as Completion;
    expect(second.id).toBe(first.id);
    expect(again.headers.get('x-session-id')).toBe(first.switchboard.sessionId);
    expect(slow.runs).toHaveLength(1);
  });

  it('maps a failed turn to finish_reason stop with the failure reply, and its error code without internals', async () => {
    serve({
      handler: () => ({
        error: new Error(`lookup at ${SECRET} failed`),
        userMessage: 'I could not do that.',
      }),
    });
    const response = await complete(ask('anything'));
    expect(response.status).toBe(200);
    const body = (await response.json()) as Completion;
    expect(body.choices[0]).toMatchObject({
      message: { content: 'I could not do that.' },
      finish_reason: 'stop',
    });
    expect(body.switchboard.status).toBe('failed');
    expect(body.switchboard.error?.code).toEqual(expect.any(String));
    expect(JSON.stringify(body)).not.toContain('hunter2');
  });

  it('streams data-only events ending in [DONE], without a usage chunk unless asked', async () => {
    serve();
    const response = await complete(ask('hi', { stream: true }));
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const lines = dataLines(await response.text());
    expect(lines.at(-1)).toBe('[DONE]');
    const chunks = lines
      .slice(0, -1)
      .map((line) => JSON.parse(line) as { choices: unknown[]; usage?: unknown });
    expect(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined)).toBe(true);
  });

  /** The content of each chunk before [DONE], and the finish chunk's extension. */
  const streamedContent = async (response: Response) => {
    const chunks = dataLines(await response.text())
      .slice(0, -1)
      .map(
        (line) =>
          JSON.parse(line) as {
            choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
            switchboard?: { reply?: string; contentIsReply?: boolean; delta?: { content: string } };
          },
      );
    const pieces = chunks
      .map((chunk) => chunk.choices[0]?.delta.content ?? '')
      .filter((piece) => piece !== '');
    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason)!;
    return { pieces, content: pieces.join(''), finish: finish.switchboard! };
  };

  it('streams the answering agent’s deltas as content as they arrive, adding up to exactly the reply', async () => {
    serve({ agents: [streamingAgent('streamer', ['Hel', 'lo ', 'world'])] });
    const { pieces, content, finish } = await streamedContent(
      await complete(ask('streamer: hi', { stream: true })),
    );
    expect(pieces).toEqual(['Hel', 'lo ', 'world']);
    expect(content).toBe('Hello world');
    expect(finish).toMatchObject({ reply: 'Hello world', contentIsReply: true });
  });

  it('adds the reply after the live content when the orchestrator answered something else, and says so', async () => {
    serve({
      agents: [streamingAgent('streamer', ['Hel', 'lo'])],
      handler: (conversation) => {
        const [reply] = latestToolResults(conversation);
        if (reply) return routeToUser(`The streamer said: ${reply.content}`);
        return toolCall('streamer', 'go');
      },
    });
    const { content, finish } = await streamedContent(await complete(ask('hi', { stream: true })));
    expect(content).toBe('Hello\n\nThe streamer said: Hello');
    expect(finish).toMatchObject({ reply: 'The streamer said: Hello', contentIsReply: false });
    // Asked for the answer alone, the content is exactly the reply.
    const exact = await streamedContent(
      await complete(ask('hi', { stream: true }), { 'x-switchboard-stream': 'answer' }),
    );
    expect(exact.content).toBe('The streamer said: Hello');
    expect(exact.finish).toMatchObject({ contentIsReply: true });
  });

  it('streams a paused turn as the approval message with its approvals on the finish chunk', async () => {
    serve({ agents: [echoAgent(), { ...echoAgent('refund'), requiresApproval: true }] });
    const lines = dataLines(await (await complete(ask('refund: order 42', { stream: true }))).text());
    const chunks = lines.slice(0, -1).map(
      (line) =>
        JSON.parse(line) as {
          choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
          switchboard?: { status: string; approvals?: unknown[] };
        },
    );
    expect(chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('')).toBe(
      'This needs a person’s approval before I can go on.',
    );
    const finish = chunks.at(-1)!;
    expect(finish.choices[0]!.finish_reason).toBe('stop');
    expect(finish.switchboard).toMatchObject({
      status: 'awaiting_approval',
      approvals: [{ agent: 'refund' }],
    });
  });

  it('with API keys: 401 in OpenAI’s shape without a key, and a session id is scoped to the caller’s tenant', async () => {
    const acme = { authorization: 'Bearer sk-acme-0123456789abcdef0123456789abcdef' };
    const globex = { authorization: 'Bearer sk-globex-0123456789abcdef0123456789abcdef' };
    serve({
      auth: apiKeys({
        keys: {
          [acme.authorization.slice(7)]: { tenantId: 'acme', name: 'acme-web' },
          [globex.authorization.slice(7)]: { tenantId: 'globex', name: 'globex-bot' },
        },
      }),
    });
    const refused = await complete(ask('hi'));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as OpenAiError).error).toMatchObject({ type: 'authentication_error' });

    expect((await complete(ask('acme plan'), { ...acme, 'x-session-id': 'shared' })).status).toBe(200);
    expect((await complete(ask('globex plan'), { ...globex, 'x-session-id': 'shared' })).status).toBe(200);
    const session = (await (await app!.request('/v1/sessions/shared', { headers: acme })).json()) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(session.messages.filter((message) => message.role === 'user').map((m) => m.content)).toEqual([
      'acme plan',
    ]);
  });

  describe('errors, in OpenAI’s shape', () => {
    const expectOpenAiError = async (
      response: Response,
      status: number,
      error: Partial<OpenAiError['error']>,
    ) => {
      expect(response.status).toBe(status);
      const text = await response.text();
      const body = JSON.parse(text) as OpenAiError;
      expect(body.error).toMatchObject(error);
      expect(Object.keys(body.error)).toEqual(expect.arrayContaining(['message', 'type', 'code', 'param']));
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('10.0.0.9');
      expect(text).not.toMatch(STACK_LINE);
      return body;
    };

    it.each([
      ['an unknown parameter', ask('hi', { temprature: 1 }), 'temprature'],
      ['n other than 1', ask('hi', { n: 2 }), 'n must be 1'],
      ['no messages', { model: 'scripted' }, 'messages is required'],
      ['an empty last user message', ask(''), 'must not be empty'],
      ['a malformed JSON body', '{"model":', 'Malformed JSON'],
    ])('400 invalid_request_error for %s', async (_name, body, text) => {
      serve();
      const error = await expectOpenAiError(await complete(body), 400, {
        type: 'invalid_request_error',
        code: 'validation_error',
      });
      expect(error.error.message).toContain(text);
    });

    it('400 for a malformed x-session-id header', async () => {
      serve();
      await expectOpenAiError(await complete(ask('hi'), { 'x-session-id': 'no spaces allowed' }), 400, {
        code: 'validation_error',
      });
    });

    it('404 model_not_found for an unknown model', async () => {
      serve();
      await expectOpenAiError(await complete(ask('hi', { model: 'gpt-4o' })), 404, {
        type: 'invalid_request_error',
        code: 'model_not_found',
        param: 'model',
      });
    });

    it('413 for a body over maxBodyBytes', async () => {
      serve({ maxBodyBytes: 64 });
      await expectOpenAiError(await complete(ask('x'.repeat(200))), 413, { code: 'payload_too_large' });
    });

    it('500 without internals when the store fails, and 503 without the store’s address when it is down', async () => {
      const store = new FlakySessionStore();
      serve({ sessionStore: store });
      store.failure = () => new Error(`connection to ${SECRET} reset`);
      await expectOpenAiError(await complete(ask('hi')), 500, {
        type: 'server_error',
        code: 'internal_error',
      });
      store.failure = () => new StoreUnavailableError({ message: `Redis at ${SECRET} did not answer` });
      await expectOpenAiError(await complete(ask('hi')), 503, {
        type: 'server_error',
        code: 'store_unavailable',
      });
    });

    it('ends a stream whose turn throws with a data: { error } event (which the openai client raises), without internals', async () => {
      const store = new FlakySessionStore();
      serve({ sessionStore: store });
      store.failure = () => new Error(`connection to ${SECRET} reset`);
      const response = await complete(ask('hi', { stream: true }));
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).not.toContain('hunter2');
      const lines = dataLines(text);
      expect(lines).not.toContain('[DONE]');
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({
        error: { type: 'server_error', code: 'internal_error' },
      });
    });

    it('ends a Responses stream whose turn throws with an error event, without internals', async () => {
      const store = new FlakySessionStore();
      serve({ sessionStore: store });
      store.failure = () => new Error(`connection to ${SECRET} reset`);
      const response = await app!.request(
        '/v1/responses',
        postJson({ model: 'scripted', input: 'hi', stream: true }),
      );
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).not.toContain('hunter2');
      const events = text
        .split('\n\n')
        .filter((block) => block.trim() !== '')
        .map((block) =>
          JSON.parse(
            block
              .split('\n')
              .find((line) => line.startsWith('data: '))!
              .slice(6),
          ),
        );
      expect(events[0]).toMatchObject({ type: 'response.created', sequence_number: 0 });
      expect(events.at(-1)).toMatchObject({ type: 'error', code: 'internal_error' });
      expect(events.map((event) => event.type)).not.toContain('response.completed');
    });

    it('503 once the app is closing', async () => {
      const closing = serve();
      await closing.close();
      await expectOpenAiError(await complete(ask('hi')), 503, { code: 'shutting_down' });
    });
  });
});

describe('the TurnStatus → finish_reason table', () => {
  const result = (status: TurnStatus): TurnResult => ({
    sessionId: 's',
    turnId: 't',
    reply: `reply of a ${status} turn`,
    status,
    steps: [],
  });

  it('answers every status with its reply as content, a blocked turn as content_filter, a limited or over-budget one as length', () => {
    const special: Partial<Record<TurnStatus, string>> = {
      blocked: 'content_filter',
      limited: 'length',
      budget_exceeded: 'length',
    };
    for (const status of Object.keys(FINISH_REASON_BY_STATUS) as TurnStatus[]) {
      const completion = chatCompletion(result(status), { model: 'm', created: 0 });
      expect(completion.choices[0]!.message.content).toBe(`reply of a ${status} turn`);
      expect(completion.choices[0]!.finish_reason).toBe(special[status] ?? 'stop');
      expect(completion.switchboard.status).toBe(status);
    }
  });

  it('is the table the OpenAI clients guide shows', () => {
    const guide = readFileSync(new URL('../../../../docs/guides/openai-clients.md', import.meta.url), 'utf8');
    const rows = Object.fromEntries(
      [...guide.matchAll(/^\| `(\w+)` \| `(\w+)` \|/gm)].map((match) => [match[1], match[2]]),
    );
    for (const [status, reason] of Object.entries(FINISH_REASON_BY_STATUS)) {
      expect(rows[status], `guide row for ${status}`).toBe(reason);
    }
  });
});

describe('the TurnStatus → Responses status table', () => {
  it('answers every ended turn with its reply as output, only a blocked one as incomplete (content_filter)', () => {
    const statuses: TurnStatus[] = ['completed', 'failed', 'interrupted', 'blocked', 'awaiting_approval'];
    for (const status of statuses) {
      const response = responseObject({
        ...responseIds('ses_1', 'turn_1'),
        model: 'scripted',
        createdAt: 1,
        status,
        text: `reply of a ${status} turn`,
        instructions: null,
        previousResponseId: null,
        store: true,
        metadata: {},
        usage: undefined,
        switchboard: { sessionId: 'ses_1', turnId: 'turn_1', status, steps: [] },
      });
      expect(response.status).toBe(status === 'blocked' ? 'incomplete' : 'completed');
      expect(response.incomplete_details).toEqual(status === 'blocked' ? { reason: 'content_filter' } : null);
      expect(response.output[0]!.content).toEqual([
        { type: 'output_text', text: `reply of a ${status} turn`, annotations: [], logprobs: [] },
      ]);
    }
    expect(turnOfId(responseIds('ses_1', 'turn_1').responseId, 'resp_')).toEqual({
      sessionId: 'ses_1',
      turnId: 'turn_1',
    });
    expect(turnOfId(responseIds('ses_1', 'turn_1').itemId, 'resp_')).toBeUndefined();
  });
});
