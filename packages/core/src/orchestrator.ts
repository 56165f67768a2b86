import { type AgentLike, agentMetaOf } from './agent-like.js';
import type { Conversation } from './conversation.js';
import {
  ConfigurationError,
  InvalidDecisionError,
  OrchestratorError,
  SwitchboardError,
  UnknownAgentError,
} from './errors/index.js';
import {
  type AgentMeta,
  AgentMetaSchema,
  type Decision,
  type ErrorMessage,
  isErrorMessage,
  ROUTE_TO_USER,
  type ToolCall,
  ToolCallSchema,
} from './messages.js';

/**
 * The contract the runtime depends on. Most users extend
 * {@link AbstractOrchestrator} instead of implementing this directly.
 */
export interface Orchestrator {
  readonly name: string;
  readonly description?: string;
  /** Every agent this orchestrator may route to. */
  readonly agents: readonly AgentMeta[];
  /**
   * Decides the next step: the decision itself when it is ready at once, or
   * a promise of it (`await` works for both). Never throws or rejects, and
   * never returns a call to an agent outside `conversation.agents`: failures
   * come back as an `ErrorMessage`.
   */
  decide(conversation: Conversation): Decision | Promise<Decision>;
}

/** Constructor options of {@link AbstractOrchestrator}. */
export interface OrchestratorOptions {
  name: string;
  description?: string;
  /**
   * The agents it may route to: the agents themselves (the runtime's
   * `Agent`s) or their metadata (`app.agentMetas`). It keeps their
   * metadata as `agents` (see {@link AgentLike}).
   */
  agents: readonly AgentLike[];
}

/**
 * The base class of every orchestrator. Implement {@link handleMessage}; the
 * runtime calls {@link decide}, which validates what you return.
 *
 * @example
 * ```ts
 * class EchoOrchestrator extends AbstractOrchestrator {
 *   protected handleMessage(conversation: Conversation) {
 *     const last = lastMessage(conversation);
 *     if (last?.role === 'tool') return routeToUser(last.content);
 *     return toolCall('echo', currentUserMessage(conversation).content);
 *   }
 * }
 * ```
 */
export abstract class AbstractOrchestrator implements Orchestrator {
  readonly name: string;
  readonly description?: string;
  readonly agents: readonly AgentMeta[];

  constructor({ name, description, agents }: OrchestratorOptions) {
    if (!name) throw new ConfigurationError({ message: 'An orchestrator needs a name' });
    this.name = name;
    this.description = description;
    this.agents = validateAgents(agents, name);
  }

  /**
   * Decides what happens next in the turn: call an agent, call several
   * concurrently (an array), answer the user (`route_to_user`), or fail
   * (an `ErrorMessage`). May be async. A throw becomes an `ErrorMessage`.
   */
  protected abstract handleMessage(conversation: Conversation): Decision | Promise<Decision>;

  /**
   * The runtime's entry point: runs {@link handleMessage} and checks its
   * result. Never throws; a throw, a malformed result, an empty array or a
   * call to an agent outside `conversation.agents` becomes an `ErrorMessage`.
   * A synchronous `handleMessage` gets a synchronous answer (no promise), so
   * that a turn of synchronous steps never waits on the event loop.
   */
  decide(conversation: Conversation): Decision | Promise<Decision> {
    let decision: unknown;
    try {
      decision = this.handleMessage(conversation);
    } catch (error) {
      return this.#failure(error);
    }
    if (!isThenable(decision)) return validateDecision(decision, conversation.agents);
    return Promise.resolve(decision).then(
      (settled) => validateDecision(settled, conversation.agents),
      (error: unknown) => this.#failure(error),
    );
  }

  #failure(error: unknown): ErrorMessage {
    return {
      error:
        SwitchboardError.isInstance(error) && error instanceof Error
          ? error
          : new OrchestratorError({ orchestrator: this.name, cause: error }),
    };
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  // Reading `then` of a hostile value may throw; validateDecision reports such a value.
  try {
    return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
  } catch {
    return false;
  }
}

function validateAgents(given: readonly AgentLike[], orchestrator: string): readonly AgentMeta[] {
  if (!Array.isArray(given)) {
    throw new ConfigurationError({ message: `Orchestrator '${orchestrator}' needs an agents array` });
  }
  // Only the metadata is kept: a runtime agent's rule, schemas and run stay with the app that hosts it.
  const agents = given.map(
    (agent): AgentMeta => (typeof agent === 'object' && agent !== null ? agentMetaOf(agent) : agent),
  );
  const seen = new Set<string>();
  for (const agent of agents) {
    const parsed = AgentMetaSchema.safeParse(agent);
    if (!parsed.success) {
      const detail = parsed.error.issues.map(
        (issue) => `${issue.path.join('.') || 'agent'}: ${issue.message}`,
      );
      throw new ConfigurationError({
        message: `Orchestrator '${orchestrator}' has an invalid agent '${String(agent?.name)}': ${detail.join('; ')}`,
      });
    }
    if (agent.name === ROUTE_TO_USER) {
      throw new ConfigurationError({
        message: `Agent name '${ROUTE_TO_USER}' is reserved for the built-in proxy agent that answers the user`,
      });
    }
    if (seen.has(agent.name)) {
      throw new ConfigurationError({
        message: `Orchestrator '${orchestrator}' has two agents named '${agent.name}'; agent names must be unique`,
      });
    }
    seen.add(agent.name);
  }
  return Object.freeze(agents);
}

