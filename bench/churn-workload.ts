// The churn workload shared by every churn measurement (in process, over HTTP, on Redis): three agents that
// await like an agent waiting on I/O, chosen by a keyword in the message, and a new session every 3 turns.
import { setImmediate as nextTick } from 'node:timers/promises';
import { type Agent, App, type AppOptions, defineAgent } from '@switchboard/runtime';
import { benchOrchestrator } from './servers/orchestrator.js';

/** Turns per session before the next session opens. */
export const TURNS_PER_SESSION = 3;

/** The three agents' keywords, in the order the messages cycle through them. */
export const KEYWORDS = ['billing', 'shipping', 'weather'] as const;

/** The work each agent does: awaits a microtask, an event-loop turn, or both, then answers. */
export const AGENT_WORK: Record<(typeof KEYWORDS)[number], (message: string) => Promise<string>> = {
  billing: async (message) => {
    await Promise.resolve();
    return `billing: ${message.length} characters read`;
  },
  shipping: async () => {
    await nextTick();
    return 'shipping: your parcel leaves tomorrow';
  },
  weather: async () => {
    await Promise.resolve();
    await nextTick();
    return 'weather: sunny, 21 °C';
  },
};

/** The user message of turn `index`: names one agent's keyword among ordinary words. */
export function churnMessage(index: number): string {
  return `hello, a question about ${KEYWORDS[index % KEYWORDS.length]} number ${index}`;
}

/** The session of turn `index` under `prefix`: a new one every {@link TURNS_PER_SESSION} turns. */
export function churnSession(prefix: string, index: number): string {
  return `${prefix}-${Math.floor(index / TURNS_PER_SESSION)}`;
}

/** The workload's agents, as Switchboard agents routed by their keyword. */
export function churnAgents(): Agent[] {
  return KEYWORDS.map((keyword) =>
    defineAgent({
      name: keyword,
      description: `Answers ${keyword} questions`,
      keywords: [keyword],
      run: AGENT_WORK[keyword],
    }),
  );
}

/** An untraced Switchboard app on the churn workload, keyword routing mounted. */
export function churnApp(options: Pick<AppOptions, 'sessionStore' | 'memoryStore' | 'eventLog'> = {}): App {
  const app = new App({ name: 'bench-churn', agents: churnAgents(), ...options, logger: () => {} });
  return app.mount(benchOrchestrator(app));
}
