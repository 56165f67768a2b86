import { setTimeout as sleep } from 'node:timers/promises';
import { defineAgent } from '@switchboard/runtime';
import { createScriptedModelServer, runConversation } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SupervisorOrchestrator } from '../src/index.js';
import { type RecordedSpan, RecordingTracer } from './llm-recording-tracer.js';

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

function answer(subgoals: Record<string, string>, text = '') {
  return {
    content: JSON.stringify({
      thought: 't',
      subgoals: Object.entries(subgoals).map(([agent, task]) => ({ agent, task })),
      answer: text,
    }),
    usage: { inputTokens: 10, outputTokens: 5 },
  };
}

describe('a supervisor’s trace', () => {
  it('puts the correlation id on the fan-out’s decision and on each branch, and every model call under its decision', async () => {
    const agents = ['flights', 'hotels', 'weather'].map((name) =>
      defineAgent({
        name,
        description: `Finds ${name}`,
        run: async (message) => {
          await sleep(5);
          return `${name}: ${message}`;
        },
      }),
    );
    const server = await createScriptedModelServer({
      script: [
        answer({ flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weather' }),
        answer({}, 'All set.'),
      ],
    });
    try {
      const orchestrator = new SupervisorOrchestrator({
        agents: agents.map(({ name, description }) => ({ name, description })),
        model: 'supervisor-model',
        client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
      });
      const conversation = await runConversation({
        orchestrator,
        agents,
        messages: ['Rome?'],
        logLevel: 'silent',
      });
      await conversation.app.close();
      const turn = conversation.turns[0]!;
      const correlationId = turn.steps[0]?.annotations?.correlationId;
      expect(typeof correlationId).toBe('string');

      const spans = tracer.spans;
      const byId = new Map(spans.map((span) => [span.spanId, span]));
      const parentOf = (span: RecordedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
      const decisions = spans.filter(
        (span) =>
          span.name.startsWith('route') && span.attributes['switchboard.orchestrator'] === 'supervisor',
      );
      const fanOut = decisions.find((span) => span.attributes['switchboard.decision.kind'] === 'fan-out');
      expect(fanOut?.attributes['switchboard.correlation_id']).toBe(correlationId);
      expect(JSON.parse(String(fanOut?.attributes['switchboard.step.annotations']))).toMatchObject({
        correlationId,
        expectedBranches: 3,
        round: 1,
      });

      const branches = spans.filter((span) => span.name.startsWith('agent ') && parentOf(span) === fanOut);
      expect(branches.map((span) => span.attributes['switchboard.correlation_id'])).toEqual([
        correlationId,
        correlationId,
        correlationId,
      ]);
      expect(branches.map((span) => String(span.attributes['gen_ai.tool.call.id']))).toEqual(
        expect.arrayContaining([`${correlationId}.1`, `${correlationId}.2`, `${correlationId}.3`]),
      );

      // Both model calls are generations, each under the decision it was made for.
      const generations = spans.filter(
        (span) => span.attributes['langfuse.observation.type'] === 'generation',
      );
      expect(generations).toHaveLength(2);
      expect(generations.map((span) => parentOf(span)?.attributes['switchboard.decision.kind'])).toEqual([
        'fan-out',
        'answer',
      ]);
    } finally {
      await server.close();
    }
  });
});
