import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Orchestrator } from '@switchboard/core';
import {
  type Agent,
  App,
  agentMeta,
  defineAgent,
  orchestratorAgent,
  type RouteStep,
  type TurnEvent,
  type TurnResult,
} from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { useSpanRecording } from '../../runtime/test/support/span-recording.js';
import { readmeTree, spanTree } from '../../runtime/test/support/span-tree.js';
import {
  ConsensusOrchestrator,
  MetaRouter,
  PlanExecuteOrchestrator,
  SequentialOrchestrator,
  SupervisorOrchestrator,
} from '../src/index.js';

const doc = readFileSync(new URL('../../../docs/guides/patterns.md', import.meta.url), 'utf8');

/** The text of the document from the first line that starts with `start` to the next `## ` heading. */
function section(start: string): string {
  const from = doc.indexOf(`\n${start}`);
  expect(from, `docs/guides/patterns.md has a line starting with ${start}`).toBeGreaterThanOrEqual(0);
  const to = doc.indexOf('\n## ', from + 1);
  return doc.slice(from, to < 0 ? undefined : to);
}

/** The model name the document's trees show. */
const MODEL = 'gpt-4o-mini';

/** An agent that works `ms` milliseconds and answers `<name>: <task>`. */
function worker(name: string, ms: number): Agent {
  return defineAgent({
    name,
    description: `The ${name} agent`,
    run: async (message) => {
      await sleep(ms);
      return `${name}: ${message}`;
    },
  });
}

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

const servers: ScriptedModelServer[] = [];
const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function modelServer(script: ScriptedReply[]) {
  const server = await createScriptedModelServer({ script });
  servers.push(server);
  return { server, client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }) };
}

/** Runs one turn of `orchestrator` over `agents`, streaming its events. */
async function runTurn(orchestrator: Orchestrator, agents: readonly Agent[], message: string) {
  const app = new App({ name: orchestrator.name, agents, logLevel: 'silent' }).mount(orchestrator);
  apps.push(app);
  const events: TurnEvent[] = [];
  const result: TurnResult = await app.chat({ message, onEvent: (event) => events.push(event) });
  expect(result.status).toBe('completed');
  expect(result.traceId).toMatch(/^[0-9a-f]{32}$/);
  return { result, events };
}

function keysOf(step: RouteStep | undefined): string[] {
  return Object.keys(step?.annotations ?? {}).sort();
}

type EventOf<T extends TurnEvent['type']> = Extract<TurnEvent, { type: T }>;

function eventsOf<T extends TurnEvent['type']>(events: readonly TurnEvent[], type: T): EventOf<T>[] {
  return events.filter((event): event is EventOf<T> => event.type === type);
}

/** The name of the JSON schema a model request asked for (which kind of call it was). */
function schemaOf(request: RecordedRequest | undefined): string | undefined {
  const format = request?.body.response_format;
  return format?.type === 'json_schema' ? format.json_schema.name : undefined;
}

function kinds(steps: readonly RouteStep[]) {
  return steps.map((step) => (step.kind === 'note' ? `note ${step.label}` : step.kind));
}

