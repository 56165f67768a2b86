import {
  AgentError,
  type AgentMeta,
  type Conversation,
  createId,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  type MessageItem,
  type Orchestrator,
  RequestContext,
  type ToolCall,
  type ToolMessage,
} from '@switchboard/core';
import { MapMemory, type MemoryProvider } from './map-memory.js';

/** A stand-in agent: returns its reply, or throws to fail like a real agent would. */
export type FakeAgent = (message: string, call: ToolCall) => string | Promise<string>;

/** Options of {@link TestSession}. */
export interface TestSessionOptions {
  orchestrator: Orchestrator;
  /** Agents by name; an agent without an entry answers `<name> answered: <message>`. */
  agents?: Readonly<Record<string, FakeAgent>>;
  /** Default: a fresh {@link MapMemory}. Share one between sessions to share app memory. */
  memory?: MemoryProvider;
  sessionId?: string;
  userId?: string;
  maxHops?: number;
  historyWindow?: number;
}

/** What one turn produced. */
export interface TurnOutcome {
  /** What the user sees. */
  reply: string;
  status: 'completed' | 'failed';
  /** The error of a failed turn. */
  error?: Error;
  /** Every decision of the turn, in order. */
  decisions: Decision[];
  /** The calls made to agents, in order. */
  agentCalls: ToolCall[];
  /** The candidate agents offered at each decision. */
  candidates: readonly AgentMeta[];
}

const FAILURE_MESSAGE = 'Sorry, something went wrong while handling your message. Please try again.';

/**
 * A tiny in-process turn loop, shaped like the runtime's: append the user
 * message, then decide → run the agent(s) → append their `tool` messages →
 * decide again, until `route_to_user`, an `ErrorMessage` or `maxHops`. The
 * orchestrator sees the last `historyWindow` earlier messages plus the whole
 * turn, and runs inside a `RequestContext` with the session's memory.
 */
export class TestSession {
  readonly history: MessageItem[] = [];
  readonly sessionId: string;
  readonly #options: Required<Omit<TestSessionOptions, 'userId' | 'sessionId'>> & { userId?: string };

  constructor({
    orchestrator,
    agents = {},
    memory = new MapMemory().provider,
    sessionId = createId('session'),
    userId,
    maxHops = 10,
    historyWindow = 50,
  }: TestSessionOptions) {
    this.sessionId = sessionId;
    this.#options = { orchestrator, agents, memory, userId, maxHops, historyWindow };
  }

  /** Sends one user message; `candidates` narrows the agents offered to the orchestrator (as a wrapper would). */
  async send(content: string, { candidates }: { candidates?: readonly string[] } = {}): Promise<TurnOutcome> {
    const { orchestrator, maxHops, historyWindow, memory, userId } = this.#options;
    const offered = candidates
      ? orchestrator.agents.filter((agent) => candidates.includes(agent.name))
      : orchestrator.agents;
    const turnId = createId('turn');
    const earlier = this.history.slice(Math.max(0, this.history.length - historyWindow));
    const messages: MessageItem[] = [
      ...earlier,
      { id: createId('msg'), role: 'user', content, createdAt: now() },
    ];
    const turnStart = earlier.length;
    const owner = { sessionId: this.sessionId, userId };
    const context = new RequestContext({
      ...owner,
      requestId: createId('req'),
      signal: new AbortController().signal,
      memory: (scope) => memory(scope, owner),
    });
    const outcome: TurnOutcome = {
      reply: FAILURE_MESSAGE,
      status: 'failed',
      decisions: [],
      agentCalls: [],
      candidates: offered,
    };

    for (let hop = 0; hop < maxHops; hop++) {
      const conversation: Conversation = {
        sessionId: this.sessionId,
        turnId,
        messages,
        turnStart,
        hop,
        agents: offered,
      };
      const decision = await RequestContext.run(context, () => orchestrator.decide(conversation));
      outcome.decisions.push(decision);
      if (isErrorMessage(decision)) {
        Object.assign(outcome, { reply: decision.userMessage ?? FAILURE_MESSAGE, error: decision.error });
        break;
      }
      const calls = Array.isArray(decision) ? decision : [decision];
      const first = calls[0];
      if (first && isRouteToUser(first)) {
        Object.assign(outcome, { reply: first.message, status: 'completed' });
        messages.push({
          id: createId('msg'),
          role: 'assistant',
          content: first.message,
          toolCallId: first.id,
          createdAt: now(),
        });
        break;
      }
      outcome.agentCalls.push(...calls);
      messages.push(...(await Promise.all(calls.map((call) => this.#runAgent(call)))));
    }
    if (outcome.status === 'failed' && !outcome.error)
      outcome.error = new Error(`no answer within ${maxHops} hops`);
    this.history.push(...messages.slice(turnStart));
    return outcome;
  }

  async #runAgent(call: ToolCall): Promise<ToolMessage> {
    const agent =
      this.#options.agents[call.toolName] ?? ((message) => `${call.toolName} answered: ${message}`);
    const base = {
      id: createId('msg'),
      role: 'tool',
      name: call.toolName,
      toolCallId: call.id,
      createdAt: now(),
    } as const;
    try {
      return { ...base, content: await agent(call.message, call), status: 'ok' };
    } catch (error) {
      // The runtime stores an agent failure as its AgentError message; routers must not echo it verbatim.
      return {
        ...base,
        content: new AgentError({ agent: call.toolName, cause: error }).message,
        status: 'error',
      };
    }
  }
}

function now(): string {
  return new Date().toISOString();
}
