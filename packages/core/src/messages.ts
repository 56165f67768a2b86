import { z } from 'zod';
import { createId } from './ids.js';

/** The name of the built-in proxy agent that delivers a message to the user. */
export const ROUTE_TO_USER = 'route_to_user' as const;

const metadata = z.record(z.string(), z.unknown());

/** Schema of a message the user sent. */
export const UserMessageSchema = z.object({
  id: z.string().min(1),
  role: z.literal('user'),
  content: z.string(),
  createdAt: z.string(),
  metadata: metadata.optional(),
});

/** Schema of an agent's reply to a `ToolCall`. */
export const ToolMessageSchema = z.object({
  id: z.string().min(1),
  role: z.literal('tool'),
  /** The agent that produced the reply. */
  name: z.string().min(1),
  toolCallId: z.string().min(1),
  content: z.string(),
  status: z.enum(['ok', 'error']),
  createdAt: z.string(),
  metadata: metadata.optional(),
});

/** Schema of what `route_to_user` delivered to the user. */
export const AssistantMessageSchema = z.object({
  id: z.string().min(1),
  role: z.literal('assistant'),
  content: z.string(),
  toolCallId: z.string().min(1),
  createdAt: z.string(),
  metadata: metadata.optional(),
});

/** Schema of any message in a conversation, discriminated on `role`. */
export const MessageItemSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  ToolMessageSchema,
  AssistantMessageSchema,
]);

/** A message the user sent. */
export type UserMessage = z.infer<typeof UserMessageSchema>;
/** An agent's reply to a `ToolCall`; `status: 'error'` when the agent failed or timed out. */
export type ToolMessage = z.infer<typeof ToolMessageSchema>;
/** What `route_to_user` delivered to the user. */
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
/** Any message in a conversation. */
export type MessageItem = z.infer<typeof MessageItemSchema>;

/** Schema of a routing decision to call one agent (or `route_to_user`). */
export const ToolCallSchema = z.object({
  id: z.string().min(1),
  /** The agent to call, or `route_to_user` to answer the user. */
  toolName: z.string().min(1),
  /** The task text for an agent, or exactly what the user sees for `route_to_user`. */
  message: z.string(),
  /** Structured input for the agent, if it takes any. */
  input: z.unknown().optional(),
  /** The orchestrator's reasoning, for traces and debug streams; never shown as the answer. */
  thought: z.string().optional(),
  /** A short justification for the choice, for traces and debug streams. */
  reason: z.string().optional(),
  /**
   * Run this call only once a person approves it: the turn pauses in state
   * `awaiting_approval` until the approval is resolved. Agents and the app's
   * approval policy can require approval too; this asks for it on one call.
   * On `route_to_user` the answer waits for a person's approval before the
   * user sees it (a rejection ends the turn with the app's
   * `answerRejectedMessage` instead).
   */
  requiresApproval: z.boolean().optional(),
  /**
   * This call's deadline in milliseconds, from its start: the agent's own
   * timeout (or the app's `agentTimeoutMs`) when that is shorter. A call past
   * its deadline is aborted and replies with an `agent_timeout` error.
   */
  timeoutMs: z.number().int().positive().optional(),
  /**
   * In a fan-out: once a sibling has replied successfully, this call has at
   * most this many more milliseconds before it is aborted and replies with
   * an `agent_timeout` error, so that one slow branch does not hold up the
   * results of the others. Ignored on a call that runs alone.
   */
  fanInGraceMs: z.number().int().nonnegative().optional(),
});

/** A routing decision: call one agent, or answer the user through `route_to_user`. */
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** Schema of a decision to end the turn with an error. */
export const ErrorMessageSchema = z.object({
  /** What went wrong; recorded on the trace, never shown to the user as such. */
  error: z.instanceof(Error),
  /** What the user sees; a safe default when absent. */
  userMessage: z.string().optional(),
});

/** A decision to end the turn with an error. `userMessage` is what the user sees (a safe default otherwise). */
export type ErrorMessage = z.infer<typeof ErrorMessageSchema>;

/** What an orchestrator may decide: one call, several calls run concurrently, or an error. */
export type Decision = ToolCall | ToolCall[] | ErrorMessage;

/** Schema of what an orchestrator knows about an agent. */
export const AgentMetaSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/, 'agent names use letters, digits, _ and - only'),
  description: z.string(),
  capabilities: z.array(z.string()).optional(),
  keywords: z.array(z.string()).optional(),
  requiresApproval: z.boolean().optional(),
  metadata: metadata.optional(),
  /** The JSON Schema of what the agent accepts, when it declares one. */
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  /** The JSON Schema of what the agent answers, when it declares one. */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
});

/** What an orchestrator knows about an agent. */
export type AgentMeta = z.infer<typeof AgentMetaSchema>;

/** Options for {@link toolCall}. */
export interface ToolCallOptions {
  input?: unknown;
  thought?: string;
  reason?: string;
  /** Defaults to a fresh unique id. */
  id?: string;
  /** Pause the turn for a person's approval before this call runs (see `ToolCall.requiresApproval`). */
  requiresApproval?: boolean;
  /** This call's deadline (see `ToolCall.timeoutMs`). */
  timeoutMs?: number;
  /** In a fan-out, how long this call may run on once a sibling replied (see `ToolCall.fanInGraceMs`). */
  fanInGraceMs?: number;
}

/**
 * Builds a `ToolCall` to an agent with a fresh id.
 * @example
 * ```ts
 * return toolCall('calculator', '2 + 2', { reason: 'arithmetic' });
 * ```
 */
export function toolCall(toolName: string, message: string, { id, ...rest }: ToolCallOptions = {}): ToolCall {
  return { id: id ?? createId('call'), toolName, message, ...rest };
}

/**
 * Builds a `ToolCall` to `route_to_user`: `message` is exactly what the user sees.
 * @example
 * ```ts
 * return routeToUser(lastReply.content, { reason: 'the agent answered' });
 * ```
 */
export function routeToUser(
  message: string,
  options: Omit<ToolCallOptions, 'input' | 'timeoutMs' | 'fanInGraceMs'> = {},
): ToolCall {
  return toolCall(ROUTE_TO_USER, message, options);
}

/** True when a decision is an `ErrorMessage`. */
export function isErrorMessage(value: unknown): value is ErrorMessage {
  return typeof value === 'object' && value !== null && (value as { error?: unknown }).error instanceof Error;
}

/** True when a call answers the user rather than calling an agent. */
export function isRouteToUser(call: Pick<ToolCall, 'toolName'>): boolean {
  return call.toolName === ROUTE_TO_USER;
}