function invalid(message: string): ErrorMessage {
  return { error: new InvalidDecisionError({ message }) };
}

function isAllowed(name: string, agents: readonly AgentMeta[]): boolean {
  if (name === ROUTE_TO_USER) return true;
  for (const agent of agents) if (agent.name === name) return true;
  return false;
}

/** The common case, checked without allocating; zod runs only when this says no, to explain why. */
function looksLikeToolCall(value: unknown): value is ToolCall {
  if (typeof value !== 'object' || value === null) return false;
  const { id, toolName, message, thought, reason, requiresApproval, timeoutMs, fanInGraceMs } =
    value as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    typeof toolName === 'string' &&
    toolName.length > 0 &&
    typeof message === 'string' &&
    (thought === undefined || typeof thought === 'string') &&
    (reason === undefined || typeof reason === 'string') &&
    (requiresApproval === undefined || typeof requiresApproval === 'boolean') &&
    (timeoutMs === undefined || (Number.isInteger(timeoutMs) && (timeoutMs as number) > 0)) &&
    (fanInGraceMs === undefined || (Number.isInteger(fanInGraceMs) && (fanInGraceMs as number) >= 0))
  );
}

function checkCall(value: unknown, agents: readonly AgentMeta[]): ErrorMessage | undefined {
  const parsed = looksLikeToolCall(value) ? undefined : ToolCallSchema.safeParse(value);
  if (parsed && !parsed.success) {
    const detail = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'value'}: ${issue.message}`);
    return invalid(`not a ToolCall (${detail.join('; ')})`);
  }
  const call = value as ToolCall;
  if (!isAllowed(call.toolName, agents)) {
    return { error: new UnknownAgentError({ agent: call.toolName, knownAgents: agents.map((a) => a.name) }) };
  }
  return undefined;
}

/**
 * Checks an orchestrator's raw result against the candidate agents.
 * Returns the decision unchanged when it is valid, an `ErrorMessage` otherwise.
 * An `ErrorMessage` whose `error` is a string comes back with that string as
 * the message of an `Error`.
 */
export function validateDecision(decision: unknown, agents: readonly AgentMeta[]): Decision {
  try {
    return checkDecision(decision, agents);
  } catch (error) {
    // A hostile result (a throwing getter, a Proxy) must not make decide() reject.
    return { error: new InvalidDecisionError({ message: 'the result could not be read', cause: error }) };
  }
}

/**
 * `{ error: 'no agent fits' }` is what an orchestrator written in JavaScript,
 * or one that forwards a model's JSON, naturally returns: its text becomes
 * the message of an `Error`, so the rest of the runtime only ever sees an
 * `Error` (`ErrorMessage.error` stays typed as one).
 */
function withErrorObject(decision: unknown): unknown {
  if (typeof decision !== 'object' || decision === null || Array.isArray(decision)) return decision;
  const { error } = decision as { error?: unknown };
  if (typeof error !== 'string') return decision;
  return { ...decision, error: new Error(error || 'the orchestrator returned an error without a message') };
}

function checkDecision(raw: unknown, agents: readonly AgentMeta[]): Decision {
  const decision = withErrorObject(raw);
  if (isErrorMessage(decision)) {
    // userMessage becomes the reply the user reads and a stored message: it must be text.
    const { userMessage } = decision;
    if (userMessage !== undefined && typeof userMessage !== 'string') {
      return invalid(`an ErrorMessage whose userMessage is a ${typeof userMessage}, not a string`);
    }
    return decision;
  }
  if (Array.isArray(decision)) {
    if (decision.length === 0) return invalid('an empty array of tool calls');
    const ids = new Set<string>();
    for (const call of decision) {
      const problem = checkCall(call, agents);
      if (problem) return problem;
      const { id, toolName } = call as ToolCall;
      if (toolName === ROUTE_TO_USER && decision.length > 1) {
        return invalid(`'${ROUTE_TO_USER}' cannot be combined with other calls in one fan-out`);
      }
      if (ids.has(id)) return invalid(`two tool calls share the id '${id}'`);
      ids.add(id);
    }
    return decision as ToolCall[];
  }
  return checkCall(decision, agents) ?? (decision as ToolCall);
}
