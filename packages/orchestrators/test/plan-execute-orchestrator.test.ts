import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigurationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  runConversation,
  type ScriptEntry,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { PlanExecuteOrchestrator, type PlanExecuteOrchestratorOptions } from '../src/index.js';

const REQUEST = 'Plan a weekend in Rome: flights, a hotel near the airport, the weather, and an itinerary.';
const SECRET = 'ECONNREFUSED 10.0.0.7:5432 at Pool.connect (/srv/app/db.js:12:7)';

type Step = [id: string, agent: string, goal: string, dependsOn?: string[]];

function plan(steps: Step[], answer = ''): ScriptedReply {
  return {
    content: JSON.stringify({
      thought: 'plan',
      steps: steps.map(([id, agent, goal, dependsOn = []]) => ({ id, agent, goal, dependsOn })),
      answer,
    }),
    usage: { inputTokens: 40, outputTokens: 20 },
  };
}

/** A review after a round: keep the remaining steps, or replace them with `steps`. */
function review(steps?: Step[]): ScriptedReply {
  return {
    content: JSON.stringify({
      thought: steps ? 'a result changed the picture' : 'the plan still fits',
      revise: steps !== undefined,
      steps: (steps ?? []).map(([id, agent, goal, dependsOn = []]) => ({ id, agent, goal, dependsOn })),
      answer: '',
    }),
    usage: { inputTokens: 20, outputTokens: 4 },
  };
}

function synthesis(answer: string): ScriptedReply {
  return {
    content: JSON.stringify({ thought: 'done', answer }),
    usage: { inputTokens: 30, outputTokens: 5 },
  };
}

/** Agents answering `<name> result`, recording what they receive and when they run; `fails` decides a failure. */
function travelAgents(
  log: { events: string[]; tasks: Record<string, string[]> },
  fails: (name: string, message: string) => boolean = () => false,
): Agent[] {
  return ['flights', 'hotels', 'weather', 'itinerary'].map((name) =>
    defineAgent({
      name,
      description: `Handles ${name}`,
      run: async (message) => {
        log.events.push(`start ${name}`);
        const tasks = log.tasks[name] ?? [];
        log.tasks[name] = tasks;
        tasks.push(message);
        await sleep(10);
        log.events.push(`end ${name}`);
        if (fails(name, message)) throw new Error(SECRET);
        return `${name} result #${tasks.length}`;
      },
    }),
  );
}

function promptOf(request: RecordedRequest | undefined): string {
  return JSON.stringify(request?.body.messages ?? []);
}

async function runPlan(
  script: ScriptEntry[],
  {
    fails,
    ...options
  }: Omit<Partial<PlanExecuteOrchestratorOptions>, 'agents'> & {
    fails?: (name: string, message: string) => boolean;
  } = {},
) {
  const log = { events: [] as string[], tasks: {} as Record<string, string[]> };
  const agents = travelAgents(log, fails);
  const server = await createScriptedModelServer({ script });
  try {
    const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
    const orchestrator = new PlanExecuteOrchestrator({
      agents: agents.map(({ name, description }) => ({ name, description })),
      model: 'planner-model',
      client,
      ...options,
    });
    const sessionId = 'plan-session';
    const conversation = await runConversation({
      orchestrator,
      agents,
      messages: [REQUEST],
      sessionId,
      logLevel: 'silent',
    });
    const turn = conversation.turns[0]!;
    const stored = (await conversation.app.memory.get(
      `session:${sessionId}`,
      orchestrator.memoryKey(turn.turnId),
    )) as { replans: number; steps: { id: string; status: string; result?: string }[] } | undefined;
    await conversation.app.close();
    server.assertDone();
    return { turn, requests: server.requests, log, stored };
  } finally {
    await server.close();
  }
}

function statuses(stored: { steps: { id: string; status: string }[] } | undefined) {
  return Object.fromEntries((stored?.steps ?? []).map((step) => [step.id, step.status]));
}

