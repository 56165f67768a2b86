/**
 * The agent contract: what an agent is, what its `run` receives and may
 * return, and how it asks for approval. Types only, importing nothing of
 * the engine or the server, so that the engine, the adapters and agent
 * authors all depend on it and it depends on none of them.
 *
 * @module
 */
import type { AgentLike, Conversation, RequestContext, ToolCall } from '@switchboard/core';
import type { z } from 'zod';
import type { ApprovalRisk } from '../turns/turn-record.js';
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
  /** With an `input` schema on the agent: the call's input as the schema parsed it (defaults and transforms applied). */
  input?: unknown;
  /**
   * The same for every run of this call: its retries, and a run again after
   * a crash (an approved call interrupted by a replica's death runs again on
   * recovery, at least once). Derived from the turn and the call's id. An
   * agent with side effects passes it to the system it changes (a payment
   * API's idempotency key, a unique constraint) so that the effect happens once.
   */
  readonly idempotencyKey: string;
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

/** What an approval rule or policy answers for one call: approval needed or not, how risky, and why. */
export interface ApprovalRequirement {
  required: boolean;
  /** Default `medium`. */
  risk?: ApprovalRisk;
  /** Shown to the person who decides. */
  reason?: string;
  /** Overrides the app's `approvalTtlSeconds` for this approval (`null`: never expires). */
  ttlSeconds?: number | null;
}

/**
 * Decides whether one call needs a person's approval. It sees the call (its
 * `message` and structured `input`) and the request's context (user, tenant,
 * memory). `true` means "required, medium risk".
 *
 * @example
 * ```ts
 * const refundsOver100: ApprovalRule = (call) =>
 *   (call.input as { amount: number }).amount > 100
 *     ? { required: true, risk: 'high', reason: 'refund over 100' }
 *     : false;
 * ```
 */
export type ApprovalRule = (
  call: ToolCall,
  context: RequestContext,
) => boolean | ApprovalRequirement | Promise<boolean | ApprovalRequirement>;

/**
 * An agent the runtime can host: its metadata plus `run`. An
 * {@link AgentLike}, so every orchestrator's `agents` option takes it as it
 * is (keeping its metadata: `agentMeta(agent)`).
 */
export interface Agent extends AgentLike {
  /**
   * Overrides the app's per-agent timeout for this agent. A call is aborted
   * once it has run this long: never earlier, and late by at most a
   * hundredth of the timeout or 10 ms (calls share timers).
   */
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
  /**
   * What the agent accepts (a zod schema): each call's structured `input`,
   * else its message (as JSON when it is JSON), is checked before the agent
   * runs; a call it refuses is an error reply (`invalid_agent_input`) with
   * the schema's issues, and the agent gets the parsed value as
   * `context.input`. Shown in the agents listing as JSON Schema.
   */
  input?: z.ZodType;
  /**
   * What the agent must answer (a zod schema over its reply, as text, else
   * as JSON): a reply it refuses becomes an error reply
   * (`invalid_agent_output`). Shown in the agents listing as JSON Schema.
   */
  output?: z.ZodType;
  /**
   * Releases what the agent holds (connections, child processes), once:
   * `app.close()` calls it after the app's turns are over.
   */
  close?(): Promise<void>;
}
