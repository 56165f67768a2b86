import type { AgentMeta, MessageItem, Orchestrator } from '@switchboard/core';
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
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from '../../runtime/test/support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../../runtime/test/support/redis.js';
import { MetaRouter, SequentialOrchestrator, SupervisorOrchestrator } from '../src/index.js';
import { MISSING_MARKER } from '../src/supervisor-prompt.js';

const redis = useRedis();

const REQUEST = 'Plan a weekend in Rome: flights, a hotel and the weather.';
const ANSWER = 'Fly Friday at 9:40, stay near Termini, and pack for sun.';
const GOALS = { flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weekend weather' };

function json(value: object): ScriptedReply {
  return { content: JSON.stringify(value), usage: { inputTokens: 40, outputTokens: 10 } };
}

function subGoals(goals: Record<string, string>, answer = ''): ScriptedReply {
  return json({
    thought: 'split',
    subgoals: Object.entries(goals).map(([agent, task]) => ({ agent, task })),
    answer,
  });
}

/** The name of the JSON schema a model request asked for (which kind of call it was). */
function schemaOf(request: RecordedRequest | undefined): string | undefined {
  const format = request?.body.response_format;
  return format?.type === 'json_schema' ? format.json_schema.name : undefined;
}

/** The answer of `GET /v1/sessions/:id`. */
interface SessionBody {
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: Array<{ id: string; agent: string }>;
}

/** Every agent run of a test, as `<replica>:<agent>`, and the task each agent got last. */
interface RunLog {
  runs: string[];
  tasks: Record<string, string>;
}

const apps: App[] = [];
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * Function agents that record each run in `log` as `<label>:<name>` and reply
 * `<name> result from replica <label>` (or what `reply` makes of the task);
 * the agents in `approve` wait for a person's approval.
 */
function loggingAgents(
  label: string,
  names: readonly string[],
  log: RunLog,
  {
    approve = [],
    reply,
  }: { approve?: readonly string[]; reply?: (name: string, task: string) => string } = {},
): Agent[] {
  return names.map((name) =>
    defineAgent({
      name,
      description: `Handles ${name}`,
      requiresApproval: approve.includes(name) ? true : undefined,
      run: (message) => {
        log.runs.push(`${label}:${name}`);
        log.tasks[name] = message;
        return reply ? reply(name, message) : `${name} result from replica ${label}`;
      },
    }),
  );
}

/** One replica: its own app and scripted model, the shared Redis key prefix; what a client does with it over HTTP. */
async function replica(
  keyPrefix: string,
  script: ScriptedReply[],
  build: (client: OpenAI) => { agents: Agent[]; orchestrator: Orchestrator },
) {
  const server = await createScriptedModelServer({ script });
  servers.push(server);
  const { agents, orchestrator } = build(new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }));
  const app = new App({
    name: 'replica',
    agents,
    logLevel: 'silent',
    ...createRedisStores(REDIS_URL, { keyPrefix }),
  }).mount(orchestrator);
  apps.push(app);
  const json = async <T>(response: Response | Promise<Response>) => {
    const received = await response;
    expect(received.status).toBe(200);
    return (await received.json()) as T;
  };
  return {
    app,
    server,
    chat: (body: object) => json<TurnResult>(app.request('/v1/chat', postJson(body))),
    approve: (sessionId: string, approvalId: string) =>
      json<TurnResult>(
        app.request(`/v1/sessions/${sessionId}/approvals/${approvalId}`, postJson({ decision: 'approve' })),
      ),
    session: (sessionId: string) => json<SessionBody>(app.request(`/v1/sessions/${sessionId}`)),
  };
}

/** Both replicas read the same stored session, and it is well formed. */
async function expectSameSession(
  a: Awaited<ReturnType<typeof replica>>,
  b: Awaited<ReturnType<typeof replica>>,
  sessionId: string,
): Promise<SessionBody> {
  const fromA = await a.session(sessionId);
  const fromB = await b.session(sessionId);
  expect(fromB.turns).toEqual(fromA.turns);
  expect(fromB.messages).toEqual(fromA.messages);
  expect(historyProblems(fromA.messages, fromA.turns)).toEqual([]);
  expect(fromA.pendingApprovals).toEqual([]);
  return fromA;
}

