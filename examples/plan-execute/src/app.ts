import { PlanExecuteOrchestrator } from '@switchboard/orchestrators';
import { App, type AppOptions } from '@switchboard/runtime';
import OpenAI from 'openai';
import { briefingAgents } from './agents.js';
import { SimulatedDesk } from './desk.js';

/** Options of {@link buildApp}. */
export interface BriefingDeskOptions extends Omit<AppOptions, 'name' | 'agents'> {
  /** The planning model, e.g. `gpt-4o-mini`. */
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible endpoint including `/v1`; OpenAI's when absent. */
  baseURL?: string;
  /** Retries of the `openai` client on 429/5xx (default 2). */
  maxRetries?: number;
  /** Where the agents work (default: a new {@link SimulatedDesk}). */
  desk?: SimulatedDesk;
}

const INSTRUCTIONS =
  "You are the planner of a briefing desk. You break the user's request for a briefing into steps, each done by one agent; a step may need the results of earlier steps, and steps that do not depend on each other run at the same time.";

/**
 * Builds the briefing desk without starting it: the `researcher`,
 * `factbook`, `outliner` and `writer` agents, and a
 * `PlanExecuteOrchestrator` that has a model plan the steps, runs every step
 * whose dependencies are done at once, re-plans once after a failed step,
 * and has the model write the answer from the results.
 *
 * @example
 * ```ts
 * const { app, orchestrator } = buildApp({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY! });
 * const server = await app.start(orchestrator, { port: 3000 });
 * ```
 */
export function buildApp({
  model,
  apiKey,
  baseURL,
  maxRetries = 2,
  desk = new SimulatedDesk(),
  ...options
}: BriefingDeskOptions): { app: App; orchestrator: PlanExecuteOrchestrator; desk: SimulatedDesk } {
  const app = new App({ name: 'briefing-desk', agents: briefingAgents(desk), ...options });
  const orchestrator = new PlanExecuteOrchestrator({
    name: 'briefing-desk',
    agents: app.agentMetas,
    model,
    client: new OpenAI({ apiKey, baseURL, maxRetries }),
    instructions: INSTRUCTIONS,
    maxReplans: 1,
  });
  return { app, orchestrator, desk };
}
