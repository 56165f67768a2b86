import {
  type AgentMeta,
  AgentMetaSchema,
  ConfigurationError,
  type Conversation,
  type RequestContext,
  type ToolCall,
} from '@switchboard/core';
import type { ApprovalRule } from '../engine/approvals.js';
import type { AgentResume } from './agent-pause.js';

/** What an agent's `run` receives besides the task text. */
export interface AgentContext {
  /**
   * Aborted when the agent times out or the server shuts down. A client that
   * disconnects does not abort the turn: it runs to the end so that the
   * stored conversation stays complete.
   */
  signal: AbortSignal;
  /** The call being answered; `toolCall.input` holds structured input, if any. */
  toolCall: ToolCall;
  /** The conversation the orchestrator decided on (read-only). */
  conversation: Conversation;
  /** The request's context (the same as `RequestContext.current()`). */
  request: RequestContext;
  /**
   * Set when this call paused for approval (the agent threw an `AgentPause`)
   * and runs again now that every request was decided: the state the agent
   * saved and the decisions.
   */
  resume?: AgentResume;
}

/** A reply with metadata kept on the stored `tool` message (e.g. token usage). */
export interface AgentReplyWithMetadata {
  content: string;
  metadata?: Record<string, unknown>;
}

/**
 * What `run` may return: text, text with metadata, or a stream of text
 * chunks. A stream's chunks concatenate to the reply; an async generator may
 * `return { metadata }` to keep metadata (e.g. token usage) on the stored message.
 */
export type AgentReply = string | AgentReplyWithMetadata | AsyncIterable<string>;

/** An agent the runtime can host: its metadata plus `run`. */
export interface Agent extends Omit<AgentMeta, 'requiresApproval'> {
  /** Overrides the app's per-agent timeout for this agent. */
  timeoutMs?: number;
  /**
   * Calls to this agent wait for a person's approval: always (`true`), or
   * when the rule says so. The rule sees the call and the request's context,
   * so "refunds over 100 need approval" is a few lines. Orchestrators see
   * `requiresApproval: true` in the agent's metadata whenever approval may
   * be needed.
   */
  requiresApproval?: boolean | ApprovalRule;
  /**
   * Answers one call. Throwing, or exceeding the timeout, produces a `tool`
   * message with `status: 'error'` that the orchestrator sees.
   */
  run(message: string, context: AgentContext): AgentReply | Promise<AgentReply>;
}

/** The definition accepted by {@link defineAgent}. */
export type AgentDefinition = Agent;

/**
 * Defines an agent, checking its metadata at once.
 *
 * @example
 * ```ts
 * const echo = defineAgent({
 *   name: 'echo',
 *   description: 'Repeats the message',
 *   keywords: ['echo', 'repeat'],
 *   run: (message) => message,
 * });
 * ```
 */
export function defineAgent(definition: AgentDefinition): Agent {
  const parsed = AgentMetaSchema.safeParse(
    typeof definition === 'object' && definition !== null ? agentMeta(definition) : definition,
  );
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigurationError({ message: `Invalid agent '${String(definition?.name)}': ${detail}` });
  }
  if (typeof definition.run !== 'function') {
    throw new ConfigurationError({
      message: `Agent '${definition.name}' needs a run(message, context) function`,
    });
  }
  const { requiresApproval } = definition;
  if (
    requiresApproval !== undefined &&
    typeof requiresApproval !== 'boolean' &&
    typeof requiresApproval !== 'function'
  ) {
    throw new ConfigurationError({
      message: `Agent '${definition.name}': requiresApproval must be true, false or a function (call, context) => boolean | { required, risk?, reason? }`,
    });
  }
  if (definition.timeoutMs !== undefined && !(definition.timeoutMs > 0)) {
    throw new ConfigurationError({ message: `Agent '${definition.name}' has an invalid timeoutMs` });
  }
  return { ...definition };
}

/** The metadata of an agent, without its implementation: what an orchestrator is given. */
export function agentMeta({
  name,
  description,
  capabilities,
  keywords,
  requiresApproval,
  metadata,
}: Agent): AgentMeta {
  const meta: AgentMeta = { name, description };
  if (capabilities) meta.capabilities = capabilities;
  if (keywords) meta.keywords = keywords;
  // A rule may or may not ask for approval on a given call: orchestrators are told it may.
  if (requiresApproval !== undefined) meta.requiresApproval = requiresApproval !== false;
  if (metadata) meta.metadata = metadata;
  return meta;
}
