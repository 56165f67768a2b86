import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { App, type ServerHandle } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { echoAgent, postJson, relay, ScriptedOrchestrator, streamingAgent } from '../support/app-fixtures.js';

const MODEL = 'desk-router';
const ACME = 'key-acme-0123456789';
const GLOBEX = 'key-globex-0123456789';
const ANN = 'key-acme-ann-0123456789';

describe('the OpenAI Responses API and history-resending clients, over a real port', () => {
  let server: ServerHandle;
  let app: App;
  let orchestrator: ScriptedOrchestrator;
  let client: OpenAI;

  beforeAll(async () => {
    const agents = [echoAgent(), streamingAgent('streamer', ['Hel', 'lo ', 'world'])];
    app = new App({
      name: 'desk',
      agents,
      logger: () => {},
      auth: apiKeys({
        keys: {
          [ACME]: { tenantId: 'acme' },
          [GLOBEX]: { tenantId: 'globex' },
          [ANN]: { tenantId: 'acme', userId: 'ann' },
        },
      }),
    });
    orchestrator = new ScriptedOrchestrator(agents, relay(), MODEL);
    server = await app.start(orchestrator, { port: 0 });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: ACME, maxRetries: 0 });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    orchestrator.seen.length = 0;
  });

  /** The user and assistant texts the orchestrator saw on its last decision. */
  const lastSeen = () =>
    orchestrator.seen
      .at(-1)!
      .messages.filter((message) => message.role === 'user' || message.role === 'assistant')
      .map((message) => `${message.role}: ${message.content}`);

  it('answers responses.create with text input, echoes instructions and metadata, and GET /v1/responses/:id reads it back', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: 'hello',
      instructions: 'Be brief.',
      metadata: { channel: 'web' },
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: MODEL,
      instructions: 'Be brief.',
      metadata: { channel: 'web' },
      store: true,
      previous_response_id: null,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('echo: hello');

    const read = await client.responses.retrieve(response.id);
    expect(read.output_text).toBe('echo: hello');
    expect(read).toMatchObject({ id: response.id, status: 'completed', instructions: 'Be brief.' });
    expect(read.metadata).toEqual({ channel: 'web' });

    // Another tenant's key, a key bound to another user, and a made-up id all get OpenAI's 404 with its type.
    const other = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: GLOBEX, maxRetries: 0 });
    const ann = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: ANN, maxRetries: 0 });
    for (const attempt of [
      other.responses.retrieve(response.id),
      ann.responses.retrieve(response.id),
      client.responses.retrieve('resp_nothing'),
    ]) {
      const error = await attempt.catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'not_found',
      });
    }
  });

  it('chains turns with previous_response_id alone: the orchestrator sees the earlier turn; an unknown one is a 404', async () => {
    const first = await client.responses.create({ model: MODEL, input: 'one' });
    const second = await client.responses.create({
      model: MODEL,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'two' }] }],
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe('echo: two');
    expect(second.previous_response_id).toBe(first.id);
    expect(lastSeen()).toEqual(['user: one', 'assistant: echo: one', 'user: two']);

    const foreign = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: GLOBEX, maxRetries: 0 });
    const error = await foreign.responses
      .create({ model: MODEL, input: 'three', previous_response_id: first.id })
      .catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).error).toMatchObject({ param: 'previous_response_id' });
  });

  it('streams the Responses events in order, the deltas adding up to the answer', async () => {
    const stream = await client.responses.create({ model: MODEL, input: 'streamer: go', stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let deltas = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    const distinct = types.filter((type, index) => type !== types[index - 1]);
    expect(distinct).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    // The agent's chunks stream as deltas of their own, as they come.
    expect(types.filter((type) => type === 'response.output_text.delta').length).toBeGreaterThanOrEqual(3);
    expect(sequence).toEqual(sequence.map((_, index) => index));
    expect(deltas).toBe('Hello world');
    expect(completed?.output_text ?? completed?.output[0]).toBeTruthy();
    expect((await client.responses.retrieve(completed!.id)).output_text).toBe('Hello world');
  });

  it('with store: false keeps nothing: the response cannot be read back or chained', async () => {
    const response = await client.responses.create({ model: MODEL, input: 'forget me', store: false });
    expect(response.output_text).toBe('echo: forget me');
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      client.responses.create({ model: MODEL, input: 'more', previous_response_id: response.id }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('with the same Idempotency-Key, answers the first response again instead of running another turn', async () => {
    const options = { headers: { 'idempotency-key': 'responses-retry-1' } };
    const first = await client.responses.create({ model: MODEL, input: 'once' }, options);
    const again = await client.responses.create({ model: MODEL, input: 'once' }, options);
    expect(again.id).toBe(first.id);
    expect(again.output_text).toBe('echo: once');
    expect(orchestrator.seen.filter((seen) => seen.messages.at(-1)?.role === 'user')).toHaveLength(1);
  });

  it('answers bad Responses requests in OpenAI’s error shape and stores nothing', async () => {
    const post = (body: unknown) =>
      fetch(`${server.url}/v1/responses`, postJson(body, { authorization: `Bearer ${ACME}` }));
    const cases: Array<[unknown, number, string | null]> = [
      [{ model: 'nope', input: 'hi' }, 404, 'model'],
      [{ model: MODEL }, 400, 'input'],
      [
        { model: MODEL, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] },
        400,
        null,
      ],
      [{ model: MODEL, input: 'hi', background: 'soon' }, 400, 'background'],
      [{ model: MODEL, input: 'hi', surprise: 1 }, 400, null],
      [
        { model: MODEL, input: 'hi', instructions: 'x'.repeat(16_000), metadata: { note: 'y'.repeat(500) } },
        400,
        'instructions',
      ],
    ];
    for (const [body, status, param] of cases) {
      const response = await post(body);
      expect(response.status).toBe(status);
      const { error } = (await response.json()) as { error: { type: string; param: string | null } };
      expect(error.type).toBe('invalid_request_error');
      if (param) expect(error.param).toBe(param);
    }
    expect(orchestrator.seen).toEqual([]);
    const unknownRoute = await fetch(`${server.url}/v1/responses/x/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ACME}` },
    });
    expect(unknownRoute.status).toBe(404);
    expect(((await unknownRoute.json()) as { error: { type: string } }).error.type).toBe(
      'invalid_request_error',
    );
  });

  it('a chat-completions client resending the whole history continues its session: the orchestrator sees every earlier turn on the third request', async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
    ];
    const sessions: Array<string | null> = [];
    for (const text of ['first', 'second', 'third']) {
      messages.push({ role: 'user', content: text });
      const { data, response } = await client.chat.completions
        .create({ model: MODEL, messages })
        .withResponse();
      sessions.push(response.headers.get('x-session-id'));
      messages.push({ role: 'assistant', content: data.choices[0]!.message.content });
    }
    expect(new Set(sessions).size).toBe(1);
    expect(lastSeen()).toEqual([
      'user: first',
      'assistant: echo: first',
      'user: second',
      'assistant: echo: second',
      'user: third',
    ]);

    // The same words from another user of the tenant open a session of their own.
    const ann = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: ANN, maxRetries: 0 });
    const { response } = await ann.chat.completions
      .create({ model: MODEL, messages: messages.slice(0, 4) })
      .withResponse();
    expect(response.headers.get('x-session-id')).not.toBe(sessions[0]);
    expect(lastSeen()).toEqual(['user: second']);
  });

  it('a streamed chat-completions client resending history continues too', async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
    for (const text of ['streamer: a', 'streamer: b', 'streamer: c']) {
      messages.push({ role: 'user', content: text });
      const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      messages.push({ role: 'assistant', content });
    }
    expect(lastSeen()).toEqual([
      'user: streamer: a',
      'assistant: Hello world',
      'user: streamer: b',
      'assistant: Hello world',
      'user: streamer: c',
    ]);
  });

  describe("Vercel's @ai-sdk/openai default provider (the Responses API)", () => {
    const provider = () => createOpenAI({ baseURL: `${server.url}/v1`, apiKey: ACME })(MODEL as 'gpt-4o');

    it('gets answers from generateText and streamText', async () => {
      const { text } = await generateText({ model: provider(), prompt: 'hi there' });
      expect(text).toBe('echo: hi there');
      const result = streamText({ model: provider(), prompt: 'streamer: go' });
      let streamed = '';
      for await (const part of result.textStream) streamed += part;
      expect(streamed).toBe('Hello world');
    });

    it('resending the conversation as text, the orchestrator sees every earlier turn on the third request', async () => {
      const model = provider();
      const messages: Array<{ role: 'user' | 'assistant'; content: string }> = [];
      for (const text of ['alpha', 'beta', 'gamma']) {
        messages.push({ role: 'user', content: text });
        const result = await generateText({ model, messages });
        messages.push({ role: 'assistant', content: result.text });
      }
      expect(lastSeen()).toEqual([
        'user: alpha',
        'assistant: echo: alpha',
        'user: beta',
        'assistant: echo: beta',
        'user: gamma',
      ]);
    });

    it('resending its response messages (item references to the answers), the orchestrator sees every earlier turn', async () => {
      const model = provider();
      const messages: NonNullable<Parameters<typeof generateText>[0]['messages']> = [];
      for (const text of ['red', 'green', 'blue']) {
        messages.push({ role: 'user', content: text });
        const result = await generateText({ model, messages });
        messages.push(...result.response.messages);
      }
      expect(lastSeen()).toEqual([
        'user: red',
        'assistant: echo: red',
        'user: green',
        'assistant: echo: green',
        'user: blue',
      ]);
    });
  });
});