describe('SupervisorOrchestrator across two replicas sharing one Redis', () => {
  it('fans out on A with one branch paused for approval, approved through B: B runs only that branch and synthesises from all three', async () => {
    const keyPrefix = redis.prefix();
    const log: RunLog = { runs: [], tasks: {} };
    const names = Object.keys(GOALS);
    const build = (label: string) => (client: OpenAI) => {
      const agents = loggingAgents(label, names, log, { approve: ['flights'] });
      return {
        agents,
        orchestrator: new SupervisorOrchestrator({
          agents: agents.map(agentMeta),
          model: 'supervisor-model',
          client,
        }),
      };
    };
    // A only decomposes; B only synthesises.
    const a = await replica(keyPrefix, [subGoals(GOALS)], build('A'));
    const b = await replica(keyPrefix, [subGoals({}, ANSWER)], build('B'));
    const sessionId = 'supervisor-replicas';

    const paused = await a.chat({ message: REQUEST, sessionId });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toMatchObject([{ agent: 'flights', message: GOALS.flights }]);
    // The siblings ran at once on A; the branch waiting for approval did not.
    expect([...log.runs].sort()).toEqual(['A:hotels', 'A:weather']);
    expect((await b.session(sessionId)).pendingApprovals.map((approval) => approval.agent)).toEqual([
      'flights',
    ]);

    const done = await b.approve(sessionId, paused.approvals![0]!.id);
    expect(done).toMatchObject({ turnId: paused.turnId, status: 'completed', reply: ANSWER });
    // Only the approved branch ran on B: the finished siblings never ran again.
    expect(log.runs.slice(2)).toEqual(['B:flights']);
    expect(log.runs).toHaveLength(3);

    // B's synthesis saw every branch's result, wherever it was produced, and nothing missing.
    a.server.assertDone();
    b.server.assertDone();
    expect(a.server.requests.map(schemaOf)).toEqual(['supervisor_plan']);
    expect(b.server.requests.map(schemaOf)).toEqual(['supervisor_synthesis']);
    const prompt = String(b.server.requests[0]?.body.messages.at(-1)?.content);
    expect(prompt).toContain('[Agent "flights" replied]\nflights result from replica B');
    expect(prompt).toContain('[Agent "hotels" replied]\nhotels result from replica A');
    expect(prompt).toContain('[Agent "weather" replied]\nweather result from replica A');
    expect(prompt).not.toContain(MISSING_MARKER);

    const stored = await expectSameSession(a, b, sessionId);
    const [fanOut, answer, ...rest] = stored.turns[0]!.steps;
    expect(rest).toEqual([]);
    expect(fanOut).toMatchObject({ kind: 'fan-out', annotations: { expectedBranches: 3, round: 1 } });
    const correlationId = fanOut!.annotations!.correlationId;
    expect(fanOut!.calls.map((call) => call.toolCallId)).toEqual(
      [1, 2, 3].map((n) => `${correlationId}.${n}`),
    );
    expect(fanOut!.calls.find((call) => call.agent === 'flights')?.approvalId).toBe(paused.approvals![0]!.id);
    // The synthesis knows it answers round 1 of that fan-out, with no branch missing.
    expect(answer).toMatchObject({
      kind: 'answer',
      annotations: { correlationId, round: 1, missing: [], synthesis: 'model' },
    });
    // One reply per branch is stored, each under its branch id.
    expect(
      stored.messages
        .filter((message) => message.role === 'tool')
        .map((message) => (message.role === 'tool' ? message.toolCallId : ''))
        .sort(),
    ).toEqual([1, 2, 3].map((n) => `${correlationId}.${n}`));
  });
});

