import { type AgentMeta, ROUTE_TO_USER } from '@switchboard/core';
import type { RecordedRequest, ScriptedReply } from '@switchboard/runtime/testing';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { LlmOrchestrator } from '../src/llm-orchestrator.js';
import { type ContractScenario, describeRouterContract, type RoutingExample } from './router-contract.js';

const agents: AgentMeta[] = [
  { name: 'calculator', description: 'Evaluates arithmetic expressions' },
  { name: 'clock', description: 'Tells the current time and date' },
  { name: 'weather', description: 'Gives weather forecasts' },
];
const topics: Record<string, RegExp> = {
  calculator: /\d\s*[-+*/x]\s*\d|\btimes\b|\bplus\b/i,
  clock: /\btime\b|\bdate\b/i,
  weather: /\bweather\b|\brain\b|\bforecast\b/i,
};
const routing: RoutingExample[] = [
  { message: 'what is 12 times 7', agent: 'calculator' },
  { message: 'what time is it in Tokyo', agent: 'clock' },
  { message: 'will it rain tomorrow in Lisbon', agent: 'weather' },
];
// More than any contract test needs; what is left over is not an error here.
const MODEL_CALLS = 64;

function decision(agent: string, message: string, reason: string): ScriptedReply {
  return { content: JSON.stringify({ thought: reason, agent, message, reason }) };
}

function allowedAgents(request: RecordedRequest): string[] {
  const format = request.body.response_format;
  const schema = format?.type === 'json_schema' ? format.json_schema.schema : undefined;
  return (schema?.properties as { agent?: { enum?: string[] } } | undefined)?.agent?.enum ?? [];
}

/**
 * A stand-in routing model that reads the prompt like a careful model would:
 * it sends a message to the agent whose topic it mentions, turns an agent's
 * reply into the answer, apologises for a failure, and asks otherwise. When a
 * wrapper narrows the candidates it first names the matching agent anyway (as
 * a model ignoring the schema might) and complies once given feedback, so the
 * contract also exercises the router's validation and retry.
 */
function routingModel(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  // The router's feedback on an invalid answer follows that answer.
  const retried = /is not an available agent|^Your answer/.test(String(messages.at(-1)?.content));
  const last = String((retried ? messages.at(-3) : messages.at(-1))?.content ?? '');
  const allowed = allowedAgents(request);
  const replied = /^\[Agent "([^"]+)" replied\]\n([\s\S]*)$/.exec(last);
  if (replied)
    return decision(ROUTE_TO_USER, `Here is what I found: ${replied[2]}`, `${replied[1]} answered`);
  const failed = /^\[Agent "([^"]+)" failed/.exec(last);
  if (failed)
    return decision(
      ROUTE_TO_USER,
      `Sorry, the ${failed[1]} agent could not answer right now.`,
      'agent failed',
    );
  const topic = Object.keys(topics).find((agent) => topics[agent]?.test(last));
  if (topic && (allowed.includes(topic) || !retried))
    return decision(topic, last, `the message is about ${topic}`);
  const offer = allowed.filter((name) => name !== ROUTE_TO_USER).join(', ');
  return decision(
    ROUTE_TO_USER,
    `I'm not sure what you need. I can help through: ${offer}.`,
    'no agent fits',
  );
}

describeRouterContract('LlmOrchestrator (scripted model)', async ({ test }: ContractScenario) => {
  const server = await createScriptedModelServer({
    script: Array.from({ length: MODEL_CALLS }, () => routingModel),
  });
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  return {
    orchestrator: new LlmOrchestrator({ agents, model: 'router-model', client }),
    routing,
    async close() {
      await server.close();
      expect(server.problems).toEqual([]);
      expect(server.requests.length).toBeGreaterThan(0);
      if (test === 'narrowed') {
        const corrected = server.requests.filter((request) =>
          String(request.body.messages.at(-1)?.content).includes('is not an available agent'),
        );
        expect(corrected.length, 'the narrowed test should have exercised a retry').toBeGreaterThan(0);
      }
    },
  };
});
