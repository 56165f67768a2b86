import { ConfigurationError } from '@switchboard/core';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llmAgent } from '../src/agents/llm-agent.js';
import { llmTool } from '../src/agents/llm-tool.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { ScriptEntry } from '../src/testing/scripted-script.js';
import { runAgent } from './llm-test-support.js';
import { lapse, settlesBefore } from './support/settles-before.js';

let server: ScriptedModelServer;
let client: OpenAI;
afterEach(async () => server?.close());

async function script(entries: ScriptEntry[]) {
  server = await createScriptedModelServer({ script: entries });
  client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

const add = llmTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

describe('llmAgent options', () => {
  it('cancels the model request when the context signal aborts', async () => {
    const answerDelayMs = 10_000;
    await script([{ content: 'too late', delayMs: answerDelayMs }]);
    const agent = llmAgent({ name: 'slow', description: 'Slow', model: 'm', instructions: 'x', client });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('timed out')), 50);
    // Given up on abort, not when the late answer comes.
    const run = settlesBefore(
      runAgent(agent, 'hi', controller.signal),
      lapse(answerDelayMs),
      'the late answer',
    );
    await expect(run).rejects.toThrow(/abort/i);
  });

  it('creates its own client from apiKey and baseURL on first use', async () => {
    await script(['created lazily']);
    const agent = llmAgent({
      name: 'lazy',
      description: 'Lazy',
      model: 'm',
      instructions: 'x',
      apiKey: 'key-123',
      baseURL: server.url,
    });
    expect(server.requests).toHaveLength(0);
    expect((await runAgent(agent, 'hi')).content).toBe('created lazily');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer key-123');
  });

  it('rejects a bad configuration at construction', () => {
    const base = { name: 'bad', description: 'Bad', model: 'm', instructions: 'x' };
    const attempts = [
      () => llmAgent(base),
      () => llmAgent({ ...base, apiKey: 'k', maxIterations: 0 }),
      () => llmAgent({ ...base, apiKey: 'k', tools: [add, add] }),
      () => llmAgent({ ...base, apiKey: 'k', model: '' }),
      () => llmAgent({ ...base, apiKey: 'k', name: 'has spaces' }),
      () => llmTool({ name: 'bad name', description: 'x', parameters: z.object({}), execute: () => 'x' }),
    ];
    const messages = attempts.map((attempt) => {
      try {
        attempt();
        return 'no error';
      } catch (error) {
        expect(ConfigurationError.isInstance(error)).toBe(true);
        return (error as Error).message;
      }
    });
    expect(messages).toEqual([
      expect.stringContaining('needs a client or an apiKey'),
      expect.stringContaining('maxIterations must be a positive integer'),
      expect.stringContaining("two tools named 'add'"),
      expect.stringContaining('needs a model name'),
      expect.stringContaining("Invalid agent 'has spaces'"),
      expect.stringContaining("Tool name 'bad name' is invalid"),
    ]);
  });
});
