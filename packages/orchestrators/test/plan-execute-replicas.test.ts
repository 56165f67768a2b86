import type { MessageItem } from '@switchboard/core';
import {
  type Agent,
  App,
  agentMeta,
  defineAgent,
  type TurnRecord,
  type TurnResult,
} from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import {
  createScriptedModelServer,
  historyProblems,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from '../../runtime/test/support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { PlanExecuteOrchestrator } from '../src/index.js';

const redis = useRedis();

const REQUEST = 'Plan a weekend in Rome: flights, the weather, a hotel near the airport and an itinerary.';

type Step = [id: string, agent: string, goal: string, dependsOn?: string[]];

/** Four steps; the hotel needs the flights, the itinerary the hotel and the weather. */
const PLAN: Step[] = [
  ['fly', 'flights', 'Find flights to Rome'],
  ['sky', 'weather', 'Rome weekend weather'],
  ['stay', 'hotels', 'Find a hotel near the arrival airport', ['fly']],
  ['days', 'itinerary', 'Write a two-day itinerary', ['stay', 'sky']],
];
const ANSWER = 'Fly Friday, sleep near FCO, sunny days ahead.';

function steps(list: readonly Step[]) {
  return list.map(([id, agent, goal, dependsOn = []]) => ({ id, goal, agent, dependsOn }));
}

function plan(list: readonly Step[]): ScriptedReply {
  return {
    content: JSON.stringify({ thought: 'plan', steps: steps(list), answer: '' }),
    usage: { inputTokens: 40, outputTokens: 20 },
  };
}

function keepPlan(): ScriptedReply {
  return {
    content: JSON.stringify({ thought: 'the plan still fits', revise: false, steps: [], answer: '' }),
    usage: { inputTokens: 20, outputTokens: 4 },
  };
}

function synthesis(answer: string): ScriptedReply {
  return {
    content: JSON.stringify({ thought: 'done', answer }),
    usage: { inputTokens: 30, outputTokens: 5 },
  };
}

/** The answer of `GET /v1/sessions/:id`. */
interface SessionBody {
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: Array<{ id: string; agent: string }>;
}

/** A step of the `plan` annotation, as stored. */
interface PlanView {
  id: string;
  goal: string;
  agent: string;
  dependsOn: string[];
  status: string;
  plan: number;
}

const apps: App[] = [];
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('PlanExecuteOrchestrator across two replicas sharing one Redis', () => {
  /**
   * One replica: its own app, orchestrator and scripted model, the shared
   * Redis key prefix. Its agents record each run as `<label>:<agent>` and the
   * task they got; `flights` waits for a person's approval.
   */
  async function replica(label: string, keyPrefix: string, script: ScriptedReply[], log: Log) {
    const server = await createScriptedModelServer({ script });
    servers.push(server);
    const agents: Agent[] = ['flights', 'weather', 'hotels', 'itinerary'].map((name) =>
      defineAgent({
        name,
        description: `Handles ${name}`,
        requiresApproval: name === 'flights' ? true : undefined,
        run: (message) => {
          log.runs.push(`${label}:${name}`);
          log.tasks[name] = message;
          return `${name} result from replica ${label}`;
        },
      }),
    );
    const orchestrator = new PlanExecuteOrchestrator({
      agents: agents.map(agentMeta),
      model: 'planner-model',
      client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    });
    const app = new App({
      name: 'planner',
      agents,
      logLevel: 'silent',
      ...createRedisStores(REDIS_URL, { keyPrefix }),
    }).mount(orchestrator);
    apps.push(app);
    const json = async <T>(response: Response | Promise<Response>, status = 200) => {
      const received = await response;
      expect(received.status).toBe(status);
      return (await received.json()) as T;
    };
    return {
      app,
      orchestrator,
      server,
      chat: (body: object) => json<TurnResult>(app.request('/v1/chat', postJson(body))),
      approve: (sessionId: string, approvalId: string) =>
        json<TurnResult>(
          app.request(`/v1/sessions/${sessionId}/approvals/${approvalId}`, postJson({ decision: 'approve' })),
        ),
      session: (sessionId: string) => json<SessionBody>(app.request(`/v1/sessions/${sessionId}`)),
      /** The turn's plan as this replica reads it from session memory. */
      storedPlan: (sessionId: string, turnId: string) =>
        app.memory.get(`session:${sessionId}`, orchestrator.memoryKey(turnId)),
    };
  }

  interface Log {
    runs: string[];
    tasks: Record<string, string>;
  }

  it('plans on A, pauses for an approval, continues on B, and both replicas show the same plan', async () => {
    const keyPrefix = redis.prefix();
    const log: Log = { runs: [], tasks: {} };
    // A only plans: the turn pauses in its first round. B reviews the two later rounds and writes the answer.
    const a = await replica('A', keyPrefix, [plan(PLAN)], log);
    const b = await replica('B', keyPrefix, [keepPlan(), keepPlan(), synthesis(ANSWER)], log);
    const sessionId = 'rome-weekend';

    const paused = await a.chat({ message: REQUEST, sessionId });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toMatchObject([{ agent: 'flights', message: 'Find flights to Rome' }]);
    // The round's other step ran at once; the one waiting for approval did not.
    expect(log.runs).toEqual(['A:weather']);
    expect((await b.session(sessionId)).pendingApprovals.map((approval) => approval.id)).toEqual([
      paused.approvals![0]!.id,
    ]);

    const done = await b.approve(sessionId, paused.approvals![0]!.id);
    expect(done).toMatchObject({ turnId: paused.turnId, status: 'completed', reply: ANSWER });
    expect(log.runs).toEqual(['A:weather', 'B:flights', 'B:hotels', 'B:itinerary']);
    // Each step got its dependencies' results, wherever they were produced.
    expect(log.tasks.hotels).toMatch(/^Find a hotel near the arrival airport\n\nResults of earlier steps/);
    expect(log.tasks.hotels).toContain('flights result from replica B');
    expect(log.tasks.itinerary).toContain('hotels result from replica B');
    expect(log.tasks.itinerary).toContain('weather result from replica A');
    a.server.assertDone();
    b.server.assertDone();
    expect(a.server.requests).toHaveLength(1);
    expect(b.server.requests).toHaveLength(3);

    // Both replicas read the same stored turn.
    const fromA = await a.session(sessionId);
    const fromB = await b.session(sessionId);
    expect(fromB.turns).toEqual(fromA.turns);
    expect(fromB.messages).toEqual(fromA.messages);
    expect(historyProblems(fromA.messages, fromA.turns)).toEqual([]);
    const turn = fromA.turns[0]!;
    expect(turn).toMatchObject({ turnId: paused.turnId, status: 'completed' });

    const [note, ...rounds] = turn.steps;
    expect(note).toMatchObject({ kind: 'note', label: 'plan', annotations: { steps: steps(PLAN) } });
    expect(
      rounds.map((step) => [step.kind, step.label ?? step.annotations?.planSteps, step.annotations?.round]),
    ).toEqual([
      ['fan-out', ['fly', 'sky'], 1],
      ['note', 'review', undefined],
      ['call', ['stay'], 2],
      ['note', 'review', undefined],
      ['call', ['days'], 3],
      ['answer', undefined, undefined],
    ]);
    expect(rounds[0]!.calls.find((call) => call.agent === 'flights')?.approvalId).toBe(
      paused.approvals![0]!.id,
    );

    const planIn = (index: number) => rounds[index]!.annotations?.plan as unknown as PlanView[];
    const statusesIn = (index: number) =>
      Object.fromEntries(planIn(index).map((step) => [step.id, step.status]));
    expect(statusesIn(0)).toEqual({ fly: 'running', sky: 'running', stay: 'pending', days: 'pending' });
    expect(statusesIn(2)).toEqual({ fly: 'done', sky: 'done', stay: 'running', days: 'pending' });
    // The answer's step carries the whole plan, every step done.
    expect(planIn(5)).toEqual(steps(PLAN).map((step) => ({ ...step, status: 'done', plan: 1 })));
    expect(rounds[5]!.annotations).toMatchObject({ replans: 0, failed: [], synthesis: 'model' });

    // The plan in session memory is the same read from either replica.
    const memoryA = await a.storedPlan(sessionId, paused.turnId);
    const memoryB = await b.storedPlan(sessionId, paused.turnId);
    expect(memoryB).toEqual(memoryA);
    expect(memoryA).toMatchObject({
      v: 1,
      turnId: paused.turnId,
      replans: 0,
      rounds: 3,
      steps: [
        { id: 'fly', status: 'done', result: 'flights result from replica B' },
        { id: 'sky', status: 'done', result: 'weather result from replica A' },
        { id: 'stay', status: 'done', result: 'hotels result from replica B' },
        { id: 'days', status: 'done', result: 'itinerary result from replica B' },
      ],
    });
  });
});
