// The turn every framework runs: keyword routing to one of three agents, history per session, a mock model
// that answers after an `await` (no network), a new session every 3 turns.

/** The three agents and the keyword that routes to each. */
export const AGENTS = ['billing', 'weather', 'travel'] as const;

/** One of {@link AGENTS}. */
export type AgentName = (typeof AGENTS)[number];

/** Turns per session before the workload opens a new one. */
export const TURNS_PER_SESSION = 3;

/** The user message of turn `index`: names one agent's keyword, in rotation. */
export function userMessage(index: number): string {
  return `${AGENTS[index % AGENTS.length]} question number ${index}, please help`;
}

/** The session of turn `index` for one caller (a new session every {@link TURNS_PER_SESSION} turns). */
export function sessionOf(index: number, caller: number | string = 0): string {
  return `s${caller}-${Math.floor(index / TURNS_PER_SESSION)}`;
}

/** The keyword router every subject uses when its framework has none of its own. */
export function route(message: string): AgentName {
  for (const agent of AGENTS) if (new RegExp(`\\b${agent}\\b`, 'i').test(message)) return agent;
  return 'billing';
}

/**
 * What the mock model of `agent` answers when it sees `userMessages` user messages: the count proves that each
 * framework kept the session's history (1, 2, 3 within a session) and opened a fresh one every 3 turns.
 */
export function modelReply(agent: AgentName, userMessages: number): string {
  return `${agent} agent: noted (${userMessages} user messages in this session)`;
}

/** The reply a correct turn `index` of a session gets. */
export function expectedReply(index: number): string {
  return modelReply(route(userMessage(index)), (index % TURNS_PER_SESSION) + 1);
}

/** How a subject is built: with the framework's own history store or the bench's, and for which harness. */
export interface SubjectOptions {
  /** Mastra `Memory`, LangGraph `MemorySaver`; without, the bench keeps each session's history in a Map. */
  frameworkMemory: boolean;
  /** Built to serve HTTP (Switchboard then listens itself); otherwise called in process. */
  http: boolean;
}

/** Builds a subject. */
export type SubjectFactory = (options: SubjectOptions) => Subject | Promise<Subject>;

/** A framework wired for the workload: one turn in, the reply out. */
export interface Subject {
  turn(sessionId: string, message: string): Promise<string>;
  /** Serves POST /v1/chat itself (Switchboard); otherwise the bench wraps `turn` in a minimal node:http server. */
  listen?(): Promise<{ url: string; close(): Promise<void> }>;
  close?(): Promise<void>;
}
