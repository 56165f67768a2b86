import type { Orchestrator } from '@switchboard/core';
import { bestOf, fallbackChain, perceptionAgent, withBreaker, withCritic } from '@switchboard/orchestrators';
import {
  type Agent,
  App,
  type AppOptions,
  agentMeta,
  llmAgent,
  orchestratorAgent,
  retrievalAgent,
  type VectorStore,
} from '@switchboard/runtime';
import { ResearchDesk } from './desk.js';
import type { SimulatedWebSearch } from './web-search.js';

/** The concise writer's instructions (the offline model tells the writers apart by them). */
export const CONCISE_INSTRUCTIONS =
  'You answer research questions in one sentence, from the numbered sources you are given only.';
/** The thorough writer's instructions. */
export const THOROUGH_INSTRUCTIONS =
  'You answer research questions in a short paragraph from the numbered sources you are given only, ' +
  'citing each fact with its number in brackets, e.g. [1].';

/** Options of {@link buildApp}. */
export interface ResearchDeskOptions extends Partial<AppOptions> {
  /** The model of every model call (perception, writers, judge, critic), e.g. `gpt-4o-mini`. */
  model: string;
  apiKey: string;
  /** An OpenAI-compatible endpoint (the offline scripted model's URL, or `OPENAI_BASE_URL`). */
  baseURL?: string;
  /** The library, with the documents already added. */
  store: VectorStore;
  /** The flaky web search. */
  web: SimulatedWebSearch;
}

/**
 * The research desk: perception → research (a fallback chain, the web then
 * the library, behind a breaker that bans the web after two failures) →
 * drafts (a best-of of two writers judged by a model) → answer, reviewed by
 * a critic model. The whole desk is behind a breaker too, which keeps the
 * stats `GET /v1/agents` and the console show.
 */
export function buildApp({ model, apiKey, baseURL, store, web, ...options }: ResearchDeskOptions): {
  app: App;
  orchestrator: Orchestrator;
} {
  const client = { apiKey, baseURL };
  const library = retrievalAgent({
    name: 'library',
    description: 'Searches the desk’s notes on grid energy storage',
    store,
    topK: 3,
    minScore: 0.05,
  });
  const webSearch = web.agent();
  const research = orchestratorAgent({
    name: 'research',
    description: 'Finds sources: the web first, the library when the web fails',
    orchestrator: withBreaker(fallbackChain([webSearch, library], { name: 'research' }), {
      failures: 2,
      coolDownMs: 60_000,
    }),
    agents: [webSearch, library],
  });
  const writers: Agent[] = [
    llmAgent({
      name: 'concise-writer',
      description: 'Answers in one sentence',
      model,
      instructions: CONCISE_INSTRUCTIONS,
      ...client,
    }),
    llmAgent({
      name: 'thorough-writer',
      description: 'Answers with cited sources',
      model,
      instructions: THOROUGH_INSTRUCTIONS,
      ...client,
    }),
  ];
  const drafts = orchestratorAgent({
    name: 'drafts',
    description: 'Writes two drafts and keeps the one a judge model scores best',
    orchestrator: bestOf(writers, { name: 'drafts', judge: { model, ...client } }),
    agents: writers,
  });
  const perception = perceptionAgent({ model, ...client });

  const app = new App({ name: 'research-desk', agents: [perception, research, drafts], ...options });
  const desk = new ResearchDesk({ agents: [perception, research, drafts].map(agentMeta) });
  const orchestrator = withBreaker(withCritic(desk, { model, ...client }, { threshold: 0.7 }), {
    failures: 3,
  });
  return { app, orchestrator };
}
