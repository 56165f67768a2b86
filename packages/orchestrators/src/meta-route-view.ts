import { type Conversation, currentUserMessage, type MessageItem } from '@switchboard/core';

/** The task type of a turn when none is configured, and of every fallback. */
export const GENERAL_TASK = 'general';

/** A kind of request a {@link MetaRouter} tells apart, and the patterns that may handle it. */
export interface TaskType {
  name: string;
  description: string;
  /** When this type fits, as the model reads it. */
  whenToUse?: string;
  /** Text the chosen pattern gets with the request (an instruction, a point of view). */
  framing?: string;
  /** The names of the patterns that may handle it; the first is the type's default. */
  patterns: readonly string[];
}

/** The meta-router's choice for one turn. */
export interface ChosenRoute {
  taskType: string;
  pattern: string;
  rationale?: string;
  confidence?: number;
  /** `default` when there was nothing to choose. */
  chooser: 'function' | 'model' | 'default';
  fallback?: boolean;
  problems?: string[];
}

/**
 * The messages a pattern sees: the framing as a `user` message right after
 * the turn's user message (so `turnStart` and `currentUserMessage` do not
 * change, and a history window never cuts it off), or nothing to change
 * when the task type has no framing.
 */
export function withFraming(
  conversation: Conversation,
  taskType: string,
  framing: string | undefined,
): Pick<Conversation, 'messages'> | undefined {
  if (!framing) return undefined;
  const { messages, turnStart } = conversation;
  const framingMessage: MessageItem = {
    id: `framing_${conversation.turnId}`,
    role: 'user',
    content: `[Task type "${taskType}"] ${framing}`,
    createdAt: currentUserMessage(conversation).createdAt,
    metadata: { framing: true, taskType },
  };
  return {
    messages: [...messages.slice(0, turnStart + 1), framingMessage, ...messages.slice(turnStart + 1)],
  };
}

/**
 * The framing a {@link MetaRouter} passed with this turn, for a pattern of
 * your own that wants it apart from the messages.
 * @example
 * ```ts
 * const framing = taskFramingOf(conversation); // '[Task type "research"] Cite your sources.'
 * ```
 */
export function taskFramingOf(conversation: Conversation): string | undefined {
  const message = conversation.messages[conversation.turnStart + 1];
  return message?.role === 'user' && message.metadata?.framing === true ? message.content : undefined;
}
