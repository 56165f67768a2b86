import { type TokenUsage, ValidationError } from '@switchboard/core';
import type { TranscriptEntry } from '../backend/conversation-index.js';
import type { TurnResult } from '../engine/turn-engine.js';
import type { TurnStatus } from '../turns/turn-record.js';
import type { CompletionMessage, FinishReason, SwitchboardExtension } from './openai-schemas.js';

/**
 * How every turn state maps onto a chat completion. The content is always
 * the turn's `reply`, what `POST /v1/chat` answers; the `switchboard`
 * extension field carries the turn's `status` and what to do next.
 *
 * | turn `status`       | `finish_reason`  | content                     | `switchboard`                          |
 * |---------------------|------------------|-----------------------------|----------------------------------------|
 * | `completed`         | `stop`           | the answer                  | `status`, `steps`                      |
 * | `limited`           | `length`         | the partial answer          | `status`, `steps`, `error`             |
 * | `budget_exceeded`   | `length`         | the partial answer          | `status`, `steps`, `error`             |
 * | `failed`            | `stop`           | the failure reply           | `status`, `steps`, `error`             |
 * | `interrupted`       | `stop`           | `interruptedMessage`        | `status`, `steps`, `error`             |
 * | `blocked`           | `content_filter` | the refusal                 | `status`, `steps`, `error`             |
 * | `awaiting_approval` | `stop`           | `approvalMessage`           | `status`, `steps`, `approvals`         |
 * | `running`           | `stop`           | (never answered)            | (a request waits for its turn to end or pause) |
 *
 * A paused turn is not `tool_calls`: the client has no tool to run; a person
 * resolves the approvals (`POST /v1/sessions/:id/approvals/:approvalId`) and
 * the turn's answer is then in the session. The README shows the same table
 * (a test keeps the two in step).
 */
export const FINISH_REASON_BY_STATUS: Readonly<Record<TurnStatus, FinishReason>> = {
  completed: 'stop',
  limited: 'length',
  // The nearest of OpenAI's reasons: the answer was cut short by a token (or cost) limit.
  budget_exceeded: 'length',
  failed: 'stop',
  interrupted: 'stop',
  blocked: 'content_filter',
  awaiting_approval: 'stop',
  running: 'stop',
};

/** OpenAI's `usage`: the turn's tokens (every model call, routers' and agents'), zeros when none reported any. */
export function completionUsage(usage: TokenUsage | undefined) {
  const prompt = usage?.inputTokens ?? 0;
  const completion = usage?.outputTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The `switchboard` extension field of a turn's result. */
export function switchboardExtension(result: TurnResult): SwitchboardExtension {
  const extension: SwitchboardExtension = {
    sessionId: result.sessionId,
    turnId: result.turnId,
    status: result.status,
    steps: result.steps,
  };
  if (result.approvals) extension.approvals = result.approvals;
  if (result.traceId) extension.traceId = result.traceId;
  if (result.error) extension.error = result.error;
  return extension;
}

/** What identifies one completion: its id comes from the turn, `created` from the request. */
export interface CompletionHeader {
  model: string;
  /** Unix seconds. */
  created: number;
}

/** The `chat.completion` answer for a turn's result. */
export function chatCompletion(result: TurnResult, { model, created }: CompletionHeader) {
  return {
    id: `chatcmpl-${result.turnId}`,
    object: 'chat.completion' as const,
    created,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: result.reply, refusal: null },
        logprobs: null,
        finish_reason: FINISH_REASON_BY_STATUS[result.status],
      },
    ],
    usage: completionUsage(result.usage),
    switchboard: switchboardExtension(result),
  };
}

/** A `chat.completion.chunk` with one choice (or none, for the usage chunk). */
export function completionChunk(
  id: string,
  { model, created }: CompletionHeader,
  delta: { role?: 'assistant'; content?: string } | undefined,
  finishReason: FinishReason | null = null,
) {
  return {
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model,
    choices: delta ? [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] : [],
  };
}

/**
 * The turn's message: the text of the last `user` message. Earlier messages
 * are not replayed: the session already holds the conversation.
 */
export function turnMessage(messages: readonly CompletionMessage[], maxMessageLength: number): string {
  let index = messages.length - 1;
  while (index >= 0 && messages[index]!.role !== 'user') index--;
  if (index < 0) {
    throw new ValidationError({
      message: 'Invalid chat completion request',
      issues: ["messages: there is no message with role 'user'"],
    });
  }
  const { content } = messages[index] as Extract<CompletionMessage, { role: 'user' }>;
  const text = typeof content === 'string' ? content : content.map((part) => part.text).join('\n');
  const problem =
    text.length === 0
      ? 'the last user message must not be empty'
      : text.length > maxMessageLength
        ? `the last user message must be at most ${maxMessageLength} characters`
        : undefined;
  if (problem) {
    throw new ValidationError({
      message: 'Invalid chat completion request',
      issues: [`messages.${index}.content: ${problem}`],
    });
  }
  return text;
}

/** The text of a message's content (text parts joined by line breaks; none for a refusal or no content). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : ''))
    .join('\n');
}

/**
 * The user and assistant texts before the last `user` message: the earlier
 * turns as the client has them, which find the session of a client that
 * resends the whole conversation (see `sessionOfHistory`).
 */
export function earlierTranscript(messages: readonly CompletionMessage[]): TranscriptEntry[] {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]!.role !== 'user') last--;
  const entries: TranscriptEntry[] = [];
  for (const message of messages.slice(0, Math.max(last, 0))) {
    if (message.role === 'user' || message.role === 'assistant')
      entries.push({ role: message.role, text: contentText(message.content) });
  }
  return entries;
}
