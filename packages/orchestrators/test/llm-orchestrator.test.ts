import {
  type AgentMeta,
  ConfigurationError,
  type Conversation,
  OrchestratorError,
  ROUTE_TO_USER,
} from '@switchboard/core';
import type { ScriptEntry } from '@switchboard/runtime/testing';
import { createScriptedModelServer, type ScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LlmOrchestrator, type LlmOrchestratorOptions } from '../src/llm-orchestrator.js';
import { RecordingTracer } from './llm-recording-tracer.js';
import { TestSession } from './support/turn-driver.js';

const agents: AgentMeta[] = [
  { name: 'calculator', description: 'Evaluates arithmetic expressions' },
  { name: 'clock', description: 'Tells the current time and date' },
  { name: 'weather', description: 'Gives weather forecasts' },
];

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function answer(agent: string, message: string, reason = `because ${agent}`): string {
  return JSON.stringify({ thought: `thinking about ${agent}`, agent, message, reason });
}

async function router(script: ScriptEntry[], options: Partial<LlmOrchestratorOptions> = {}) {
  server = await createScriptedModelServer({ script });
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  return { server, orchestrator: new LlmOrchestrator({ agents, model: 'router-model', client, ...options }) };
}

function messagesOf(server: ScriptedModelServer, index: number) {
  return server.requests[index]?.body.messages ?? [];
}

