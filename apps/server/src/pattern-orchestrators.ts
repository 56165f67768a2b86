import type { AgentMeta, Orchestrator } from '@switchboard/core';
import {
  LlmOrchestrator,
  MetaRouter,
  PlanExecuteOrchestrator,
  SupervisorOrchestrator,
  type TaskType,
} from '@switchboard/orchestrators';
import type { ServerConfig } from './config.js';

/** The `ORCHESTRATOR` values whose orchestrator is a multi-agent pattern driven by a model. */
export type PatternName = 'supervisor' | 'plan' | 'meta';

/** How the meta-router tells requests apart, and which pattern handles each kind. */
const DEMO_TASK_TYPES: readonly TaskType[] = [
  {
    name: 'single',
    description: 'One question one agent can answer: a calculation, a unit conversion, the time or a date',
    patterns: ['react'],
  },
  {
    name: 'several',
    description: 'Several independent questions in one message, e.g. the time in Tokyo and 5 km in miles',
    patterns: ['supervisor'],
  },
  {
    name: 'multi-step',
    description:
      'A task whose steps need the results of earlier ones, e.g. a conversion, then a calculation with it',
    patterns: ['plan'],
  },
];

function modelOptions(config: ServerConfig) {
  return { model: config.OPENAI_MODEL, apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL };
}

function supervisor(config: ServerConfig, agents: readonly AgentMeta[]): SupervisorOrchestrator {
  return new SupervisorOrchestrator({
    name: 'supervisor',
    agents,
    ...modelOptions(config),
    fallback: { agent: 'help' },
  });
}

function planner(config: ServerConfig, agents: readonly AgentMeta[]): PlanExecuteOrchestrator {
  return new PlanExecuteOrchestrator({ name: 'plan', agents, ...modelOptions(config) });
}

/**
 * The orchestrator of a multi-agent pattern over the demo agents, on the
 * configured OpenAI-compatible model (`readConfig` makes sure there is a key):
 *
 * - `supervisor`: splits a request into independent sub-goals, runs them at
 *   once and writes the answer from their results;
 * - `plan`: plans steps with dependencies, runs them round by round,
 *   re-plans after a failure, and writes the answer;
 * - `meta`: a `MetaRouter` that classifies each request (one question,
 *   several independent ones, or a task in steps) and hands it to the
 *   `react` (an `LlmOrchestrator`), `supervisor` or `plan` pattern.
 *
 * @example
 * ```ts
 * const orchestrator = createPatternOrchestrator('meta', config, agents.map(agentMeta));
 * ```
 */
export function createPatternOrchestrator(
  pattern: PatternName,
  config: ServerConfig,
  agents: readonly AgentMeta[],
): Orchestrator {
  switch (pattern) {
    case 'supervisor':
      return supervisor(config, agents);
    case 'plan':
      return planner(config, agents);
    case 'meta':
      return new MetaRouter({
        name: 'meta',
        agents,
        taskTypes: DEMO_TASK_TYPES,
        patterns: {
          react: new LlmOrchestrator({
            name: 'react',
            agents,
            ...modelOptions(config),
            fallback: { agent: 'help' },
          }),
          supervisor: supervisor(config, agents),
          plan: planner(config, agents),
        },
        defaultPattern: 'react',
        ...modelOptions(config),
      });
  }
}
