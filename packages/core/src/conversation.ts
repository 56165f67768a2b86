import type { AgentStatsTable } from './agent-stats.js';
import type { AgentMeta, MessageItem, ToolMessage, UserMessage } from './messages.js';
import type { TurnLimits } from './profiles.js';
import type { StepAnnotations, StepRecorder } from './step-notes.js';

/**
 * A step the current turn recorded, as an orchestrator reads it back (see
 * {@link Conversation.steps}): what it annotated on an earlier decision
 * comes back in `annotations`.
 */
export interface ConversationStep {
  readonly hop: number;
  readonly kind: 'call' | 'fan-out' | 'answer' | 'error' | 'note';
  /** The label of a `note`. */
  readonly label?: string;
  readonly annotations?: StepAnnotations;
}

/**
 * What an orchestrator sees when it decides the next step of a turn.
 *
 * `messages` holds a window of earlier history followed by every message of
 * the current turn so far, oldest first. It is a read-only view owned by the
 * runtime: do not keep it beyond the call.
 */
export interface Conversation {
  readonly sessionId: string;
  readonly turnId: string;
  /** Recent history followed by the whole current turn, oldest first. */
  readonly messages: readonly MessageItem[];
  /** Index in `messages` of the current turn's user message. */
  readonly turnStart: number;
  /** 0 for the first decision of the turn, then 1, 2, … */
  readonly hop: number;
  /**
   * The agents this decision may choose from (a wrapper such as a step rule
   * may narrow them). `route_to_user` is always allowed in addition.
   */
  readonly agents: readonly AgentMeta[];
  /**
   * The agent replies to the previous decision, in call order (several after
   * a fan-out); empty on hop 0. The runtime always sets it; when it is absent
   * (a hand-built conversation), {@link latestToolResults} falls back to the
   * trailing `tool` messages. A failed reply here carries the error's own
   * text in `metadata.errorDetail` (never stored: the stored reply's
   * `content` is a safe description, unless `exposeErrorDetails` is set).
   * A reply of a call this process ran carries its duration in
   * `metadata.durationMs` (retries included; never stored either).
   */
  readonly lastResults?: readonly ToolMessage[];
  /**
   * Records annotations and non-call steps for this decision (see
   * {@link annotateStep} and {@link recordStep}). The runtime always sets it.
   */
  readonly recorder?: StepRecorder;
  /**
   * The steps the current turn recorded before this decision, oldest first,
   * as stored with the turn (so the same on any replica, after a recovery or
   * an approval). An orchestrator that keeps its position in the turn (a
   * graph) writes it with `annotateStep` and reads it back here. Read-only,
   * owned by the runtime; absent on a hand-built conversation.
   */
  readonly steps?: readonly ConversationStep[];
  /**
   * The limits the turn runs under, when the app uses strategy profiles
   * (see `TurnLimits`); undefined otherwise.
   */
  readonly limits?: TurnLimits;
  /**
   * The agents' recent success rate, error codes and latency (per tenant,
   * over a sliding window), when a `withBreaker` wraps this orchestrator:
   * for breaking ties (see `rankByStats`). Undefined otherwise.
   */
  readonly agentStats?: AgentStatsTable;
}

/** The user message that started the current turn. */
export function currentUserMessage(conversation: Conversation): UserMessage {
  const message = conversation.messages[conversation.turnStart];
  if (message?.role !== 'user') throw new Error('conversation.turnStart does not point at a user message');
  return message;
}

/** The last message of the conversation (the user message on hop 0, else usually an agent reply). */
export function lastMessage(conversation: Conversation): MessageItem | undefined {
  return conversation.messages[conversation.messages.length - 1];
}

/**
 * The agent replies to the previous decision, in call order (several after a
 * fan-out, one after each step of a chain A → B); empty on hop 0.
 */
export function latestToolResults(conversation: Conversation): readonly ToolMessage[] {
  if (conversation.lastResults) return conversation.lastResults;
  const { messages, turnStart } = conversation;
  let start = messages.length;
  while (start > turnStart && messages[start - 1]?.role === 'tool') start--;
  return messages.slice(start) as ToolMessage[];
}

/** The messages of the current turn only, starting with its user message. */
export function turnMessages(conversation: Conversation): readonly MessageItem[] {
  return conversation.messages.slice(conversation.turnStart);
}
