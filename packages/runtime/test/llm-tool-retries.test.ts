import { setTimeout as sleep } from 'node:timers/promises';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { AgentError } from '@switchboard/core';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llmAgent } from '../src/agents/llm-agent.js';
import { type LlmTool, llmTool } from '../src/agents/llm-tool.js';
import { ToolTimeoutError } from '../src/agents/llm-tool-attempts.js';
import type { App } from '../src/app.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { RecordedRequest, ScriptedToolCall } from '../src/testing/scripted-script.js';
import { runAgent } from './llm-test-support.js';
import { createApp, relay } from './support/app-fixtures.js';
import { useSpanRecording } from './support/span-recording.js';

const recording = useSpanRecording();
let server: ScriptedModelServer | undefined;
let app: App | undefined;
afterEach(async () => {
  await app?.close();
  await server?.close();
  app = undefined;
  server = undefined;
});

/** The model's second answer: the tool results it was sent, one `name: content` line each, in call order. */
function repeatToolResults(request: RecordedRequest): string {
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (const message of request.body.messages) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? [])
        if (call.type === 'function') names.set(call.id, call.function.name);
    }
    if (message.role === 'tool') lines.push(`${names.get(message.tool_call_id)}: ${String(message.content)}`);
  }
  return lines.join('\n');
}

