/**
 * `ORCHESTRATOR=supervisor|plan|meta`: the multi-agent patterns over the demo
 * agents, on an OpenAI-compatible endpoint (`OPENAI_BASE_URL`) played by the
 * scripted model server. Each test builds the server as `src/main.ts` does,
 * from environment variables, and runs one turn over HTTP.
 */
import { ConfigurationError } from '@switchboard/core';
import type { TurnResult } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptEntry,
  type ScriptedModelServer,
} from '@switchboard/runtime/testing';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildServerApp, type ServerApp } from '../src/build-app.js';
import { readConfig } from '../src/config.js';
import { startServer } from './support/server-process.js';

const NOW = new Date('2026-05-05T15:04:00Z');

/** The name of the JSON schema a model request asks for: what the call is for. */
const stageOf = (request: RecordedRequest) =>
  request.body.response_format?.type === 'json_schema' ? request.body.response_format.json_schema.name : '';

const lastPrompt = (request: RecordedRequest) => String(request.body.messages.at(-1)?.content ?? '');

/** The replies the prompt shows as `[Agent "<name>" replied]`, in order. */
const agentReplies = (request: RecordedRequest) =>
  [...lastPrompt(request).matchAll(/\[Agent "[^"]+" replied\]\n([^[]*)/g)].map((match) => match[1]!.trim());

/**
 * A model that answers each call by the schema it asks for, with the JSON
 * `answers[schema]` builds; a call for any other schema fails the test
 * (`model.problems`). Serves up to `length` calls.
 */
function byStage(answers: Record<string, (request: RecordedRequest) => object>, length = 8): ScriptEntry[] {
  const entry: ScriptEntry = (request) => {
    const answer = answers[stageOf(request)];
    if (!answer) throw new Error(`no scripted answer for a '${stageOf(request)}' call`);
    return { content: JSON.stringify(answer(request)) };
  };
  return Array.from({ length }, () => entry);
}

/** Builds the server for `ORCHESTRATOR=<orchestrator>` against `model`, runs `test`, and closes it. */
async function withServer(
  orchestrator: string,
  script: ScriptEntry[],
  test: (server: ServerApp, model: ScriptedModelServer) => Promise<void>,
): Promise<void> {
  const model = await createScriptedModelServer({ script });
  const config = readConfig({
    ORCHESTRATOR: orchestrator,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: model.url,
    OPENAI_MODEL: 'scripted-model',
  });
  const server = buildServerApp(config, {
    agents: { clock: { now: () => NOW, timeZone: 'Europe/Paris' } },
    logger: pino({ level: 'silent' }),
  });
  server.app.mount(server.orchestrator);
  try {
    await test(server, model);
    expect(model.problems).toEqual([]);
    // Every call went to the configured model.
    expect(new Set(model.requests.map((request) => request.body.model))).toEqual(new Set(['scripted-model']));
  } finally {
    await server.app.close();
    await model.close();
  }
}

async function chat({ app }: ServerApp, message: string): Promise<TurnResult> {
  const response = await app.request('/v1/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as TurnResult;
}

const subGoals = (goals: Record<string, string>) => ({
  thought: 'independent parts',
  subgoals: Object.entries(goals).map(([agent, task]) => ({ agent, task })),
  answer: '',
});
const synthesis = (request: RecordedRequest) => ({
  thought: 'from the replies',
  subgoals: [],
  answer: agentReplies(request).join('\n'),
});

describe('ORCHESTRATOR=supervisor', () => {
  it('splits a two-part question over two demo agents at once and answers from both replies', async () => {
    const script = byStage({
      supervisor_plan: () =>
        subGoals({ calculator: 'what is 2 + 3 * 4?', converter: 'convert 5 km to miles' }),
      supervisor_synthesis: synthesis,
    });
    await withServer('supervisor', script, async (server, model) => {
      expect(server.description).toContain('orchestrator supervisor');
      const body = await chat(server, 'what is 2 + 3 * 4, and how many miles is 5 km?');
      expect(body.status).toBe('completed');
      expect(body.reply).toBe('2 + 3 * 4 = 14\n5 kilometers = 3.10686 miles');

      const [fanOut, answer] = body.steps;
      expect(fanOut).toMatchObject({ kind: 'fan-out', annotations: { expectedBranches: 2, round: 1 } });
      const correlationId = String(fanOut?.annotations?.correlationId);
      expect(
        fanOut?.calls.map((call) => [call.agent, call.toolCallId.startsWith(`${correlationId}.`)]),
      ).toEqual([
        ['calculator', true],
        ['converter', true],
      ]);
      expect(answer).toMatchObject({ kind: 'answer', annotations: { missing: [] } });
      expect(model.requests.map(stageOf)).toEqual(['supervisor_plan', 'supervisor_synthesis']);
    });
  });
});

describe('ORCHESTRATOR=plan', () => {
  it('runs a step that needs an earlier result after it, and answers from the plan', async () => {
    const script = byStage({
      plan: () => ({
        thought: 'sum first, then convert it',
        steps: [
          { id: 'sum', agent: 'calculator', goal: 'what is 2 + 3 * 4?', dependsOn: [] },
          { id: 'miles', agent: 'converter', goal: 'convert 14 km to miles', dependsOn: ['sum'] },
        ],
        answer: '',
      }),
      plan_review: () => ({ thought: 'the plan stands', revise: false, steps: [], answer: '' }),
      plan_synthesis: (request) => ({
        thought: 'the last step has it',
        answer: `2 + 3 * 4 = 14, and ${/\[Step "miles"[^\n]*\] done:\n(.*)/.exec(lastPrompt(request))?.[1] ?? '?'}`,
      }),
    });
    await withServer('plan', script, async (server, model) => {
      expect(server.description).toContain('orchestrator plan');
      const body = await chat(server, 'add 2 + 3 * 4 km, then convert that to miles');
      expect(body.status).toBe('completed');
      expect(body.reply).toBe('2 + 3 * 4 = 14, and 14 kilometers = 8.6992 miles');

      expect(body.steps[0]).toMatchObject({ kind: 'note', label: 'plan' });
      const rounds = body.steps.filter((step) => step.annotations?.planSteps !== undefined);
      expect(
        rounds.map((step) => [step.calls.map((call) => call.agent), step.annotations?.planSteps]),
      ).toEqual([
        [['calculator'], ['sum']],
        [['converter'], ['miles']],
      ]);
      // The converter was given the calculator's result with its goal.
      expect(rounds[1]?.calls[0]?.message).toContain('2 + 3 * 4 = 14');
      expect(model.requests.map(stageOf)[0]).toBe('plan');
      expect(model.requests.map(stageOf).at(-1)).toBe('plan_synthesis');
    });
  });
});

describe('ORCHESTRATOR=meta', () => {
  it('classifies the request, hands it to the supervisor pattern, and records the choice', async () => {
    const script = byStage({
      task_type_choice: () => ({
        thought: 'two questions',
        task_type: 'several',
        rationale: 'two independent questions',
        confidence: 0.9,
      }),
      supervisor_plan: () => subGoals({ clock: 'what time is it in Tokyo?', calculator: 'what is 6 * 7?' }),
      supervisor_synthesis: synthesis,
    });
    await withServer('meta', script, async (server, model) => {
      expect(server.description).toContain('orchestrator meta');
      const body = await chat(server, 'what time is it in Tokyo, and what is 6 * 7?');
      expect(body.status).toBe('completed');
      expect(body.reply).toBe(
        'It is 00:04 on Wednesday, 6 May 2026 in Tokyo (Asia/Tokyo, GMT+9).\n6 * 7 = 42',
      );

      const [route, fanOut] = body.steps;
      expect(route).toMatchObject({
        kind: 'note',
        label: 'meta-route',
        annotations: {
          taskType: 'several',
          pattern: 'supervisor',
          chooser: 'model',
          candidates: { taskTypes: ['single', 'several', 'multi-step'] },
        },
      });
      expect(fanOut).toMatchObject({
        kind: 'fan-out',
        annotations: { pattern: 'supervisor', expectedBranches: 2 },
      });
      expect(model.requests.map(stageOf)).toEqual([
        'task_type_choice',
        'supervisor_plan',
        'supervisor_synthesis',
      ]);
    });
  });
});

describe('the patterns without OPENAI_API_KEY', () => {
  it('are refused when the configuration is read, naming what to set', () => {
    for (const orchestrator of ['supervisor', 'plan', 'meta']) {
      let thrown: unknown;
      try {
        readConfig({ ORCHESTRATOR: orchestrator });
      } catch (error) {
        thrown = error;
      }
      expect(ConfigurationError.isInstance(thrown), String(thrown)).toBe(true);
      expect(String(thrown)).toContain(`ORCHESTRATOR=${orchestrator} needs OPENAI_API_KEY`);
    }
  });

  it('stop the server at start-up with one clear line', async () => {
    const server = startServer({ ORCHESTRATOR: 'meta', OPENAI_API_KEY: '' });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr).toContain('switchboard: ORCHESTRATOR=meta needs OPENAI_API_KEY');
  });
});
