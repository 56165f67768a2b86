import {
  type AgentMeta,
  AgentMetaSchema,
  ConfigurationError,
  type Conversation,
  type RequestContext,
  type ToolCall,
} from '@switchboard/core';
import type { z } from 'zod';
import type { ApprovalRule } from '../engine/approvals.js';
import type { AgentResume } from './agent-pause.js';
import { jsonSchemaOf, withSchemas } from './agent-schemas.js';

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

/** An agent the runtime can host: its metadata plus `run`. */
export interface Agent extends Omit<AgentMeta, 'requiresApproval'> {
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
  const { input, output } = definition;
  for (const [key, schema] of [
    ['input', input],
    ['output', output],
  ] as const) {
    if (schema !== undefined && typeof (schema as { safeParse?: unknown }).safeParse !== 'function')
      throw new ConfigurationError({ message: `Agent '${definition.name}': ${key} must be a zod schema` });
  }
  if (!input && !output) return { ...definition };
  return { ...definition, run: withSchemas(definition.name, definition.run, input, output) };
}

/** The metadata of an agent, without its implementation: what an orchestrator is given. */
export function agentMeta({
  name,
  description,
  capabilities,
  keywords,
  requiresApproval,
  metadata,
  input,
  output,
}: Agent): AgentMeta {
  const meta: AgentMeta = { name, description };
  if (capabilities) meta.capabilities = capabilities;
  if (keywords) meta.keywords = keywords;
  // A rule may or may not ask for approval on a given call: orchestrators are told it may.
  if (requiresApproval !== undefined) meta.requiresApproval = requiresApproval !== false;
  if (metadata) meta.metadata = metadata;
  const inputSchema = jsonSchemaOf(input);
  if (inputSchema) meta.inputSchema = inputSchema;
  const outputSchema = jsonSchemaOf(output);
  if (outputSchema) meta.outputSchema = outputSchema;
  return meta;
}