describe('PlanExecuteOrchestrator', () => {
  it('runs a 4-step plan in dependency order, independent steps together, and synthesises', async () => {
    const { turn, requests, log, stored } = await runPlan([
      plan([
        ['fly', 'flights', 'Find flights to Rome'],
        ['sky', 'weather', 'Rome weekend weather'],
        ['stay', 'hotels', 'Find a hotel near the arrival airport', ['fly']],
        ['days', 'itinerary', 'Write a two-day itinerary', ['stay', 'sky']],
      ]),
      review(),
      review(),
      synthesis('Fly Friday, sleep near FCO, sunny days ahead.'),
    ]);
    expect(turn.status).toBe('completed');
    expect(turn.reply).toBe('Fly Friday, sleep near FCO, sunny days ahead.');
    // Round 1: both independent steps start before either ends; then hotels, then the itinerary.
    expect(log.events.slice(0, 2).sort()).toEqual(['start flights', 'start weather']);
    expect(log.events.slice(4)).toEqual(['start hotels', 'end hotels', 'start itinerary', 'end itinerary']);
    // A dependent step receives its dependencies' results.
    expect(log.tasks.hotels?.[0]).toMatch(
      /^Find a hotel near the arrival airport\n\nResults of earlier steps/,
    );
    expect(log.tasks.hotels?.[0]).toContain('flights result #1');
    expect(log.tasks.itinerary?.[0]).toContain('hotels result #1');
    expect(log.tasks.itinerary?.[0]).toContain('weather result #1');
    expect(log.tasks.flights?.[0]).toBe('Find flights to Rome');

    const [note, ...rest] = turn.steps;
    expect(note?.kind).toBe('note');
    expect(note?.annotations?.steps).toEqual([
      { id: 'fly', goal: 'Find flights to Rome', agent: 'flights', dependsOn: [] },
      { id: 'sky', goal: 'Rome weekend weather', agent: 'weather', dependsOn: [] },
      { id: 'stay', goal: 'Find a hotel near the arrival airport', agent: 'hotels', dependsOn: ['fly'] },
      { id: 'days', goal: 'Write a two-day itinerary', agent: 'itinerary', dependsOn: ['stay', 'sky'] },
    ]);
    expect(
      rest.map((step) => [step.kind, step.label ?? step.annotations?.planSteps, step.annotations?.round]),
    ).toEqual([
      ['fan-out', ['fly', 'sky'], 1],
      ['note', 'review', undefined],
      ['call', ['stay'], 2],
      ['note', 'review', undefined],
      ['call', ['days'], 3],
      ['answer', undefined, undefined],
    ]);
    // The plan with each step's status is on the stored steps: running in a round, done in the answer's.
    const statusesIn = (index: number) =>
      Object.fromEntries(
        ((rest[index]?.annotations?.plan ?? []) as { id: string; status: string }[]).map((step) => [
          step.id,
          step.status,
        ]),
      );
    expect(statusesIn(2)).toEqual({ fly: 'done', sky: 'done', stay: 'running', days: 'pending' });
    expect(statusesIn(5)).toEqual({ fly: 'done', sky: 'done', stay: 'done', days: 'done' });
    // Every model call (plan, two reviews, synthesis) is counted in the turn's usage.
    expect(turn.usage).toMatchObject({ inputTokens: 110, outputTokens: 33 });
    expect(statuses(stored)).toEqual({ fly: 'done', sky: 'done', stay: 'done', days: 'done' });
    expect(stored?.steps.find((step) => step.id === 'days')?.result).toBe('itinerary result #1');
    expect(promptOf(requests[1])).toContain('flights result #1');
    expect(promptOf(requests[3])).toContain('itinerary result #1');
  });

  it('revises the rest of the plan when a result changes the picture, within the re-plan bound', async () => {
    const { turn, log, stored, requests } = await runPlan(
      [
        plan([
          ['fly', 'flights', 'Find flights to Rome'],
          ['stay', 'hotels', 'Find a hotel near the arrival airport', ['fly']],
        ]),
        (request) => {
          // The review reads the round's result before the next step runs.
          expect(promptOf(request)).toContain('flights result #1');
          return review([['centre', 'hotels', 'Find a hotel in the centre: no flight fits', ['fly']]]);
        },
        synthesis('No flight fits; a hotel in the centre.'),
      ],
      { maxReplans: 1 },
    );
    expect(turn.status).toBe('completed');
    // The replaced step never ran; its replacement did, with the done step's result.
    expect(log.tasks.hotels).toHaveLength(1);
    expect(log.tasks.hotels?.[0]).toMatch(/^Find a hotel in the centre/);
    expect(log.tasks.hotels?.[0]).toContain('flights result #1');
    const replan = turn.steps.find((step) => step.label === 'replan');
    expect(replan?.annotations).toMatchObject({ replan: 1, reviewed: true, steps: [{ id: 'centre' }] });
    expect(statuses(stored)).toEqual({ fly: 'done', centre: 'done' });
    // The bound is used up: no further review before the synthesis.
    expect(requests).toHaveLength(3);
  });

  it('runs the plan as written without reviews when reviewResults is false', async () => {
    const { turn, requests } = await runPlan(
      [
        plan([
          ['fly', 'flights', 'Find flights to Rome'],
          ['stay', 'hotels', 'Find a hotel near the arrival airport', ['fly']],
        ]),
        synthesis('Fly Friday; hotel near FCO.'),
      ],
      { reviewResults: false },
    );
    expect(turn.reply).toBe('Fly Friday; hotel near FCO.');
    expect(turn.steps.some((step) => step.label === 'review')).toBe(false);
    expect(requests).toHaveLength(2);
  });

  it('re-plans once after a failed step and completes the turn', async () => {
    const { turn, requests, log, stored } = await runPlan(
      [
        plan([
          ['fly', 'flights', 'Find flights to Rome'],
          ['stay', 'hotels', 'Find a hotel near the airport', ['fly']],
        ]),
        review(),
        (request) => {
          // The re-plan sees the done step's result and the failure, without the error's text.
          const prompt = promptOf(request);
          expect(prompt).toContain('flights result #1');
          expect(prompt).toMatch(/Step \\"stay\\".*MISSING: failed/);
          expect(prompt).not.toContain('ECONNREFUSED');
          return plan([['bnb', 'hotels', 'Find a B&B in the centre instead', ['fly']]]);
        },
        synthesis('Fly Friday; a B&B in the centre.'),
      ],
      { fails: (name, message) => name === 'hotels' && message.startsWith('Find a hotel') },
    );
    expect(turn.status).toBe('completed');
    expect(turn.reply).toBe('Fly Friday; a B&B in the centre.');
    expect(log.tasks.hotels?.[1]).toContain('flights result #1');
    const replan = turn.steps.find((step) => step.kind === 'note' && step.annotations?.replan === 1);
    expect(replan?.annotations).toMatchObject({
      failed: ['stay'],
      steps: [{ id: 'bnb', dependsOn: ['fly'] }],
    });
    expect(turn.steps.at(-1)?.annotations).toMatchObject({
      replans: 1,
      failed: ['stay'],
      synthesis: 'model',
    });
    expect(statuses(stored)).toEqual({ fly: 'done', stay: 'failed', bnb: 'done' });
    expect(stored?.replans).toBe(1);
    expect(requests).toHaveLength(4);
  });

  it('stops at the re-plan limit with an answer that says what failed', async () => {
    const { turn, requests, stored } = await runPlan(
      [
        plan([['stay', 'hotels', 'Find a hotel in Rome']]),
        plan([['bnb', 'hotels', 'Find a B&B in Rome']]),
        synthesis('I could not find accommodation in Rome.'),
      ],
      { maxReplans: 1, fails: (name) => name === 'hotels' },
    );
    expect(turn.status).toBe('completed');
    expect(turn.reply).toBe(
      'I could not find accommodation in Rome.\n\n(I stopped after 1 re-plan; these steps failed: "Find a hotel in Rome", "Find a B&B in Rome".)',
    );
    expect(turn.steps.at(-1)?.annotations).toMatchObject({
      replanLimit: true,
      replans: 1,
      failed: ['stay', 'bnb'],
    });
    expect(String(requests[2]?.body.messages[0]?.content)).toContain(
      'say plainly in the answer what could not be done',
    );
    expect(statuses(stored)).toEqual({ stay: 'failed', bnb: 'failed' });
  });

  it('re-asks a plan naming an unknown agent, then falls back to the first agent on a cycle', async () => {
    const { turn, requests, log } = await runPlan([
      plan([['car', 'cars', 'Rent a car in Rome']]),
      plan([
        ['a', 'flights', 'Flights', ['b']],
        ['b', 'hotels', 'Hotels', ['a']],
      ]),
    ]);
    expect(String(requests[1]?.body.messages.at(-1)?.content)).toMatch(/"cars" is not an available agent/);
    expect(log.tasks.flights).toEqual([REQUEST]);
    expect(turn.reply).toBe('flights result #1');
    const [note, call] = turn.steps;
    expect(note?.annotations).toMatchObject({ fallback: true, steps: [] });
    expect(String(note?.annotations?.problem)).toMatch(/dependency cycle: a → b → a/);
    expect(call?.annotations).toMatchObject({ fallback: true });
  });

  it('accepts a corrected plan after an unknown dependency is sent back', async () => {
    const { turn, requests, stored } = await runPlan([
      plan([['fly', 'flights', 'Flights to Rome', ['tickets']]]),
      plan([['fly', 'flights', 'Flights to Rome']]),
      synthesis('Fly Friday.'),
    ]);
    expect(String(requests[1]?.body.messages.at(-1)?.content)).toMatch(
      /Step "fly" depends on unknown step tickets/,
    );
    expect(turn.reply).toBe('Fly Friday.');
    expect(statuses(stored)).toEqual({ fly: 'done' });
  });

  it('rejects a missing model and bad bounds at construction', () => {
    const agents = [{ name: 'a', description: 'a' }];
    const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9' });
    for (const options of [
      { agents, model: '', client },
      { agents, model: 'm', client, maxReplans: -1 },
    ]) {
      let thrown: unknown;
      try {
        new PlanExecuteOrchestrator(options);
      } catch (error) {
        thrown = error;
      }
      expect(ConfigurationError.isInstance(thrown), String(thrown)).toBe(true);
    }
  });
});
