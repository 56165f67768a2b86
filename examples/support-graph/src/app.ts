import { App, type AppOptions, llmAgent } from '@switchboard/runtime';
import OpenAI from 'openai';
import { supportGraph } from './graph.js';
import { SupportServices } from './services.js';

/** Options of {@link buildApp}. */
export interface SupportDeskOptions extends Omit<AppOptions, 'name' | 'agents'> {
  /** The model of the classifier and the writer, e.g. `gpt-4o-mini`. */
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible endpoint including `/v1`; OpenAI's when absent. */
  baseURL?: string;
  /** The back office (default: a new {@link SupportServices}). */
  services?: SupportServices;
}

/** The classifier's system prompt: it answers with one word. */
export const CLASSIFIER_INSTRUCTIONS =
  'You classify support requests. Answer with exactly one word: billing (money, refunds, invoices, charges) or technical (everything else).';

/** The writer's system prompt. */
export const WRITER_INSTRUCTIONS =
  'You write the reply of a support desk to the customer, in two or three friendly sentences, from the facts you are given. Mention the outcome and, when there are any, the articles.';

/**
 * Builds the support desk without starting it: two model agents (the
 * classifier and the writer) and the support graph, which hosts its own
 * function nodes. Keep `maxHops` above the graph's steps (7 here).
 */
export function buildApp({
  model,
  apiKey,
  baseURL,
  services = new SupportServices(),
  ...options
}: SupportDeskOptions) {
  const client = new OpenAI({ apiKey, baseURL, maxRetries: 0 });
  const agents = [
    llmAgent({
      name: 'classifier',
      description: 'Classifies a request',
      model,
      client,
      instructions: CLASSIFIER_INSTRUCTIONS,
    }),
    llmAgent({
      name: 'writer',
      description: 'Writes the reply',
      model,
      client,
      instructions: WRITER_INSTRUCTIONS,
    }),
  ];
  const app = new App({ name: 'support-desk', agents, ...options });
  const orchestrator = supportGraph(services, app.agentMetas);
  return { app, orchestrator, services };
}
