import {
  type AgentMeta,
  type Conversation,
  createId,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  MaxHopsExceededError,
  type MessageItem,
  type Orchestrator,
  type ToolCall,
} from '@switchboard/core';
import { App, defineAgent, type MemoryStore, type TurnResult } from '@switchboard/runtime';
import { afterEach } from 'vitest';

/** A stand-in agent: returns its reply, or throws to fail like a real agent would. */
export type FakeAgent = (message: string, call: ToolCall) => string | Promise<string>;

/** Options of {@link TestSession}. */
export interface TestSessionOptions {
  orchestrator: Orchestrator;
  /** Agents by name; an agent without an entry answers `<name> answered: <message>`. */
  agents?: Readonly<Record<string, FakeAgent>>;
  /** The app's memory store (default: a fresh one). Share an `InMemoryMemoryStore` between sessions to share app memory. */
  memory?: MemoryStore;
  sessionId?: string;
  userId?: string;
  maxHops?: number;
  historyWindow?: number;
}

/** What one turn produced. */
export interface TurnOutcome {
  /** What the user sees. */
  reply: string;
  status: TurnResult['status'];
  /** The error of a failed turn. */
  error?: Error;
  /** Every decision of the turn, in order, as the orchestrator returned it. */
  decisions: Decision[];
  /** The calls the runtime made to agents, in order. */
  agentCalls: ToolCall[];
  /** The candidate agents offered at each decision. */
  candidates: readonly AgentMeta[];
}

/** What the recording wrapper needs to know about a running turn. */
interface TurnRecording {
  candidates: readonly AgentMeta[];
  decisions: Decision[];
}

const openApps = new Set<App>();

// Every app a test created is closed after it, so no timer outlives the test.
afterEach(async () => {
  const apps = [...openApps];
  openApps.clear();
  await Promise.all(apps.map((app) => app.close()));
});

/**
 * One conversation with an orchestrator, run by the real runtime: an `App`
 * hosting one agent per agent of the orchestrator (each answering with its
 * {@link FakeAgent}), with the orchestrator mounted behind a thin wrapper that
 * narrows the candidates (as a step rule would) and records each decision.
 */
export class TestSession {
  /** The session's stored messages, as of the last {@link send}. */
  readonly history: MessageItem[] = [];
  readonly sessionId: string;
  readonly #app: App;
  readonly #userId?: string;
  readonly #maxHops: number;
  readonly #turns = new Map<string, TurnRecording>();

  constructor({
    orchestrator,
    agents = {},
    memory,
    sessionId = createId('session'),
    userId,
    maxHops = 10,
    historyWindow = 50,
  }: TestSessionOptions) {
    this.sessionId = sessionId;
    this.#userId = userId;
    this.#maxHops = maxHops;
    const hosted = orchestrator.agents.map((meta) =>
      defineAgent({
        ...meta,
        run: (message, { toolCall }) =>
          (agents[meta.name] ?? ((text) => `${meta.name} answered: ${text}`))(message, toolCall),
      }),
    );
    const recording: Orchestrator = {
      name: orchestrator.name,
      description: orchestrator.description,
      agents: orchestrator.agents,
      decide: async (conversation: Conversation) => {
        const turn = this.#turns.get(conversation.turnId);
        if (!turn) throw new Error(`TestSession: unknown turn ${conversation.turnId}`);
        const decision = await orchestrator.decide({ ...conversation, agents: turn.candidates });
        turn.decisions.push(decision);
        return decision;
      },
    };
    this.#app = new App({
      name: orchestrator.name,
      agents: hosted,
      memoryStore: memory,
      maxHops,
      historyWindow,
      // Failed turns are what these tests check; their log lines would only be noise.
      logLevel: 'silent',
    }).mount(recording);
    openApps.add(this.#app);
  }

  /** Sends one user message; `candidates` narrows the agents offered to the orchestrator (as a wrapper would). */
  async send(content: string, { candidates }: { candidates?: readonly string[] } = {}): Promise<TurnOutcome> {
    const { agents } = this.#app.orchestrator!;
    const turn: TurnRecording = {
      candidates: candidates ? agents.filter((agent) => candidates.includes(agent.name)) : agents,
      decisions: [],
    };
    const called = new Set<string>();
    let turnId: string | undefined;
    try {
      const result = await this.#app.chat({
        sessionId: this.sessionId,
        userId: this.#userId,
        message: content,
        onEvent: (event) => {
          if (event.type === 'turn-start') {
            turnId = event.turnId;
            this.#turns.set(event.turnId, turn);
          } else if (event.type === 'agent-start') called.add(event.toolCallId);
        },
      });
      this.history.splice(0, this.history.length, ...(await this.#app.sessions.read(this.sessionId)));
      const outcome: TurnOutcome = {
        reply: result.reply,
        status: result.status,
        decisions: turn.decisions,
        agentCalls: turn.decisions
          .flatMap((decision) => (isErrorMessage(decision) ? [] : [decision].flat()))
          .filter((call) => !isRouteToUser(call) && called.has(call.id)),
        candidates: turn.candidates,
      };
      if (result.error) outcome.error = this.#errorOf(turn.decisions.at(-1), result.error);
      return outcome;
    } finally {
      if (turnId) this.#turns.delete(turnId);
    }
  }

  /** Closes the app now (otherwise it is closed after the test). */
  async close(): Promise<void> {
    openApps.delete(this.#app);
    await this.#app.close();
  }

  /**
   * The `TurnResult` carries only the error's code and the user's message: the
   * error itself is the one the orchestrator returned, or the engine's own.
   */
  #errorOf(last: Decision | undefined, { code, message }: { code: string; message: string }): Error {
    if (last && isErrorMessage(last)) return last.error;
    if (code === 'max_hops_exceeded') return new MaxHopsExceededError({ maxHops: this.#maxHops });
    return Object.assign(new Error(message), { code });
  }
}

/** A memory store whose every operation fails with `error`, like a store that is down. */
export function failingMemory(error: Error): MemoryStore {
  const fail = async (): Promise<never> => {
    throw error;
  };
  return { specificationVersion: 'v1', get: fail, set: fail, delete: fail, update: fail, clear: fail };
}
