import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { ScriptEntry } from '../src/testing/scripted-script.js';
import { lapse, settlesBefore } from './support/settles-before.js';

let server: ScriptedModelServer | undefined;

async function start(script: ScriptEntry[]) {
  server = await createScriptedModelServer({ script });
  return { server, client: new OpenAI({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }) };
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('scripted model server', () => {
  it('serves scripted text answers in order with usage, and records every request body', async () => {
    const { server, client } = await start([
      'first answer',
      { content: 'second answer', usage: { inputTokens: 11, outputTokens: 3 } },
    ]);
    const first = await client.chat.completions.create({
      model: 'm1',
      messages: [{ role: 'user', content: 'one' }],
    });
    const second = await client.chat.completions.create({
      model: 'm2',
      messages: [{ role: 'user', content: 'two' }],
    });

    expect(first.choices[0]?.message.content).toBe('first answer');
    expect(second.choices[0]?.message.content).toBe('second answer');
    expect(second.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    expect(first.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(server.requests.map((request) => [request.body.model, request.body.messages[0]?.content])).toEqual(
      [
        ['m1', 'one'],
        ['m2', 'two'],
      ],
    );
    expect(server.requests[0]?.headers.authorization).toBe('Bearer test-key');
    expect(server.remaining).toBe(0);
    server.assertDone();
  });

  it('returns tool calls, and accepts the tool results that answer them', async () => {
    const { server, client } = await start([
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] },
      'It is cold in Oslo.',
    ]);
    const first = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
      tools: [weatherTool],
    });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    });

    const second = await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: 'weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: message?.tool_calls },
        { role: 'tool', tool_call_id: call?.id ?? '', content: '-3 °C' },
      ],
      tools: [weatherTool],
    });
    expect(second.choices[0]?.message.content).toBe('It is cold in Oslo.');
    server.assertDone();
  });

  it('streams content and tool-call deltas in the OpenAI SSE format, with a final usage chunk', async () => {
    const { server, client } = await start([
      { content: 'Hello brave new world', usage: { inputTokens: 5, outputTokens: 4 } },
      { toolCalls: [{ id: 'call_a', name: 'get_weather', arguments: { city: 'Rome' } }] },
    ]);
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) deltas.push(delta);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Hello brave new world');
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });

    // The client's own accumulator rebuilds the tool call from the deltas.
    const runner = client.chat.completions.stream({
      model: 'm',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
    });
    const completion = await runner.finalChatCompletion();
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && [call.id, call.function.name, call.function.arguments]).toEqual([
      'call_a',
      'get_weather',
      '{"city":"Rome"}',
    ]);
    expect(server.requests[1]?.body.stream).toBe(true);
    server.assertDone();
  });

  it('serves the scripted JSON for a json_schema response format and rejects a non-strict strict schema', async () => {
    const { server, client } = await start(['{"agent":"clock"}']);
    const schema = {
      type: 'object',
      properties: { agent: { type: 'string', enum: ['clock'] } },
      required: ['agent'],
      additionalProperties: false,
    };
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'time?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'route', strict: true, schema } },
    });
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({ agent: 'clock' });
    expect(server.requests[0]?.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'route' },
    });

    const loose = { ...schema, required: [] };
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'time?' }],
        response_format: { type: 'json_schema', json_schema: { name: 'route', strict: true, schema: loose } },
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('must require every property') });
    expect(() => server.assertDone()).toThrow(/rejected/);
  });

  it('fails loudly on an unscripted call: a 500 naming the call, recorded, and assertDone throws', async () => {
    const { server, client } = await start(['only answer']);
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'first' }] });
    const failure = client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'one too many' }],
    });

    await expect(failure).rejects.toMatchObject({
      status: 500,
      message: expect.stringContaining('unscripted call'),
    });
    expect(server.unscriptedCalls.map((call) => call.body.messages[0]?.content)).toEqual(['one too many']);
    expect(() => server.assertDone()).toThrow(/unscripted call.*one too many/);
  });

  it('with a fallback, answers every call after the script ran out: a stand-in model, nothing unscripted', async () => {
    server = await createScriptedModelServer({
      script: ['scripted first'],
      fallback: (request) => `echo: ${request.body.messages.at(-1)?.content}`,
    });
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 });
    const answers: Array<string | null | undefined> = [];
    for (const content of ['a', 'b', 'c']) {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content }],
      });
      answers.push(completion.choices[0]?.message.content);
    }
    expect(answers).toEqual(['scripted first', 'echo: b', 'echo: c']);
    expect(server.requests.map((request) => request.scriptIndex)).toEqual([0, undefined, undefined]);
    expect(server.unscriptedCalls).toEqual([]);
    expect(() => server?.assertDone()).not.toThrow();
  });

  it('assertDone reports script entries that were never requested', async () => {
    const { server, client } = await start(['used', 'never used']);
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(server.remaining).toBe(1);
    expect(() => server.assertDone()).toThrow('1 of 2 script entries were never requested');
  });

  it('computes dynamic replies from the request, serves scripted errors, and rejects an orphan tool result', async () => {
    const { server, client } = await start([
      (request) => `you said ${String(request.body.messages.at(-1)?.content)}`,
      { error: { status: 429, message: 'slow down', type: 'rate_limit_error' } },
    ]);
    server.push('pushed later');
    const dynamic = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'ping' }],
    });
    expect(dynamic.choices[0]?.message.content).toBe('you said ping');
    await expect(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: 429,
      message: expect.stringContaining('slow down'),
    });
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('no earlier assistant message called'),
    });
    const pushed = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(pushed.choices[0]?.message.content).toBe('pushed later');
  });

  it('stops waiting when the client cancels a delayed answer', async () => {
    const answerDelayMs = 5_000;
    const { client } = await start([{ content: 'too late', delayMs: answerDelayMs }]);
    const controller = new AbortController();
    const call = client.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 50);
    // Given up on abort, not when the late answer comes.
    await expect(settlesBefore(call, lapse(answerDelayMs), 'the late answer')).rejects.toThrow(/abort/i);
  });
});
