import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmAgent } from '../src/agents/llm-agent.js';
import { runConversation } from '../src/testing/conversation-runner.js';
import { createScriptedModelServer } from '../src/testing/scripted-model-server.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => provider.register());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
});

/** Sends every message to the writer, then hands its answer to the user. */
class ToWriter extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.content);
    return toolCall('writer', currentUserMessage(conversation).content);
  }
}

describe('llmAgent in the runtime', () => {
  it("streams the model's text as agent-delta events that add up to the reply, with the generation under the agent span", async () => {
    const server = await createScriptedModelServer({
      script: [{ content: 'Roses are red, violets are blue.', usage: { inputTokens: 12, outputTokens: 9 } }],
    });
    const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
    const writer = llmAgent({
      name: 'writer',
      description: 'Writes poems',
      model: 'poet-1',
      instructions: 'Write short poems.',
      client,
    });
    try {
      const run = await runConversation({
        orchestrator: ToWriter,
        agents: [writer],
        messages: ['a poem please'],
      });
      await run.app.close();

      const deltas = run.events.flatMap((event) => (event.type === 'agent-delta' ? [event.delta] : []));
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join('')).toBe('Roses are red, violets are blue.');
      expect(run.turns[0]?.reply).toBe('Roses are red, violets are blue.');
      expect(server.requests[0]?.body.messages.at(-1)).toEqual({ role: 'user', content: 'a poem please' });

      const spans = exporter.getFinishedSpans();
      const generation = spans.find((span) => span.attributes['langfuse.observation.type'] === 'generation');
      const parent = spans.find(
        (span) => span.spanContext().spanId === generation?.parentSpanContext?.spanId,
      );
      expect(generation?.attributes).toMatchObject({
        'gen_ai.request.model': 'poet-1',
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 9,
      });
      expect(parent?.name).toContain('writer');
      server.assertDone();
    } finally {
      await server.close();
    }
  });
});