/** A model that calls `calls` at once, then answers with the results it got. */
async function modelCalling(calls: ScriptedToolCall[]) {
  server = await createScriptedModelServer({ script: [{ toolCalls: calls }, repeatToolResults] });
  return new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

function clerk(client: OpenAI, tools: LlmTool[]) {
  return llmAgent({
    name: 'clerk',
    description: 'Answers stock questions',
    model: 'clerk-1',
    instructions: 'Use the tools.',
    client,
    tools,
  });
}

/** Fails with `error()` `failures` times, then answers `answer`; counts its runs. */
function failingTool(
  name: string,
  failures: number,
  error: () => unknown,
  options: { retries?: number } = {},
) {
  let runs = 0;
  const tool = llmTool({
    name,
    description: `The ${name} service`,
    parameters: z.object({}),
    ...options,
    execute: () => {
      runs += 1;
      if (runs <= failures) throw error();
      return `${name} answered on run ${runs}`;
    },
  });
  return { tool, runs: () => runs };
}

function retryable(message: string) {
  return Object.assign(new Error(message), { retryable: true });
}

function toolSpan(name: string): ReadableSpan {
  const [span] = recording().named(`tool ${name}`);
  if (!span) throw new Error(`no span 'tool ${name}'`);
  return span;
}

function retries(span: ReadableSpan) {
  return span.events.filter((event) => event.name === 'retry').map((event) => event.attributes ?? {});
}

describe('llmAgent tool timeouts', () => {
  it('abort a tool past its timeoutMs through its signal, and tell the model it timed out', async () => {
    let slowSignal: AbortSignal | undefined;
    const slow = llmTool({
      name: 'slow',
      description: 'Waits on a slow warehouse',
      parameters: z.object({}),
      timeoutMs: 40,
      execute: async (_args, { signal }) => {
        slowSignal = signal;
        await sleep(10_000, undefined, { signal });
        return 'too late';
      },
    });
    // Ignores its signal altogether: it is not waited for past its deadline either.
    const deaf = llmTool({
      name: 'deaf',
      description: 'Never answers',
      parameters: z.object({}),
      timeoutMs: 40,
      execute: () => new Promise(() => {}),
    });
    const quick = llmTool({
      name: 'quick',
      description: 'Answers at once',
      parameters: z.object({}),
      timeoutMs: 5_000,
      execute: () => 'in stock',
    });
    const client = await modelCalling([
      { name: 'slow', arguments: {} },
      { name: 'deaf', arguments: {} },
      { name: 'quick', arguments: {} },
    ]);

    const result = await runAgent(clerk(client, [slow, deaf, quick]), 'Is it in stock?');

    expect(result.content.split('\n')).toEqual([
      "slow: Error: 'slow' timed out after 40 ms",
      "deaf: Error: 'deaf' timed out after 40 ms",
      'quick: in stock',
    ]);
    expect(slowSignal?.aborted).toBe(true);
    expect(ToolTimeoutError.isInstance(slowSignal?.reason)).toBe(true);
    // Without a profile or `retries`, a timeout is not tried again.
    expect(toolSpan('slow').status.code).toBe(2);
    expect(toolSpan('slow').attributes['switchboard.tool.attempts']).toBe(1);
    expect(retries(toolSpan('slow'))).toEqual([]);
    expect(toolSpan('quick').status.code).not.toBe(2);
    server?.assertDone();
  });
});

describe('llmAgent tool retries', () => {
  it('retry a retryable failure with backoff, each attempt on the tool span; never a non-retryable one', async () => {
    const flaky = failingTool('flaky', 2, () => retryable('upstream 503'), { retries: 3 });
    const down = failingTool(
      'down',
      Number.POSITIVE_INFINITY,
      () => new AgentError({ agent: 'inventory', message: 'connection reset', retryable: true }),
      { retries: 2 },
    );
    const broken = failingTool('broken', 1, () => new Error('bad request: unknown warehouse'), {
      retries: 3,
    });
    const client = await modelCalling([
      { name: 'flaky', arguments: {} },
      { name: 'down', arguments: {} },
      { name: 'broken', arguments: {} },
    ]);

    const result = await runAgent(clerk(client, [flaky.tool, down.tool, broken.tool]), 'Stock?');

    expect(result.content.split('\n')).toEqual([
      'flaky: flaky answered on run 3',
      "down: Error: 'down' failed: Agent 'inventory' failed: connection reset (3 attempts)",
      "broken: Error: 'broken' failed: bad request: unknown warehouse",
    ]);
    expect([flaky.runs(), down.runs(), broken.runs()]).toEqual([3, 3, 1]);
    expect(toolSpan('flaky').attributes['switchboard.tool.attempts']).toBe(3);
    expect(retries(toolSpan('flaky')).map((event) => event['switchboard.attempt'])).toEqual([1, 2]);
    expect(toolSpan('flaky').status.code).not.toBe(2);
    expect(toolSpan('down').attributes['switchboard.tool.attempts']).toBe(3);
    expect(retries(toolSpan('down')).map((event) => event['switchboard.error.code'])).toEqual([
      'agent_error',
      'agent_error',
    ]);
    expect(toolSpan('down').status.code).toBe(2);
    expect(toolSpan('broken').attributes['switchboard.tool.attempts']).toBe(1);
    expect(retries(toolSpan('broken'))).toEqual([]);
  });

  it('retry a timed-out attempt: the next attempt can answer', async () => {
    let runs = 0;
    const warehouse = llmTool({
      name: 'warehouse',
      description: 'Slow on its first try',
      parameters: z.object({}),
      timeoutMs: 40,
      retries: 1,
      execute: async (_args, { signal }) => {
        runs += 1;
        if (runs === 1) await sleep(10_000, undefined, { signal });
        return `answered on run ${runs}`;
      },
    });
    const client = await modelCalling([{ name: 'warehouse', arguments: {} }]);

    const result = await runAgent(clerk(client, [warehouse]), 'Stock?');

    expect(result.content).toBe('warehouse: answered on run 2');
    expect(retries(toolSpan('warehouse')).map((event) => event['switchboard.error.code'])).toEqual([
      'tool_timeout',
    ]);
  });

  it('follow the turn’s strategy profile when the tool sets no retries: its agentRetries and delays', async () => {
    const flaky = failingTool('flaky', 2, () => retryable('upstream 503'));
    const client = await modelCalling([{ name: 'flaky', arguments: {} }]);
    app = createApp({
      agents: [clerk(client, [flaky.tool])],
      handler: relay({ defaultAgent: 'clerk' }),
      profiles: { quick: { agentRetries: 2, retryBaseDelayMs: 1, retryMaxDelayMs: 4 } },
      profile: 'quick',
    }).app;

    const result = await app.chat({ message: 'Stock?' });

    expect(result.reply).toBe('flaky: flaky answered on run 3');
    expect(flaky.runs()).toBe(3);
    const events = retries(toolSpan('flaky'));
    expect(events.map((event) => event['switchboard.attempt'])).toEqual([1, 2]);
    for (const event of events) expect(event['switchboard.retry.delay_ms']).toBeLessThanOrEqual(4);
    expect(toolSpan('flaky').attributes['switchboard.tool.attempts']).toBe(3);
  });

  it('do not retry a tool that sets no retries when the turn has no profile', async () => {
    const flaky = failingTool('flaky', 2, () => retryable('upstream 503'));
    const client = await modelCalling([{ name: 'flaky', arguments: {} }]);

    const result = await runAgent(clerk(client, [flaky.tool]), 'Stock?');

    expect(result.content).toBe("flaky: Error: 'flaky' failed: upstream 503");
    expect(flaky.runs()).toBe(1);
  });

  it('reject invalid timeoutMs and retries when the tool is defined', () => {
    const base = { name: 'tool', description: 'A tool', parameters: z.object({}), execute: () => 'ok' };
    expect(() => llmTool({ ...base, timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    expect(() => llmTool({ ...base, retries: 1.5 })).toThrow(/retries must be a whole number/);
    expect(() => llmTool({ ...base, retries: -1 })).toThrow(/retries must be a whole number/);
  });
});
