import {
  type AgentLike,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  type MemoryScope,
  RequestContext,
  StoreUnavailableError,
  toolCall,
} from '@switchboard/core';
import { RoutingOrchestrator } from './routing-orchestrator.js';

/** Options of {@link RoundRobinOrchestrator}. */
export interface RoundRobinOrchestratorOptions {
  /** Default `round-robin`. */
  name?: string;
  description?: string;
  /** The agents to take turns, in rotation order: the agents themselves or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /**
   * Where the counter lives: `app` (default) rotates across every session
   * and, with a shared store such as Redis, across every replica; `session`
   * rotates within each conversation.
   */
  scope?: Extract<MemoryScope, 'app' | 'session'>;
  /** The memory key of the counter (default `round-robin:<name>`). */
  counterKey?: string;
}

/** What the user sees when the counter cannot be advanced. */
const UNAVAILABLE_MESSAGE =
  'Sorry, I cannot pick an agent right now because shared memory is unavailable. Please try again shortly.';

/**
 * Sends each user message to the next agent in turn, then returns its answer
 * to the user. The counter lives in `RequestContext` memory and is advanced
 * with the atomic `updateContent`, so replicas sharing a store (Redis) rotate
 * fairly between them. Only the decision's candidate agents take part, in
 * declared order. When memory fails, the turn ends with a clear `ErrorMessage`.
 *
 * @example
 * ```ts
 * await app.start(new RoundRobinOrchestrator({ agents: app.agentMetas, scope: 'session' }));
 * ```
 */
export class RoundRobinOrchestrator extends RoutingOrchestrator {
  /** The memory scope of the counter. */
  readonly scope: 'app' | 'session';
  /** The memory key of the counter. */
  readonly counterKey: string;

  constructor({
    name = 'round-robin',
    description,
    agents,
    scope = 'app',
    counterKey,
  }: RoundRobinOrchestratorOptions) {
    super({ name, description, agents });
    if (scope !== 'app' && scope !== 'session') {
      throw new ConfigurationError({
        message: `Round-robin scope must be 'app' or 'session', not '${String(scope)}'`,
      });
    }
    if (counterKey !== undefined && (typeof counterKey !== 'string' || counterKey.length === 0)) {
      throw new ConfigurationError({ message: 'Round-robin counterKey must be a non-empty string' });
    }
    this.scope = scope;
    this.counterKey = counterKey ?? `round-robin:${name}`;
  }

  protected async selectAgent(conversation: Conversation): Promise<Decision> {
    const candidates = conversation.agents;
    if (candidates.length === 0) {
      return {
        error: new ConfigurationError({
          message: `Round-robin orchestrator '${this.name}' has no agent to route to`,
        }),
        userMessage: 'Sorry, no agent is available to answer right now.',
      };
    }
    const memory = RequestContext.current().getMemory(this.scope);
    // A value that is not a count (written by someone else) restarts the rotation instead of failing forever.
    const result = await memory.updateContent<number>(
      this.counterKey,
      (count) => (Number.isSafeInteger(count) && count >= 0 ? count : 0) + 1,
      0,
    );
    if (!result.success) {
      return {
        error: new StoreUnavailableError({
          message: `Round-robin orchestrator '${this.name}' could not advance its counter '${this.counterKey}' in ${this.scope} memory: ${result.error.message}`,
          cause: result.error,
        }),
        userMessage: UNAVAILABLE_MESSAGE,
      };
    }
    const turn = result.data;
    const agent = candidates[(turn - 1) % candidates.length]!;
    return toolCall(agent.name, currentUserMessage(conversation).content, {
      reason: `round-robin turn ${turn}`,
      thought: `Counter '${this.counterKey}' (${this.scope} memory) is at ${turn}; ${candidates.length} candidate agent(s), so ${agent.name} is next`,
    });
  }
}
