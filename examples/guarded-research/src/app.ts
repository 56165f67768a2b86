import {
  type Critic,
  type CriticOrchestrator,
  type StepRule,
  withCritic,
  withSteps,
} from '@switchboard/orchestrators';
import { App, type AppOptions, blockedPatterns, piiRedactor } from '@switchboard/runtime';
import { researchAgents } from './agents.js';
import { citationCritic } from './citation-critic.js';
import { SimulatedSearch } from './library.js';
import { ResearchDesk } from './research-desk.js';

/**
 * The step rules: every question runs `research` → `reflect` → `answer`,
 * in this order, one at a time; once the answer is written only the writer
 * may be called again (to revise it). A new question (hop 0) starts the
 * sequence over.
 */
export const RESEARCH_STEPS: readonly StepRule[] = [
  {
    name: 'research',
    description: 'A new question: research, then reflect, then answer, in this order',
    isDefault: true,
    conditions: [
      {
        type: 'predicate',
        test: (_state, conversation) => conversation.hop === 0,
        description: 'a new question',
      },
    ],
    sequence: ['research', 'reflect', 'answer'],
  },
  {
    name: 'revise',
    description: 'The answer is written: only the writer may be called again',
    conditions: [{ type: 'sequence_match', sequence: ['research', 'reflect', 'answer'] }],
    allowed: ['answer'],
  },
];

/** Options of {@link buildApp}. */
export interface GuardedResearchOptions extends Omit<AppOptions, 'name' | 'agents'> {
  /** Reviews each answer before the user reads it (default {@link citationCritic}). */
  critic?: Critic;
  /** The search the `research` agent asks (default: a new {@link SimulatedSearch}). */
  search?: SimulatedSearch;
}

/**
 * Builds the guarded research desk without starting it: the `research`,
 * `reflect` and `answer` agents, and the rails around a router that cuts
 * corners ({@link ResearchDesk}):
 * - guardrails: PII redaction everywhere text enters or leaves, and
 *   blocked patterns (prompt injection, commands in agents' tasks);
 * - step rules: research → reflect → answer, in order;
 * - a critic: each answer is reviewed, and sent back once when it is weak;
 * - the `conservative` profile: 5 hops, 2 retries with backoff, no fan-out,
 *   60 s per turn, a partial answer at a limit.
 *
 * @example
 * ```ts
 * const { app, orchestrator } = buildApp();
 * const server = await app.start(orchestrator, { port: 3000 });
 * ```
 */
export function buildApp({
  critic = citationCritic,
  search = new SimulatedSearch(),
  ...options
}: GuardedResearchOptions = {}): { app: App; orchestrator: CriticOrchestrator; search: SimulatedSearch } {
  const app = new App({
    name: 'guarded-research',
    agents: researchAgents(search),
    guardrails: [piiRedactor(), blockedPatterns()],
    profile: 'conservative',
    ...options,
  });
  const router = new ResearchDesk({ agents: app.agentMetas });
  const orchestrator = withCritic(withSteps(router, { steps: RESEARCH_STEPS }), critic);
  return { app, orchestrator, search };
}
