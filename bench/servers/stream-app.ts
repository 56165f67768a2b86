// The stream-relay variant's Switchboard app (bench/servers/stream-switchboard.ts serves it, bench/first-hop.ts
// asks it in process): one llmAgent on the model at `baseURL`, chosen by keyword routing, in-memory stores,
// untraced.
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, llmAgent } from '@switchboard/runtime';

/** The app, whose one agent, `writer`, streams the model's answer, and its orchestrator (to mount or start). */
export function streamApp(
  name: string,
  baseURL: string | undefined,
): { app: App; orchestrator: KeywordOrchestrator } {
  const writer = llmAgent({
    name: 'writer',
    description: 'Writes',
    keywords: ['write'],
    model: 'bench-model',
    instructions: 'You are a bench.',
    apiKey: 'sk-bench',
    baseURL,
  });
  return {
    app: new App({ name, agents: [writer], logger: () => {} }),
    orchestrator: new KeywordOrchestrator({ name: 'bench', agents: [writer], fallbackAgent: 'writer' }),
  };
}
