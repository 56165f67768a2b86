import { randomUUID } from 'node:crypto';
import type { App, TurnRecord, TurnResult } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
} from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { type AgentRun, SimulatedDesk, TOPICS } from '../src/desk.js';
import { briefingModel } from '../src/offline-model.js';

const REQUEST = 'Write me a short briefing on honeybees';
const bees = TOPICS.find((topic) => topic.name === 'honeybees')!;
const SECTIONS = bees.notes.map((note) => note.heading).join(', ');
const BRIEFING = `Honeybees, a briefing. It covers: ${SECTIONS}. Key figures: ${bees.figures.join('; ')}.`;

interface Desk {
  app: App;
  model: ScriptedModelServer;
  desk: SimulatedDesk;
}

/**
 * Runs `test` against the briefing desk on a scripted planning model (the
 * example's offline model, served for up to 10 requests), with agents that
 * work for 30 ms and those in `down` failing. The model must have received
 * no request it would refuse and no unscripted one.
 */
async function withDesk(down: string[], test: (desk: Desk) => Promise<void>): Promise<void> {
  const model = await createScriptedModelServer({ script: Array.from({ length: 10 }, () => briefingModel) });
  const desk = new SimulatedDesk({ latencyMs: 30, down });
  const { app, orchestrator } = buildApp({
    model: 'gpt-4o-mini',
    apiKey: 'test-key',
    baseURL: model.url,
    maxRetries: 0,
    desk,
    logLevel: 'silent',
  });
  app.mount(orchestrator);
  try {
    await test({ app, model, desk });
    expect(model.problems).toEqual([]);
  } finally {
    await app.close();
    await model.close();
  }
}

const chat = async (app: App, message: string, sessionId = `ses-${randomUUID()}`) => {
  const response = await app.request('/v1/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, message }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as TurnResult;
};

/** The run of each agent, by agent name (each runs once in these tests). */
const runsByAgent = (runs: readonly AgentRun[]) =>
  Object.fromEntries(runs.map((run) => [run.agent, run])) as Record<string, AgentRun>;

/** What each model request was for: the name of the schema it asked for. */
const stages = (requests: readonly RecordedRequest[]) =>
  requests.map((request) =>
    request.body.response_format?.type === 'json_schema' ? request.body.response_format.json_schema.name : '',
  );

describe('plan-execute example over HTTP (scripted model)', () => {
  it('runs each step after the steps it depends on, and the independent ones together', async () => {
    await withDesk([], async ({ app, desk }) => {
      const body = await chat(app, REQUEST);
      expect(body.status).toBe('completed');
      expect(body.reply).toBe(BRIEFING);

      const { researcher, factbook, outliner, writer } = runsByAgent(desk.runs);
      expect(desk.runs).toHaveLength(4);
      // research and facts depend on nothing: they overlapped.
      expect(Math.max(researcher!.startedAt, factbook!.startedAt)).toBeLessThan(
        Math.min(researcher!.endedAt!, factbook!.endedAt!),
      );
      // outline waited for research; write waited for outline and facts.
      expect(outliner!.startedAt).toBeGreaterThanOrEqual(researcher!.endedAt!);
      expect(writer!.startedAt).toBeGreaterThanOrEqual(Math.max(outliner!.endedAt!, factbook!.endedAt!));
      // And each received the results it depends on.
      expect(outliner!.task).toContain(`- ${bees.notes[0]!.heading}: ${bees.notes[0]!.text}`);
      expect(writer!.task).toContain(`1. ${bees.notes[0]!.heading}`);
      expect(writer!.task).toContain(`* ${bees.figures[0]}`);
    });
  });

  it('shows the plan as a note step, then one step per round, in GET /v1/sessions/:id', async () => {
    await withDesk([], async ({ app }) => {
      const sessionId = `ses-${randomUUID()}`;
      await chat(app, REQUEST, sessionId);
      const response = await app.request(`/v1/sessions/${sessionId}`);
      expect(response.status).toBe(200);
      const { turns } = (await response.json()) as { turns: TurnRecord[] };
      const steps = turns[0]!.steps;

      expect(steps[0]).toMatchObject({ kind: 'note', label: 'plan' });
      expect(steps[0]?.annotations?.steps).toEqual([
        { id: 'research', agent: 'researcher', goal: 'Gather background notes on honeybees', dependsOn: [] },
        { id: 'facts', agent: 'factbook', goal: 'Look up key figures about honeybees', dependsOn: [] },
        {
          id: 'outline',
          agent: 'outliner',
          goal: 'Outline a short briefing on honeybees from the notes',
          dependsOn: ['research'],
        },
        {
          id: 'write',
          agent: 'writer',
          goal: 'Write a short briefing on honeybees from the outline and the key figures',
          dependsOn: ['outline', 'facts'],
        },
      ]);
      const rounds = steps.filter((step) => step.annotations?.planSteps !== undefined);
      expect(rounds.map((step) => [step.kind, step.annotations?.planSteps])).toEqual([
        ['fan-out', ['research', 'facts']],
        ['call', ['outline']],
        ['call', ['write']],
      ]);
      expect(steps.at(-1)).toMatchObject({ kind: 'answer', annotations: { failed: [], replans: 0 } });
    });
  });

  it('re-plans once when a step fails, and the answer says what could not be done', async () => {
    await withDesk(['factbook'], async ({ app, model, desk }) => {
      const body = await chat(app, REQUEST);
      expect(body.status).toBe('completed');
      expect(body.reply).toBe(
        `Honeybees, a briefing. It covers: ${SECTIONS}. Key figures: not available.\n\nCould not be done: Look up key figures about honeybees.`,
      );

      // One re-plan, after the failure: the new plan replaces the steps that had not run.
      expect(stages(model.requests).filter((stage) => stage === 'revised_plan')).toHaveLength(1);
      const replans = body.steps.filter((step) => step.kind === 'note' && step.label === 'replan');
      expect(replans).toHaveLength(1);
      expect(replans[0]?.annotations).toMatchObject({
        replan: 1,
        failed: ['facts'],
        steps: [
          { id: 'outline-2', agent: 'outliner', dependsOn: ['research'] },
          { id: 'write-2', agent: 'writer', dependsOn: ['outline-2'] },
        ],
      });
      // The planner saw the failure as MISSING, without the source's error.
      const replanPrompt = JSON.stringify(
        model.requests[stages(model.requests).indexOf('revised_plan')]?.body,
      );
      expect(replanPrompt).toMatch(/Step \\"facts\\"[^\]]*\] MISSING/);
      expect(replanPrompt).not.toContain('503');
      // The factbook ran once; the outline and the text were made by the new plan.
      expect(desk.runs.map((run) => [run.agent, run.failed ?? false])).toEqual([
        ['researcher', false],
        ['factbook', true],
        ['outliner', false],
        ['writer', false],
      ]);
      expect(body.steps.at(-1)?.annotations).toMatchObject({ replans: 1, failed: ['facts'] });
    });
  });

  it('answers without a plan when the request names no topic it knows', async () => {
    await withDesk([], async ({ app, model, desk }) => {
      const body = await chat(app, 'Write me something');
      expect(body.reply).toBe('Which topic? I can brief on honeybees or tides.');
      expect(body.steps.map((step) => step.kind)).toEqual(['answer']);
      expect(stages(model.requests)).toEqual(['plan']);
      expect(desk.runs).toEqual([]);
    });
  });
});
