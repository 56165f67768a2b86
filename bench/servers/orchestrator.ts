import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { type Agent, type App, defineAgent } from '@switchboard/runtime';

/** The orchestrator every Switchboard bench variant uses: keyword routing. */
export function benchOrchestrator(app: App): KeywordOrchestrator {
  return new KeywordOrchestrator({ name: 'bench', agents: app.agentMetas });
}

/** The agents of the HTTP bench servers: `echo`, which every request names, and `other`, never chosen. */
export function benchAgents(): Agent[] {
  return [
    defineAgent({
      name: 'echo',
      description: 'Repeats the message',
      keywords: ['echo'],
      run: (message) => message,
    }),
    defineAgent({ name: 'other', description: 'Never chosen here', keywords: ['other'], run: () => 'other' }),
  ];
}
