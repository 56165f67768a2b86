import { App, defineAgent, llmAgent, remoteAgent, type ServerHandle } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  runConversation,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Relay } from '../../runtime/test/support/relay-orchestrator.js';
import { PlanExecuteOrchestrator, SupervisorOrchestrator } from '../src/index.js';

/** One scripted model for everyone: the pattern's structured calls, and the llmAgent's plain ones. */
function respond(request: RecordedRequest) {
  const format = request.body.response_format;
  const schema = format?.type === 'json_schema' ? format.json_schema.name : undefined;
  const last = String(request.body.messages.at(-1)?.content ?? '');
  if (schema === 'supervisor_plan')
    return {
      content: JSON.stringify({
        thought: 'split',
        subgoals: [
          { agent: 'flights', task: 'Flights to Rome' },
          { agent: 'concierge', task: 'A restaurant in Rome' },
          { agent: 'weather', task: 'Rome weather' },
        ],
        answer: '',
      }),
    };
  if (schema === 'supervisor_synthesis' || schema === 'plan_synthesis')
    return { content: JSON.stringify({ thought: 'done', subgoals: [], answer: `Summary of: ${last}` }) };
  if (schema === 'plan')
    return {
      content: JSON.stringify({
        thought: 'plan',
        steps: [
          { id: 'fly', goal: 'Flights to Rome', agent: 'flights', dependsOn: [] },
          { id: 'eat', goal: 'A restaurant near the hotel', agent: 'concierge', dependsOn: ['fly'] },
          { id: 'sky', goal: 'Rome weather', agent: 'weather', dependsOn: ['eat'] },
        ],
        answer: '',
      }),
    };
  if (schema === 'plan_review')
    return { content: JSON.stringify({ thought: 'fine', revise: false, steps: [], answer: '' }) };
  // The concierge: an llmAgent answering in plain text.
  return { content: `Trattoria da Enzo (asked: ${last.slice(0, 40)})` };
}

describe('patterns over a mix of agents: a function, an llmAgent and a remote Switchboard server', () => {
  let remote: ServerHandle;
  beforeAll(async () => {
    const forecaster = defineAgent({
      name: 'forecast',
      description: 'Forecasts',
      run: (message) => `Sunny (${message})`,
    });
    remote = await new App({ name: 'weather-service', agents: [forecaster], logLevel: 'silent' }).start(
      Relay,
      { port: 0 },
    );
  });
  afterAll(() => remote.close());

  for (const pattern of ['supervisor', 'plan-execute'] as const) {
    it(`${pattern}: every kind of agent answers, and the answer is built from all three`, async () => {
      const server = await createScriptedModelServer({ script: Array.from({ length: 8 }, () => respond) });
      try {
        const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
        const agents = [
          defineAgent({
            name: 'flights',
            description: 'Finds flights',
            run: (message) => `AZ 611 (${message})`,
          }),
          llmAgent({
            name: 'concierge',
            description: 'Recommends restaurants',
            model: 'concierge-model',
            client,
            instructions: 'Recommend one restaurant.',
          }),
          remoteAgent({ name: 'weather', description: 'Weather forecasts', url: remote.url }),
        ];
        const metas = agents.map(({ name, description }) => ({ name, description }));
        const orchestrator =
          pattern === 'supervisor'
            ? new SupervisorOrchestrator({ agents: metas, model: 'boss', client })
            : new PlanExecuteOrchestrator({ agents: metas, model: 'boss', client });
        const conversation = await runConversation({
          orchestrator,
          agents,
          messages: ['A weekend in Rome'],
          logLevel: 'silent',
        });
        await conversation.app.close();
        const turn = conversation.turns[0]!;
        expect(turn.status).toBe('completed');
        // The synthesis read each kind of agent's reply.
        expect(turn.reply).toContain('AZ 611');
        expect(turn.reply).toContain('Trattoria da Enzo');
        expect(turn.reply).toContain('ok: Sunny');
        expect(server.requests.some((request) => request.body.model === 'concierge-model')).toBe(true);
      } finally {
        await server.close();
      }
    });
  }
});
