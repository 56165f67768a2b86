import type { AgentMeta } from '@switchboard/core';
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { PlanExecuteOrchestrator } from '../src/index.js';
import { describeRouterContract, type RoutingExample } from './router-contract.js';

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

function answer(fields: Record<string, unknown>): ScriptedReply {
  return { content: JSON.stringify(fields), usage: { inputTokens: 30, outputTokens: 8 } };
}

/**
 * A stand-in planning model, told apart by the answer's schema:
 * - `plan`: one step for the agent whose topic the message mentions (only
 *   among the agents the schema allows), or no step and a clarifying
 *   question when none fits;
 * - `revised_plan` (after a failed step): nothing more to try;
 * - `plan_review`: keep the plan (a one-step plan is never reviewed);
 * - `plan_synthesis`: the done steps' results, and an apology for each failed one.
 */
function planningModel(request: RecordedRequest): ScriptedReply {
  const format = request.body.response_format as { json_schema?: { name?: string } } | undefined;
  const schema = format?.json_schema?.name;
  const last = String(request.body.messages.at(-1)?.content ?? '');
  switch (schema) {
    case 'plan': {
      const allowed = JSON.stringify(format);
      const topic = Object.keys(topics).find(
        (agent) => topics[agent]?.test(last) && allowed.includes(`"${agent}"`),
      );
      if (!topic)
        return answer({
          thought: 'unclear',
          steps: [],
          answer: 'I am not sure what you need; could you say more?',
        });
      return answer({
        thought: 'one step',
        steps: [{ id: 'only', goal: last, agent: topic, dependsOn: [] }],
        answer: '',
      });
    }
    case 'revised_plan':
      return answer({ thought: 'nothing else can do it', steps: [], answer: '' });
    case 'plan_review':
      return answer({ thought: 'still fits', revise: false, steps: [], answer: '' });
    case 'plan_synthesis': {
      const done = [...last.matchAll(/\] done:\n([^[]*)/g)].map((match) => match[1]?.trim());
      const failed = [...last.matchAll(/\[Step "[^"]+" \(([^)]+)\)[^\]]*\] MISSING/g)].map(
        (match) => match[1],
      );
      const parts = [
        ...done.map((result) => `Here is what I found: ${result}`),
        ...failed.map((agent) => `Sorry, the ${agent} agent could not answer, so that part is missing.`),
      ];
      return answer({
        thought: 'from the results',
        answer: parts.join(' ') || 'Sorry, nothing could be done.',
      });
    }
    default:
      throw new Error(`unexpected schema ${String(schema)}`);
  }
}

describeRouterContract('PlanExecuteOrchestrator (scripted model)', async () => {
  const server = await createScriptedModelServer({
    script: Array.from({ length: 64 }, () => planningModel),
  });
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  return {
    orchestrator: new PlanExecuteOrchestrator({ agents, model: 'planner-model', client }),
    routing,
    async close() {
      await server.close();
      expect(server.problems).toEqual([]);
    },
  };
});
