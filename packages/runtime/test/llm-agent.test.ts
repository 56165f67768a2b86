import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llmAgent } from '../src/agents/llm-agent.js';
import { llmTool } from '../src/agents/llm-tool.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { ScriptEntry } from '../src/testing/scripted-script.js';
import { runAgent } from './llm-test-support.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let server: ScriptedModelServer;
let client: OpenAI;

beforeAll(() => provider.register());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
});
beforeEach(() => exporter.reset());
afterEach(async () => server?.close());

async function script(entries: ScriptEntry[]) {
  server = await createScriptedModelServer({ script: entries });
  client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

const adds: { a: number; b: number }[] = [];
const add = llmTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number().describe('the second number') }),
  execute: (args) => {
    adds.push(args);
    return { sum: args.a + args.b };
  },
});
beforeEach(() => {
  adds.length = 0;
});

describe('llmAgent', () => {
  it('answers with the model text, sending the instructions, the task and the model settings', async () => {
    await script([
      { content: 'Paris is the capital of France.', usage: { inputTokens: 30, outputTokens: 8 } },
    ]);
    const agent = llmAgent({
      name: 'geo',
      description: 'Geography',
      model: 'test-model',
      instructions: 'Be brief.',
      temperature: 0.2,
      client,
      stream: false,
    });
    const result = await runAgent(agent, 'Capital of France?');

    expect(result.content).toBe('Paris is the capital of France.');
    expect(result.metadata).toEqual({
      model: 'test-model',
      usage: { inputTokens: 30, outputTokens: 8 },
      iterations: 1,
    });
    const body = server.requests[0]?.body;
    expect(body?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Capital of France?' },
    ]);
    expect(body).toMatchObject({ model: 'test-model', temperature: 0.2 });
    expect(body).not.toHaveProperty('tools');
    server.assertDone();
  });

  it('runs a zod-defined tool the model calls and feeds its result back', async () => {
    await script([
      { toolCalls: [{ id: 'call_sum', name: 'add', arguments: { a: 2, b: 3 } }] },
      'The sum is 5.',
    ]);
    const agent = llmAgent({
      name: 'math',
      description: 'Math',
      model: 'm',
      instructions: 'Use tools.',
      tools: [add],
      client,
    });
    const result = await runAgent(agent, 'What is 2 + 3?');

    expect(result.content).toBe('The sum is 5.');
    expect(adds).toEqual([{ a: 2, b: 3 }]);
    const [first, second] = server.requests;
    expect(first?.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Adds two numbers',
          parameters: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number', description: 'the second number' } },
            required: ['a', 'b'],
          },
        },
      },
    ]);
    expect(second?.body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_sum', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_sum', content: '{"sum":5}' },
    ]);
    server.assertDone();
  });

  it('feeds invalid arguments, malformed JSON, unknown tools and tool failures back to the model instead of failing', async () => {
    const failing = llmTool({
      name: 'lookup',
      description: 'Looks things up',
      parameters: z.object({ key: z.string() }),
      execute: () => {
        throw new Error('the index is offline');
      },
    });
    await script([
      {
        toolCalls: [
          { id: 'c1', name: 'add', arguments: { a: 'two', b: 3 } },
          { id: 'c2', name: 'add', arguments: '{"a": 2,' },
          { id: 'c3', name: 'multiply', arguments: {} },
          { id: 'c4', name: 'lookup', arguments: { key: 'x' } },
        ],
      },
      { toolCalls: [{ id: 'c5', name: 'add', arguments: { a: 2, b: 3 } }] },
      'Recovered: 5.',
    ]);
    const agent = llmAgent({
      name: 'math',
      description: 'Math',
      model: 'm',
      instructions: 'Use tools.',
      tools: [add, failing],
      client,
    });
    const result = await runAgent(agent, 'add two and three');

    expect(result.content).toBe('Recovered: 5.');
    expect(adds).toEqual([{ a: 2, b: 3 }]);
    const feedback = server.requests[1]?.body.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(feedback).toEqual([
      expect.stringMatching(/^Error: invalid arguments for 'add': a: .*number/),
      expect.stringMatching(/^Error: the arguments for 'add' are not valid JSON/),
      "Error: there is no tool named 'multiply'. Available tools: add, lookup.",
      "Error: 'lookup' failed: the index is offline",
    ]);
    const toolSpans = exporter.getFinishedSpans().filter((span) => span.name.startsWith('tool '));
    expect(toolSpans.map((span) => [span.name, span.status.code])).toContainEqual(['tool lookup', 2]);
    server.assertDone();
  });

  it('answers with the tool results so far, marked partial, when the model still calls tools after maxIterations model calls', async () => {
    const again = { toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] };
    await script([again, again]);
    const agent = llmAgent({
      name: 'looper',
      description: 'Loops',
      model: 'm',
      instructions: 'x',
      tools: [add],
      maxIterations: 2,
      stream: false,
      client,
    });

    const result = await runAgent(agent, 'loop');
    expect(result.content).toBe(
      'I stopped after 2 model calls without a final answer. The tool results so far:\n- add: {"sum":2}',
    );
    expect(result.metadata).toMatchObject({ iterations: 2, partial: true });
    expect(adds).toEqual([{ a: 1, b: 1 }]);
    expect(server.requests).toHaveLength(2);
    server.assertDone();
  });

  it('streams text deltas whose concatenation is the answer, across tool rounds', async () => {
    await script([
      { content: 'Let me add that.', toolCalls: [{ name: 'add', arguments: { a: 20, b: 22 } }] },
      { content: 'The answer is 42, as computed.', chunks: ['The answer ', 'is 42, ', 'as computed.'] },
    ]);
    const agent = llmAgent({
      name: 'math',
      description: 'Math',
      model: 'm',
      instructions: 'x',
      tools: [add],
      client,
    });
    const result = await runAgent(agent, '20 + 22?');

    expect(result.deltas).toEqual([
      'Let ',
      'me ',
      'add ',
      'that.',
      '\n\n',
      'The answer ',
      'is 42, ',
      'as computed.',
    ]);
    expect(result.content).toBe('Let me add that.\n\nThe answer is 42, as computed.');
    expect(server.requests.every((request) => request.body.stream === true)).toBe(true);
    expect(server.requests[1]?.body.messages[2]).toMatchObject({
      role: 'assistant',
      content: 'Let me add that.',
    });
  });

  it('records each model call as a Langfuse generation with model and token usage, under the agent span', async () => {
    await script([
      {
        toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 50, outputTokens: 10 },
      },
      { content: '3', usage: { inputTokens: 70, outputTokens: 2 } },
    ]);
    const agent = llmAgent({
      name: 'math',
      description: 'Math',
      model: 'gpt-test',
      instructions: 'x',
      tools: [add],
      client,
    });
    await runAgent(agent, '1 + 2?');

    const spans = exporter.getFinishedSpans();
    const agentSpan = spans.find((span) => span.name === 'agent under test');
    const generations = spans.filter((span) => span.attributes['langfuse.observation.type'] === 'generation');
    expect(generations.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 50,
        'gen_ai.usage.output_tokens': 10,
      }),
      expect.objectContaining({
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 70,
        'gen_ai.usage.output_tokens': 2,
        'langfuse.observation.output': JSON.stringify({ role: 'assistant', content: '3' }),
      }),
    ]);
    expect(JSON.parse(String(generations[0]?.attributes['langfuse.observation.input']))).toEqual([
      { role: 'system', content: 'x' },
      { role: 'user', content: '1 + 2?' },
    ]);
    for (const span of [...generations, ...spans.filter((s) => s.name === 'tool add')]) {
      expect(span.parentSpanContext?.spanId).toBe(agentSpan?.spanContext().spanId);
    }
  });
});
