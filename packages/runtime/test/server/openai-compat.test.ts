import { RequestContext } from '@switchboard/core';
import OpenAI, { type ConflictError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { llmAgent } from '../../src/agents/llm-agent.js';
import { App, type ServerHandle } from '../../src/app.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../../src/testing.js';
import type { RouteStep, TurnStatus } from '../../src/turns/turn-record.js';
import { postJson, relay, ScriptedOrchestrator } from '../support/app-fixtures.js';

/** The `switchboard` extension field, which the `openai` types do not know. */
interface Extension {
  sessionId: string;
  turnId: string;
  status: TurnStatus;
  steps: RouteStep[];
  approvals?: Array<{ id: string; agent: string; status: string }>;
  error?: { code: string; message: string };
}
const extensionOf = (value: object) => (value as { switchboard?: Extension }).switchboard;

const HAIKU = 'Steam curls from the cup';
const MODEL = 'desk-router';

describe('the OpenAI-compatible API, driven by the official openai client over a real port', () => {
  let model: ScriptedModelServer;
  let server: ServerHandle;
  let client: OpenAI;

  beforeAll(async () => {
    model = await createScriptedModelServer();
    const writer = llmAgent({
      name: 'writer',
      description: 'Writes poems',
      model: 'poet',
      instructions: 'Write.',
      client: new OpenAI({ apiKey: 'test', baseURL: model.url, maxRetries: 0 }),
    });
    const whoami = defineAgent({
      name: 'whoami',
      description: 'Says who is asking',
      run: () => `you are ${RequestContext.current().userId ?? 'nobody'}`,
    });
    const refund = defineAgent({
      name: 'refund',
      description: 'Refunds orders',
      requiresApproval: true,
      run: (message) => `refunded ${message}`,
    });
    const agents = [writer, whoami, refund];
    const app = new App({ name: 'desk', agents, logger: () => {} });
    server = await app.start(new ScriptedOrchestrator(agents, relay({ defaultAgent: 'writer' }), MODEL), {
      port: 0,
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await server.close();
    await model.close();
  });
  afterEach(() => model.assertDone());

  it('answers a completion with the reply and the turn’s usage, and continues the session from the x-session-id header', async () => {
    model.push({ content: HAIKU, usage: { inputTokens: 40, outputTokens: 7 } });
    const { data: first, response } = await client.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'a haiku about tea' },
        ],
        temperature: 0.2,
      })
      .withResponse();

    expect(first.object).toBe('chat.completion');
    expect(first.model).toBe(MODEL);
    expect(first.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: HAIKU, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    expect(first.usage).toEqual({ prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 });
    const extension = extensionOf(first)!;
    expect(first.id).toBe(`chatcmpl-${extension.turnId}`);
    expect(extension.status).toBe('completed');
    expect(extension.steps.map((step) => step.kind)).toEqual(['call', 'answer']);
    const sessionId = response.headers.get('x-session-id');
    expect(sessionId).toBe(extension.sessionId);

    // A chat UI resends the whole conversation: only its last user message is the new turn.
    const { data: second, response: secondResponse } = await client.chat.completions
      .create(
        {
          model: MODEL,
          messages: [
            { role: 'user', content: 'a haiku about tea' },
            { role: 'assistant', content: HAIKU },
            { role: 'user', content: [{ type: 'text', text: 'whoami: who am I?' }] },
          ],
          user: 'ada',
        },
        { headers: { 'x-session-id': sessionId! } },
      )
      .withResponse();
    expect(second.choices[0]!.message.content).toBe('you are ada');
    expect(second.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    expect(secondResponse.headers.get('x-session-id')).toBe(sessionId);
    expect(extensionOf(second)!.sessionId).toBe(sessionId);

    const session = (await fetch(`${server.url}/v1/sessions/${sessionId}`).then((r) => r.json())) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(session.messages.filter((message) => message.role === 'user').map((m) => m.content)).toEqual([
      'a haiku about tea',
      'whoami: who am I?',
    ]);
  });

  it('streams chunks whose content concatenates to the reply, with agent deltas, a finish chunk, usage and [DONE]', async () => {
    model.push({
      content: HAIKU,
      chunks: ['Steam ', 'curls ', 'from ', 'the cup'],
      usage: { inputTokens: 40, outputTokens: 7 },
    });
    const { data: stream, response } = await client.chat.completions
      .create({
        model: MODEL,
        messages: [{ role: 'user', content: 'a haiku about tea' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(HAIKU);
    const deltas = chunks.flatMap((chunk) => {
      const delta = (chunk as { switchboard?: { delta?: { agent: string; content: string } } }).switchboard
        ?.delta;
      return delta ? [delta] : [];
    });
    expect(deltas.map((delta) => delta.agent)).toEqual(['writer', 'writer', 'writer', 'writer']);
    expect(deltas.map((delta) => delta.content).join('')).toBe(HAIKU);

    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish!.choices[0]!.finish_reason).toBe('stop');
    const extension = extensionOf(finish!)!;
    expect(extension.status).toBe('completed');
    expect(response.headers.get('x-session-id')).toBe(extension.sessionId);
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set([`chatcmpl-${extension.turnId}`]));

    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 });
  });

  it('maps a turn that pauses for approval to finish_reason stop, the approval message and the pending approvals', async () => {
    const { data: paused, response } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'refund: order 42' }] })
      .withResponse();
    expect(paused.choices[0]!.finish_reason).toBe('stop');
    expect(paused.choices[0]!.message.content).toBe('This needs a person’s approval before I can go on.');
    const extension = extensionOf(paused)!;
    expect(extension.status).toBe('awaiting_approval');
    expect(extension.approvals).toMatchObject([{ agent: 'refund', status: 'pending' }]);

    // The session waits for a person: another message is a 409 the client raises as ConflictError.
    const sessionId = response.headers.get('x-session-id')!;
    const blocked = await client.chat.completions
      .create(
        { model: MODEL, messages: [{ role: 'user', content: 'hello?' }] },
        { headers: { 'x-session-id': sessionId } },
      )
      .catch((error: unknown) => error);
    expect(blocked).toBeInstanceOf(OpenAI.ConflictError);
    expect((blocked as ConflictError).code).toBe('approval_pending');
    expect((blocked as ConflictError).error).toMatchObject({
      approvalIds: [extension.approvals![0]!.id],
    });

    // Approved through the Switchboard route, the turn ends and its answer is in the session.
    const approved = await fetch(
      `${server.url}/v1/sessions/${sessionId}/approvals/${extension.approvals![0]!.id}`,
      postJson({ decision: 'approve' }),
    ).then((r) => r.json() as Promise<{ status: string; reply: string }>);
    expect(approved).toMatchObject({ status: 'completed', reply: 'refunded order 42' });
  });

  it('raises BadRequestError for an invalid request, naming the field', async () => {
    const empty = await client.chat.completions
      .create({ model: MODEL, messages: [] })
      .catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect(empty).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'messages' });

    const image = await client.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
        ],
      })
      .catch((error: unknown) => error);
    expect(image).toBeInstanceOf(OpenAI.BadRequestError);
    expect((image as Error).message).toContain('only text content parts');

    const noUser = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'system', content: 'be nice' }] })
      .catch((error: unknown) => error);
    expect(noUser).toBeInstanceOf(OpenAI.BadRequestError);
    expect((noUser as Error).message).toContain("no message with role 'user'");
  });

  it('raises NotFoundError for a model the server does not have, also when streaming', async () => {
    for (const stream of [false, true]) {
      const error = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error).toMatchObject({ code: 'model_not_found', param: 'model' });
    }
  });

  it('lists the orchestrator as the one model', async () => {
    const models = [];
    for await (const listed of client.models.list()) models.push(listed);
    expect(models).toEqual([
      { id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'switchboard' },
    ]);
    expect((await client.models.retrieve(MODEL)).id).toBe(MODEL);
    await expect(client.models.retrieve('gpt-4o')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