describe('docs/guides/patterns.md', () => {
  const recording = useSpanRecording();

  /** The tree of `root` in the text from `start` on is the one recorded for the trace. */
  function expectTree(start: string, root: string, traceId: string | undefined) {
    expect(readmeTree(section(start), root), `the tree of ${root} after "${start}"`).toBe(
      spanTree(recording().spans, traceId!),
    );
  }

  it('supervisor: one fan-out under the decomposition, the synthesis in the next decision', async () => {
    const agents = [worker('flights', 5), worker('hotels', 10), worker('weather', 15)];
    const answer = 'Fly Friday, stay near Termini, pack for sun.';
    const { server, client } = await modelServer([
      subGoals({ flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weather' }),
      subGoals({}, answer),
    ]);
    const orchestrator = new SupervisorOrchestrator({ agents: agents.map(agentMeta), model: MODEL, client });
    const { result, events } = await runTurn(orchestrator, agents, 'Plan a weekend in Rome');

    expect(kinds(result.steps)).toEqual(['fan-out', 'answer']);
    const [fanOut, answerStep] = result.steps;
    expect(keysOf(fanOut)).toEqual(['correlationId', 'expectedBranches', 'round', 'subGoals']);
    const correlationId = fanOut?.annotations?.correlationId;
    expect(fanOut?.calls.map((call) => [call.toolCallId, call.fanInGraceMs])).toEqual(
      [1, 2, 3].map((n) => [`${correlationId}.${n}`, 10_000]),
    );
    expect(keysOf(answerStep)).toEqual(['correlationId', 'missing', 'round', 'synthesis']);
    expect(answerStep?.annotations).toMatchObject({
      correlationId,
      round: 1,
      missing: [],
      synthesis: 'model',
    });
    // The branches stream under their ids; the synthesis streams as answer-delta, then the whole message.
    expect(eventsOf(events, 'agent-start').map((event) => event.toolCallId)).toEqual(
      [1, 2, 3].map((n) => `${correlationId}.${n}`),
    );
    expect(
      eventsOf(events, 'answer-delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(answer);
    expect(eventsOf(events, 'message').map((event) => event.content)).toEqual([answer]);
    expectTree('## Supervisor', 'supervisor', result.traceId);
    server.assertDone();
  });

  it('supervisor with a branch that needs approval: two traces, the approved branch under the second root', async () => {
    const agents = ['flights', 'hotels', 'weather'].map((name) =>
      defineAgent({
        name,
        description: `Finds ${name}`,
        requiresApproval: name === 'flights' ? true : undefined,
        run: (message) => sleep(name === 'weather' ? 10 : 5).then(() => `${name}: ${message}`),
      }),
    );
    const { server, client } = await modelServer([
      subGoals({ flights: 'Flights to Rome', hotels: 'A hotel in Rome', weather: 'Rome weather' }),
      subGoals({}, 'Fly Friday, stay near Termini, pack for sun.'),
    ]);
    const orchestrator = new SupervisorOrchestrator({
      name: 'travel-desk',
      agents: agents.map(agentMeta),
      model: MODEL,
      client,
    });
    const app = new App({ name: 'travel-desk', agents, logLevel: 'silent' }).mount(orchestrator);
    apps.push(app);
    const paused = await app.chat({ message: 'Plan a weekend in Rome', sessionId: 'approval' });
    expect(paused.status).toBe('awaiting_approval');
    const done = await app.resolveApproval({
      sessionId: 'approval',
      approvalId: paused.approvals![0]!.id,
      decision: 'approve',
    });
    expect(done.status).toBe('completed');
    expect(done.traceId).not.toBe(paused.traceId);

    expectTree('**A branch that needs approval.**', 'travel-desk', paused.traceId);
    expectTree('The part after the approval:', 'travel-desk', done.traceId);
    const [root] = recording().spans.filter(
      (span) => span.spanContext().traceId === done.traceId && span.parentSpanContext === undefined,
    );
    expect(root?.attributes['switchboard.turn.resumed']).toBe('approval');
    expect(root?.attributes['switchboard.turn.previous_traces']).toEqual([paused.traceId]);
    // The synthesis read all three branches.
    const prompt = String(server.requests[1]?.body.messages.at(-1)?.content);
    for (const name of ['flights', 'hotels', 'weather'])
      expect(prompt).toContain(`[Agent "${name}" replied]`);
    server.assertDone();
  });

  it('plan-execute: the plan and round 1, the review and round 2, the synthesis', async () => {
    const agents = [worker('researcher', 5), worker('factbook', 10), worker('writer', 5)];
    const { server, client } = await modelServer([
      json({
        thought: 'plan',
        steps: [
          { id: 'research', goal: 'Background notes on honeybees', agent: 'researcher', dependsOn: [] },
          { id: 'facts', goal: 'Key figures on honeybees', agent: 'factbook', dependsOn: [] },
          { id: 'write', goal: 'Write the briefing', agent: 'writer', dependsOn: ['research', 'facts'] },
        ],
        answer: '',
      }),
      json({ thought: 'the plan stands', revise: false, steps: [], answer: '' }),
      json({ thought: 'done', answer: 'Honeybees: a short briefing.' }),
    ]);
    const orchestrator = new PlanExecuteOrchestrator({ agents: agents.map(agentMeta), model: MODEL, client });
    const { result, events } = await runTurn(orchestrator, agents, 'A short briefing on honeybees');

    expect(kinds(result.steps)).toEqual(['note plan', 'fan-out', 'note review', 'call', 'answer']);
    const [plan, round1, review, round2, answer] = result.steps;
    expect(keysOf(plan)).toEqual(['steps']);
    expect(keysOf(round1)).toEqual(['plan', 'planSteps', 'round']);
    expect(round1?.annotations).toMatchObject({ planSteps: ['research', 'facts'], round: 1 });
    expect(review?.annotations).toEqual({ revise: false });
    expect(round2?.annotations).toMatchObject({ planSteps: ['write'], round: 2 });
    expect(keysOf(answer)).toEqual(['failed', 'plan', 'replans', 'synthesis']);
    expect(
      eventsOf(events, 'answer-delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('Honeybees: a short briefing.');
    expectTree('## Plan and execute', 'plan-execute', result.traceId);
    server.assertDone();
  });

  it('meta-router: the choice and the chosen pattern’s first decision, then the pattern alone', async () => {
    const agents = [worker('flights', 5), worker('hotels', 10)];
    const { server, client } = await modelServer([
      json({ thought: 'a trip', task_type: 'trip', rationale: 'several bookings', confidence: 0.9 }),
      json({
        thought: 'independent parts',
        pattern: 'supervisor',
        rationale: 'parts at once',
        confidence: 0.8,
      }),
      subGoals({ flights: 'Flights to Rome', hotels: 'A hotel in Rome' }),
      subGoals({}, 'Fly Friday, stay near Termini.'),
    ]);
    const metas = agents.map(agentMeta);
    const orchestrator = new MetaRouter({
      agents: metas,
      taskTypes: [
        { name: 'trip', description: 'Travel bookings', patterns: ['supervisor', 'pipeline'] },
        { name: 'question', description: 'Anything else', patterns: ['pipeline'] },
      ],
      patterns: {
        supervisor: new SupervisorOrchestrator({ agents: metas, model: MODEL, client }),
        pipeline: new SequentialOrchestrator({ agents: metas }),
      },
      model: MODEL,
      client,
    });
    const { result } = await runTurn(orchestrator, agents, 'Flights and a hotel for Rome');

    expect(kinds(result.steps)).toEqual(['note meta-route', 'fan-out', 'answer']);
    expect(keysOf(result.steps[0])).toEqual([
      'candidates',
      'choice',
      'chooser',
      'confidence',
      'pattern',
      'rationale',
      'taskType',
    ]);
    expect(result.steps[0]?.annotations).toMatchObject({
      choice: { taskType: 'trip', pattern: 'supervisor' },
      candidates: { taskTypes: ['trip', 'question'], patterns: ['supervisor', 'pipeline'] },
      chooser: 'model',
    });
    expect(result.steps.map((step) => step.annotations?.pattern)).toEqual([
      'supervisor',
      'supervisor',
      'supervisor',
    ]);
    // The second decision asks no new choice: its one model call is the supervisor's synthesis.
    expect(server.requests.map((request) => schemaOf(request))).toEqual([
      'task_type_choice',
      'pattern_choice',
      'supervisor_plan',
      'supervisor_synthesis',
    ]);
    expectTree('## Meta-router', 'meta', result.traceId);
    server.assertDone();
  });

  it('sequential: one decision per stage, the answer last', async () => {
    const agents = [worker('researcher', 5), worker('writer', 5)];
    const orchestrator = new SequentialOrchestrator({ agents: agents.map(agentMeta) });
    const { result } = await runTurn(orchestrator, agents, 'Tides');
    expect(kinds(result.steps)).toEqual(['call', 'call', 'answer']);
    expect(result.steps.map((step) => step.annotations)).toEqual([
      { stage: 1, stages: 2 },
      { stage: 2, stages: 2 },
      undefined,
    ]);
    expectTree('## Sequential', 'sequential', result.traceId);
  });

  it('consensus with a judge: the voters side by side, the judge under the answer', async () => {
    const voters = [
      defineAgent({ name: 'a', description: 'Voter a', run: () => 'Paris' }),
      defineAgent({ name: 'b', description: 'Voter b', run: () => sleep(5).then(() => 'paris.') }),
      defineAgent({ name: 'c', description: 'Voter c', run: () => sleep(10).then(() => 'Lyon') }),
    ];
    const { server, client } = await modelServer([
      json({ answer: 'Paris (two of three agree).', reason: 'Lyon is the outlier' }),
    ]);
    const orchestrator = new ConsensusOrchestrator({
      agents: voters.map(agentMeta),
      aggregate: { model: MODEL, client },
    });
    const { result } = await runTurn(orchestrator, voters, 'What is the capital of France?');
    expect(kinds(result.steps)).toEqual(['fan-out', 'answer']);
    expect(keysOf(result.steps[1])).toEqual([
      'aggregate',
      'agreement',
      'correlationId',
      'dissent',
      'failed',
      'voters',
      'votes',
    ]);
    expect(result.steps[1]).toMatchObject({
      annotations: { aggregate: 'judge', votes: { paris: 2, lyon: 1 }, agreement: 0.67 },
      usage: { inputTokens: 40, outputTokens: 10 },
    });
    expect(result.reply).toBe('Paris (two of three agree).');
    expectTree('## Consensus', 'consensus', result.traceId);
    server.assertDone();
  });

  it('nesting: the inner decisions under the outer call', async () => {
    const inner = [worker('papers', 5), worker('news', 10)];
    const { server, client } = await modelServer([
      subGoals({ papers: 'Papers on tides', news: 'News on tides' }),
      subGoals({}, 'Tides: what the papers and the news say.'),
    ]);
    const research = orchestratorAgent({
      name: 'research',
      description: 'Researches a topic',
      orchestrator: new SupervisorOrchestrator({
        name: 'research-team',
        agents: inner.map(agentMeta),
        model: MODEL,
        client,
      }),
      agents: inner,
    });
    const editor = worker('editor', 5);
    const orchestrator = new SequentialOrchestrator({
      name: 'front',
      agents: [research, editor].map(agentMeta),
    });
    const { result, events } = await runTurn(orchestrator, [research, editor], 'Tides');

    const innerSteps = result.steps[0]?.calls[0]?.innerSteps ?? [];
    expect(innerSteps.map((step) => step.kind)).toEqual(['fan-out', 'answer']);
    const outerCall = result.steps[0]?.calls[0]?.toolCallId;
    expect(eventsOf(events, 'agent-start').map((event) => [event.agent, event.parentToolCallId])).toEqual([
      ['research', undefined],
      ['papers', outerCall],
      ['news', outerCall],
      ['editor', undefined],
    ]);
    // The inner answer is the outer call's reply, not an answer-delta of the turn.
    expect(eventsOf(events, 'answer-delta')).toEqual([]);
    expect(eventsOf(events, 'agent-end').find((event) => event.toolCallId === outerCall)?.content).toBe(
      'Tides: what the papers and the news say.',
    );
    expectTree('## Nesting', 'front', result.traceId);
    server.assertDone();
  });
});
