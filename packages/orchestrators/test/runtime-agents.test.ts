/**
 * Every built-in orchestrator takes the agents a user holds (`defineAgent`,
 * `llmAgent`, … with an approval rule and zod schemas), not only their
 * `AgentMeta`. The constructors below are the type test: before `AgentLike`
 * this file did not type-check (`requiresApproval` as a rule is not a
 * boolean), and at run time an agent with a rule was refused.
 */
import type { AgentMeta, Orchestrator } from '@switchboard/core';
import { type Agent, type AgentContext, App, agentMeta, defineAgent, llmAgent } from '@switchboard/runtime';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  bestOf,
  ConsensusOrchestrator,
  fallbackChain,
  KeywordOrchestrator,
  LlmOrchestrator,
  MetaRouter,
  PlanExecuteOrchestrator,
  RoundRobinOrchestrator,
  SequentialOrchestrator,
  SupervisorOrchestrator,
  stateGraph,
  TaskOrchestrator,
} from '../src/index.js';

// Never called: the LLM-backed orchestrators are only constructed here.
const client = new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 });

const refunds: Agent = defineAgent({
  name: 'refunds',
  description: 'Refunds orders',
  keywords: ['refund'],
  input: z.union([z.string(), z.record(z.string(), z.unknown())]),
  // A rule: approval only for large refunds.
  requiresApproval: (call) => /\d{3,}/.test(call.message),
  run: (message: string, context: AgentContext) => `refunded (${message}, ${context.toolCall.toolName})`,
});
const writer = llmAgent({
  name: 'writer',
  description: 'Writes short texts',
  keywords: ['write'],
  model: 'writer-model',
  client,
  instructions: 'Write briefly.',
});
const agents = [refunds, writer];

const builds: ReadonlyArray<readonly [string, (agents: readonly Agent[]) => Orchestrator]> = [
  ['KeywordOrchestrator', (agents) => new KeywordOrchestrator({ agents, fallbackAgent: 'refunds' })],
  ['RoundRobinOrchestrator', (agents) => new RoundRobinOrchestrator({ agents })],
  [
    'TaskOrchestrator',
    (agents) =>
      new TaskOrchestrator({ agents, tasks: { refund: { agent: 'refunds', patterns: ['refund'] } } }),
  ],
  ['LlmOrchestrator', (agents) => new LlmOrchestrator({ agents, model: 'router', client })],
  ['SupervisorOrchestrator', (agents) => new SupervisorOrchestrator({ agents, model: 'boss', client })],
  ['PlanExecuteOrchestrator', (agents) => new PlanExecuteOrchestrator({ agents, model: 'planner', client })],
  [
    'MetaRouter',
    (agents) =>
      new MetaRouter({
        agents,
        patterns: { keyword: new KeywordOrchestrator({ agents }) },
        choose: () => ({ taskType: 'general', pattern: 'keyword', rationale: 'one pattern' }),
      }),
  ],
  [
    'SequentialOrchestrator',
    (agents) => new SequentialOrchestrator({ agents, pipeline: ['refunds', 'writer'] }),
  ],
  ['ConsensusOrchestrator', (agents) => new ConsensusOrchestrator({ agents, voters: ['refunds', 'writer'] })],
  ['fallbackChain', (agents) => fallbackChain(agents)],
  ['bestOf', (agents) => bestOf(agents)],
  [
    'stateGraph().compile',
    (agents) =>
      stateGraph({
        name: 'desk',
        state: z.object({ request: z.string() }),
        input: (message) => ({ request: message }),
      })
        .agentNode('refund', { agent: 'refunds', task: (state) => state.request })
        .entry('refund')
        .compile({ agents }),
  ],
];

describe('built-in orchestrators take the agents themselves', () => {
  it.each(builds)(
    '%s keeps their metadata: a rule as requiresApproval true, the input schema as JSON Schema, no run',
    (_name, build) => {
      const orchestrator = build(agents);
      const seen: AgentMeta | undefined = orchestrator.agents.find((agent) => agent.name === 'refunds');
      // What app.agentMetas holds for it.
      expect(seen).toEqual(agentMeta(refunds));
      expect(seen).toMatchObject({ requiresApproval: true, keywords: ['refund'] });
      expect(seen?.inputSchema).toBeTypeOf('object');
      expect(seen).not.toHaveProperty('run');
    },
  );
});

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('an app routes to the agents its orchestrator was given as they are', () => {
  const echo = defineAgent({
    name: 'echo',
    description: 'Repeats',
    keywords: ['echo'],
    run: (message) => `echo: ${message}`,
  });

  it.each([
    ['KeywordOrchestrator', () => new KeywordOrchestrator({ agents: [refunds, echo] })],
    [
      'TaskOrchestrator',
      () =>
        new TaskOrchestrator({
          agents: [echo, refunds],
          tasks: { refund: { agent: 'refunds', patterns: ['refund'] } },
        }),
    ],
    [
      'SequentialOrchestrator',
      () => new SequentialOrchestrator({ agents: [refunds, echo], pipeline: ['refunds'] }),
    ],
    [
      'stateGraph().compile',
      () =>
        stateGraph({
          name: 'desk',
          state: z.object({ request: z.string(), reply: z.string().optional() }),
          input: (message) => ({ request: message }),
        })
          .agentNode('refund', { agent: 'refunds', task: (state) => state.request, into: 'reply' })
          .entry('refund')
          .respond((state) => state.reply ?? '?')
          .compile({ agents: [refunds, echo] }),
    ],
  ] as const)('%s', async (_name, build) => {
    const app = new App({ name: 'desk', agents: [refunds, echo], logLevel: 'silent' }).mount(build());
    apps.push(app);
    const small = await app.chat({ message: 'refund 40 please' });
    expect(small.status).toBe('completed');
    expect(small.reply).toBe('refunded (refund 40 please, refunds)');
    // The rule still decides per call: the app runs it, whatever the orchestrator was given.
    const large = await app.chat({ message: 'refund 400 please' });
    expect(large.status).toBe('awaiting_approval');
  });
});