describe('MetaRouter across two replicas sharing one Redis', () => {
  it('keeps the choice made on A when the turn continues on B: B asks its model only for the synthesis', async () => {
    const keyPrefix = redis.prefix();
    const log: RunLog = { runs: [], tasks: {} };
    const names = ['flights', 'hotels'];
    const build = (label: string) => (client: OpenAI) => {
      const agents = loggingAgents(label, names, log, { approve: ['flights'] });
      const metas: AgentMeta[] = agents.map(agentMeta);
      return {
        agents,
        orchestrator: new MetaRouter({
          agents: metas,
          taskTypes: [
            { name: 'trip', description: 'Travel bookings', patterns: ['supervisor', 'pipeline'] },
            { name: 'question', description: 'Anything else', patterns: ['pipeline'] },
          ],
          patterns: {
            supervisor: new SupervisorOrchestrator({ agents: metas, model: 'router-model', client }),
            pipeline: new SequentialOrchestrator({ agents: metas }),
          },
          model: 'router-model',
          client,
        }),
      };
    };
    const a = await replica(
      keyPrefix,
      [
        json({ thought: 'travel', task_type: 'trip', rationale: 'bookings', confidence: 0.9 }),
        json({ thought: 'parts', pattern: 'supervisor', rationale: 'independent parts', confidence: 0.8 }),
        subGoals({ flights: GOALS.flights, hotels: GOALS.hotels }),
      ],
      build('A'),
    );
    const b = await replica(keyPrefix, [subGoals({}, ANSWER)], build('B'));
    const sessionId = 'meta-replicas';

    const paused = await a.chat({ message: 'Flights and a hotel for Rome', sessionId });
    expect(paused.status).toBe('awaiting_approval');
    expect(log.runs).toEqual(['A:hotels']);
    // A wrote its choice for this turn to session memory, where B reads it.
    const choice = { v: 1, turnId: paused.turnId, taskType: 'trip', pattern: 'supervisor' };
    expect(await b.app.memory.get(`session:${sessionId}`, 'meta-router:meta')).toEqual(choice);

    const done = await b.approve(sessionId, paused.approvals![0]!.id);
    expect(done).toMatchObject({ status: 'completed', reply: ANSWER });
    expect(log.runs).toEqual(['A:hotels', 'B:flights']);
    // B neither classified the request again nor chose a pattern: its one model call is the supervisor's synthesis.
    expect(a.server.requests.map(schemaOf)).toEqual([
      'task_type_choice',
      'pattern_choice',
      'supervisor_plan',
    ]);
    expect(b.server.requests.map(schemaOf)).toEqual(['supervisor_synthesis']);
    a.server.assertDone();
    b.server.assertDone();

    const stored = await expectSameSession(a, b, sessionId);
    const steps = stored.turns[0]!.steps;
    expect(steps.map((step) => step.kind)).toEqual(['note', 'fan-out', 'answer']);
    expect(steps[0]).toMatchObject({
      label: 'meta-route',
      annotations: { choice: { taskType: 'trip', pattern: 'supervisor' }, chooser: 'model' },
    });
    // The decision made on B is the chosen pattern's, and says so.
    expect(steps.map((step) => step.annotations?.pattern)).toEqual([
      'supervisor',
      'supervisor',
      'supervisor',
    ]);
    expect(steps[2]!.annotations).toMatchObject({ missing: [], synthesis: 'model' });
  });
});

describe('SequentialOrchestrator across two replicas sharing one Redis', () => {
  it('pauses before a stage on A, and B runs it with the previous stage’s output and finishes the pipeline', async () => {
    const keyPrefix = redis.prefix();
    const log: RunLog = { runs: [], tasks: {} };
    const reply = (name: string, task: string) => `${name}(${task})`;
    const build = (label: string) => () => {
      const agents = loggingAgents(label, ['draft', 'review', 'publish'], log, {
        approve: ['review'],
        reply,
      });
      return { agents, orchestrator: new SequentialOrchestrator({ agents: agents.map(agentMeta) }) };
    };
    const a = await replica(keyPrefix, [], build('A'));
    const b = await replica(keyPrefix, [], build('B'));
    const sessionId = 'pipeline-replicas';

    const paused = await a.chat({ message: 'a note', sessionId });
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toMatchObject([{ agent: 'review', message: 'draft(a note)' }]);
    expect(log.runs).toEqual(['A:draft']);

    const done = await b.approve(sessionId, paused.approvals![0]!.id);
    expect(done).toMatchObject({ status: 'completed', reply: 'publish(review(draft(a note)))' });
    expect(log.runs).toEqual(['A:draft', 'B:review', 'B:publish']);
    expect(log.tasks).toEqual({ draft: 'a note', review: 'draft(a note)', publish: 'review(draft(a note))' });

    const stored = await expectSameSession(a, b, sessionId);
    expect(
      stored.turns[0]!.steps.map((step) => [step.kind, step.calls[0]?.agent, step.annotations?.stage]),
    ).toEqual([
      ['call', 'draft', 1],
      ['call', 'review', 2],
      ['call', 'publish', 3],
      ['answer', 'route_to_user', undefined],
    ]);
  });
});
