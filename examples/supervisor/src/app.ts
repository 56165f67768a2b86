import { SupervisorOrchestrator } from '@switchboard/orchestrators';
import { App, type AppOptions } from '@switchboard/runtime';
import OpenAI from 'openai';
import { travelAgents } from './agents.js';
import { SimulatedTravelServices } from './travel-services.js';

/** Options of {@link buildApp}. */
export interface TravelDeskOptions extends Omit<AppOptions, 'name' | 'agents'> {
  /** The supervising model, e.g. `gpt-4o-mini`. */
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible endpoint including `/v1`; OpenAI's when absent. */
  baseURL?: string;
  /** Retries of the `openai` client on 429/5xx (default 2). */
  maxRetries?: number;
  /** The booking services the agents ask (default: a new {@link SimulatedTravelServices}). */
  services?: SimulatedTravelServices;
}

/** What the desk says when the model gives no valid decomposition twice in a row. */
export const FALLBACK_MESSAGE =
  'Sorry, I could not work out how to plan that. Ask me about flights, hotels or the weather for a weekend trip.';

const INSTRUCTIONS =
  "You are the supervisor of a travel desk. You split the traveller's request into independent sub-goals, one per agent (flights, hotels, weather); the agents work at the same time.";

/**
 * Builds the travel desk without starting it: the `flights`, `hotels` and
 * `weather` agents, and a `SupervisorOrchestrator` that splits a request
 * into one sub-goal per agent, runs them at once and writes the answer
 * from their results.
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
  services = new SimulatedTravelServices(),
  ...options
}: TravelDeskOptions): { app: App; orchestrator: SupervisorOrchestrator; services: SimulatedTravelServices } {
  const app = new App({ name: 'travel-desk', agents: travelAgents(services), ...options });
  const orchestrator = new SupervisorOrchestrator({
    name: 'travel-desk',
    agents: app.agentMetas,
    model,
    client: new OpenAI({ apiKey, baseURL, maxRetries }),
    instructions: INSTRUCTIONS,
    fallback: { message: FALLBACK_MESSAGE },
  });
  return { app, orchestrator, services };
}
