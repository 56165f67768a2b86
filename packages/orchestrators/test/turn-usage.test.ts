import { App, type AppOptions, agentMeta, llmAgent } from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { LlmOrchestrator } from '../src/llm-orchestrator.js';

const route = (agent: string, message: string) =>
  JSON.stringify({ thought: 'routing', agent, message, reason: 'test' });

/** The router's first decision and the writer's reply, as the scripted model answers them. */
const FIRST_TWO_CALLS = [
  { content: route('writer', 'a haiku about tea'), usage: { inputTokens: 100, outputTokens: 10 } },
  { content: 'Steam curls from the cup', usage: { inputTokens: 40, outputTokens: 7 } },
];

/** An LLM router over a `writer` llmAgent, both calling `server` through the `openai` client. */
function routedWriter(server: { url: string }, options: Partial<AppOptions> & { maxTokens?: number } = {}) {
  const { maxTokens, ...appOptions } = options;
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  const writer = llmAgent({
    name: 'writer',
    description: 'Writes poems',
    model: 'poet',
    instructions: 'Write.',
    maxTokens,
    client,
  });
  return new App({ name: 'usage', agents: [writer], ...appOptions }).mount(
    new LlmOrchestrator({ name: 'router', agents: [agentMeta(writer)], model: 'router-model', client }),
  );
}

describe('the token usage of a turn', () => {
  it('sums every model call of the turn, the router’s and the agent’s, per decision and for the turn', async () => {
    const server = await createScriptedModelServer({
      script: [
        ...FIRST_TWO_CALLS,
        {
          content: route('route_to_user', 'Steam curls from the cup'),
          usage: { inputTokens: 120, outputTokens: 12 },
        },
      ],
    });
    const app = routedWriter(server);
    try {
      const result = await app.chat({ message: 'a haiku please', sessionId: 'usage' });
      expect(result.reply).toBe('Steam curls from the cup');
      expect(result.steps.map((step) => [step.kind, step.usage])).toEqual([
        ['call', { inputTokens: 140, outputTokens: 17 }],
        ['answer', { inputTokens: 120, outputTokens: 12 }],
      ]);
      expect(result.usage).toEqual({ inputTokens: 260, outputTokens: 29 });
      const [stored] = await app.sessions.listTurns('usage');
      expect(stored!.usage).toEqual(result.usage);
      expect(stored!.steps).toEqual(result.steps);
      server.assertDone();
    } finally {
      await app.close();
      await server.close();
    }
  });
});

describe('a spending budget with an LLM router', () => {
  it('checks the router’s own model calls: the turn ends budget_exceeded before the call that could pass it', async () => {
    // The router's first call may take its input (about 240 by the estimate) and 300 more: within 600. Then
    // router 110 + writer 47 = 157 spent, and the router's next call may take its input and 300 more: past 600.
    const server = await createScriptedModelServer({ script: FIRST_TWO_CALLS });
    const app = routedWriter(server, {
      maxTokens: 20,
      logLevel: 'silent',
      budgets: { turn: { totalTokens: 600 }, defaultMaxOutputTokens: 300 },
    });
    try {
      const result = await app.chat({ message: 'a haiku please' });
      expect(result.status).toBe('budget_exceeded');
      expect(result.reply).toContain('Steam curls from the cup');
      expect(server.requests).toHaveLength(2);
      expect(result.steps.find((step) => step.label === 'budget')?.annotations).toMatchObject({
        scope: 'turn',
        limit: 'totalTokens',
        used: 157,
      });
      server.assertDone();
    } finally {
      await app.close();
      await server.close();
    }
  });
});