describe('LlmOrchestrator', () => {
  it("routes to the model's chosen agent with its task, thought and reason, then answers the user", async () => {
    const { server, orchestrator } = await router([
      answer('clock', 'Tell the current time in Oslo', 'time question'),
      answer(ROUTE_TO_USER, 'It is 14:05 in Oslo.', 'the clock answered'),
    ]);
    const session = new TestSession({ orchestrator, agents: { clock: () => '14:05 CET' } });
    const outcome = await session.send('What time is it in Oslo?');

    expect(outcome.agentCalls).toEqual([
      expect.objectContaining({
        toolName: 'clock',
        message: 'Tell the current time in Oslo',
        thought: 'thinking about clock',
        reason: 'time question',
      }),
    ]);
    expect(outcome).toMatchObject({ status: 'completed', reply: 'It is 14:05 in Oslo.' });
    expect(messagesOf(server, 1).slice(1)).toEqual([
      { role: 'user', content: 'What time is it in Oslo?' },
      { role: 'user', content: '[Agent "clock" replied]\n14:05 CET' },
    ]);
    server.assertDone();
  });

  it('routes again after an agent reply when the model asks for another agent', async () => {
    const { server, orchestrator } = await router([
      answer('clock', 'What is the date?'),
      answer('weather', 'Forecast for 2 May'),
      answer(ROUTE_TO_USER, 'Sunny on 2 May.'),
    ]);
    const outcome = await new TestSession({ orchestrator }).send('Weather today?');
    expect(outcome.agentCalls.map((call) => call.toolName)).toEqual(['clock', 'weather']);
    expect(outcome.reply).toBe('Sunny on 2 May.');
    server.assertDone();
  });

  it('recovers from a malformed answer by retrying once with feedback', async () => {
    const { server, orchestrator } = await router([
      'I think the calculator, {agent: calculator',
      answer('calculator', '2 + 2'),
    ]);
    const { result: decision, span } = await tracer.inSpan('decision', async () =>
      orchestrator.decide(conversation('2 + 2?')),
    );

    expect(decision).toMatchObject({ toolName: 'calculator', message: '2 + 2' });
    const retry = messagesOf(server, 1);
    expect(retry.slice(-2)).toEqual([
      { role: 'assistant', content: 'I think the calculator, {agent: calculator' },
      {
        role: 'user',
        content: expect.stringMatching(
          /^Your answer was not valid JSON .*fields thought, agent, message and reason/,
        ),
      },
    ]);
    expect(span.attributes['switchboard.route.retries']).toBe(1);
    server.assertDone();
  });

  it('recovers from the choice of an unknown agent by retrying with the allowed names', async () => {
    const { server, orchestrator } = await router([
      answer('stocks', 'AAPL price'),
      answer('calculator', 'price lookup'),
    ]);
    const outcome = await new TestSession({ orchestrator, agents: {} }).send('price of AAPL?', {
      candidates: ['calculator', 'clock'],
    });

    expect(outcome.agentCalls[0]?.toolName).toBe('calculator');
    expect(messagesOf(server, 1).at(-1)).toEqual({
      role: 'user',
      content: expect.stringContaining(
        '"stocks" is not an available agent. Choose "agent" from: "calculator", "clock", "route_to_user".',
      ),
    });
  });

  it('falls back after repeated invalid answers: a message, an agent, or an error', async () => {
    const bad = ['not json', answer('stocks', 'x')];
    const withMessage = await router(bad, { fallback: { message: 'Sorry, I could not route that.' } });
    const first = await new TestSession({ orchestrator: withMessage.orchestrator }).send('hm?');
    expect(first).toMatchObject({
      status: 'completed',
      reply: 'Sorry, I could not route that.',
      agentCalls: [],
    });
    expect(withMessage.server.requests).toHaveLength(2);
    await withMessage.server.close();

    const withAgent = await router([...bad, answer(ROUTE_TO_USER, 'done')], {
      fallback: { agent: 'weather' },
    });
    const second = await new TestSession({ orchestrator: withAgent.orchestrator }).send('rain?');
    expect(second.agentCalls).toEqual([expect.objectContaining({ toolName: 'weather', message: 'rain?' })]);
    await withAgent.server.close();

    const without = await router(bad, { maxRetries: 1 });
    const third = await new TestSession({ orchestrator: without.orchestrator }).send('hm?');
    expect(third.status).toBe('failed');
    expect(OrchestratorError.isInstance(third.error)).toBe(true);
    expect(third.error?.message).toContain('no valid routing answer after 2 attempts');
    without.server.assertDone();
  });

  it('uses the fallback when the model endpoint fails, and records it on the span', async () => {
    const { orchestrator } = await router([{ error: { status: 503, message: 'overloaded' } }], {
      fallback: { message: 'Please try again shortly.' },
    });
    const { result, span } = await tracer.inSpan('decision', async () =>
      orchestrator.decide(conversation('hi')),
    );
    expect(result).toMatchObject({ toolName: ROUTE_TO_USER, message: 'Please try again shortly.' });
    expect(span.attributes['switchboard.route.fallback']).toBe(true);
  });

  it('prompts with only the candidate agents and constrains the answer to them plus route_to_user', async () => {
    const { server, orchestrator } = await router([
      answer('weather', 'forecast'),
      answer('weather', 'forecast'),
    ]);
    const narrowed = () => agents.filter((agent) => agent.name !== 'calculator');
    await orchestrator.decide(conversation('rain?', narrowed()));
    await orchestrator.decide(conversation('rain?', narrowed()));

    const [first, second] = server.requests;
    const system = String(first?.body.messages[0]?.content);
    expect(system).toContain('- clock: Tells the current time and date');
    expect(system).toContain('- weather: Gives weather forecasts');
    expect(system).not.toContain('calculator');
    const format = first?.body.response_format;
    expect(format).toMatchObject({ type: 'json_schema', json_schema: { strict: true } });
    const schema = format?.type === 'json_schema' ? format.json_schema.schema : undefined;
    expect((schema?.properties as { agent?: { enum: string[] } } | undefined)?.agent?.enum).toEqual([
      'clock',
      'weather',
      ROUTE_TO_USER,
    ]);
    expect(second?.body.response_format).toEqual(format);
    server.assertDone();
  });

  it('shows the model only the recent window of history, but the whole current turn', async () => {
    const { server, orchestrator } = await router([answer(ROUTE_TO_USER, 'hello')], { historyWindow: 3 });
    const earlier = Array.from({ length: 10 }, (_, index) => userMessage(`old message ${index}`));
    await orchestrator.decide({
      sessionId: 's',
      turnId: 't',
      messages: [...earlier, userMessage('now')],
      turnStart: 10,
      hop: 0,
      agents,
    });
    expect(messagesOf(server, 0).map((message) => message.content)).toEqual([
      expect.any(String),
      'old message 8',
      'old message 9',
      'now',
    ]);
  });

  it('records candidates, choice, reason, retries and usage on the decision span, with a generation per model call', async () => {
    const { orchestrator } = await router([
      { content: answer('unknown', 'x'), usage: { inputTokens: 100, outputTokens: 20 } },
      {
        content: answer('clock', 'time please', 'asks for the time'),
        usage: { inputTokens: 130, outputTokens: 25 },
      },
    ]);
    tracer.spans.length = 0;
    const { span } = await tracer.inSpan('decision', async () => orchestrator.decide(conversation('time?')));
    expect(span.attributes).toMatchObject({
      'switchboard.route.candidates': ['calculator', 'clock', 'weather'],
      'switchboard.route.choice': 'clock',
      'switchboard.route.reason': 'asks for the time',
      'switchboard.route.retries': 1,
      'switchboard.route.usage.input_tokens': 230,
      'switchboard.route.usage.output_tokens': 45,
    });
    const generations = tracer.spans.filter(
      (recorded) => recorded.attributes['langfuse.observation.type'] === 'generation',
    );
    expect(
      generations.map((generation) => [
        generation.scope,
        generation.parentSpanId,
        generation.attributes['gen_ai.request.model'],
        generation.attributes['gen_ai.usage.input_tokens'],
      ]),
    ).toEqual([
      ['switchboard', span.spanId, 'router-model', 100],
      ['switchboard', span.spanId, 'router-model', 130],
    ]);
  });

  it('rejects a bad configuration at construction', () => {
    const client = new OpenAI({ apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1' });
    const make = (options: Partial<LlmOrchestratorOptions>) => () =>
      new LlmOrchestrator({ agents, model: 'm', client, ...options });
    const attempts: [() => unknown, string][] = [
      [make({ fallback: { agent: 'nobody' } }), "fallback agent 'nobody' is not one of its agents"],
      [make({ historyWindow: 0 }), 'historyWindow must be a positive integer'],
      [make({ model: '' }), 'needs a model name'],
      [make({ client: undefined }), 'needs a client or an apiKey'],
    ];
    for (const [attempt, message] of attempts) {
      const error = thrown(attempt);
      expect(ConfigurationError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toContain(message);
    }
  });
});

function thrown(attempt: () => unknown): unknown {
  try {
    attempt();
  } catch (error) {
    return error;
  }
  return undefined;
}

function userMessage(content: string) {
  return { id: `m-${content}`, role: 'user' as const, content, createdAt: new Date().toISOString() };
}

function conversation(content: string, candidates: readonly AgentMeta[] = agents): Conversation {
  return {
    sessionId: 's',
    turnId: 't',
    messages: [userMessage(content)],
    turnStart: 0,
    hop: 0,
    agents: candidates,
  };
}
