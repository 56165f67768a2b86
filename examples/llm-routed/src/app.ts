import { LlmOrchestrator } from '@switchboard/orchestrators';
import { App, type AppOptions, llmAgent } from '@switchboard/runtime';
import OpenAI from 'openai';
import { converter } from './converter.js';
import { getWeather } from './weather-tool.js';

/** Options of {@link buildApp}. */
export interface LlmRoutedAppOptions extends Omit<AppOptions, 'name' | 'agents'> {
  apiKey: string;
  /** Any OpenAI-compatible endpoint including `/v1`; OpenAI's when absent. */
  baseURL?: string;
  /** The model of both the router and the weather agent. */
  model: string;
  /** Retries of the `openai` client on 429/5xx (default 2). */
  maxRetries?: number;
}

/** What the router says when the model gives no valid decision twice in a row. */
export const FALLBACK_MESSAGE =
  'Sorry, I could not work out how to help with that. I can tell you the weather or convert units.';

/**
 * Builds the app: an `llmAgent` with the `get_weather` tool, the plain
 * `converter` agent, and an `LlmOrchestrator` that picks between them (or
 * answers the user). Router and agent share one `openai` client.
 *
 * @example
 * ```ts
 * const { app, orchestrator } = buildApp({ apiKey: process.env.OPENAI_API_KEY!, model: 'gpt-4o-mini' });
 * await app.start(orchestrator, { port: 3000 });
 * ```
 */
export function buildApp({ apiKey, baseURL, model, maxRetries = 2, ...options }: LlmRoutedAppOptions): {
  app: App;
  orchestrator: LlmOrchestrator;
} {
  const client = new OpenAI({ apiKey, baseURL, maxRetries });
  const weather = llmAgent({
    name: 'weather',
    description: 'Answers questions about the current weather in a city',
    model,
    client,
    instructions:
      'You report the weather. Call get_weather for the city in question, then answer in one short sentence with the temperature and conditions.',
    tools: [getWeather],
  });
  const app = new App({ name: 'llm-routed', agents: [weather, converter], ...options });
  const orchestrator = new LlmOrchestrator({
    name: 'llm-router',
    agents: app.agentMetas,
    model,
    client,
    fallback: { message: FALLBACK_MESSAGE },
  });
  return { app, orchestrator };
}
