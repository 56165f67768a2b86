import { type TokenUsage, ValidationError } from '@switchboard/core';
import type { TranscriptEntry } from '../backend/conversation-index.js';
import type { TurnStatus } from '../turns/turn-record.js';
import type { ResponseInputItem, ResponseInputMessage } from './openai-responses-schemas.js';
import type { SwitchboardExtension } from './openai-schemas.js';

/**
 * The ids of a response and of its message name the turn behind them:
 * `resp_` / `msg_` and the base64url of its session and turn ids. So
 * `previous_response_id` (or an `item_reference` to an answer) continues
 * its session with no lookup, and `GET /v1/responses/:id` reads the turn
 * from the session as the caller's tenant and user see it: an id from
 * another tenant or user names nothing there.
 */
export function responseIds(sessionId: string, turnId: string): { responseId: string; itemId: string } {
  const token = Buffer.from(`${sessionId}\n${turnId}`).toString('base64url');
  return { responseId: `resp_${token}`, itemId: `msg_${token}` };
}

/** The session and turn a response or message id names, or undefined for an id this server did not give. */
export function turnOfId(
  id: string,
  prefix: 'resp_' | 'msg_',
): { sessionId: string; turnId: string } | undefined {
  if (!id.startsWith(prefix)) return undefined;
  const [sessionId, turnId, extra] = Buffer.from(id.slice(prefix.length), 'base64url')
    .toString('utf8')
    .split('\n');
  if (!sessionId || !turnId || extra !== undefined) return undefined;
  return { sessionId, turnId };
}

/**
 * How every turn state maps onto a response's `status`: the output is
 * always the turn's reply (as on chat completions), the `switchboard`
 * field says what happened. A blocked turn is `incomplete` (reason
 * `content_filter`), and so is one that hit a limit or a spending budget
 * with a partial answer (reason `max_output_tokens`, as chat completions say
 * `length`); a running
 * one (read with `GET`) is `in_progress`.
 */
export const RESPONSE_STATUS_BY_TURN: Readonly<
  Record<TurnStatus, 'completed' | 'incomplete' | 'in_progress'>
> = {
  completed: 'completed',
  failed: 'completed',
  interrupted: 'completed',
  awaiting_approval: 'completed',
  blocked: 'incomplete',
  limited: 'incomplete',
  budget_exceeded: 'incomplete',
  running: 'in_progress',
};

const isMessage = (item: ResponseInputItem): item is ResponseInputMessage => 'role' in item;

function textOf(content: ResponseInputMessage['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => ('text' in part ? part.text : '')).join('\n');
}

/** What a request's `input` asks: the turn's message, the conversation before it, and a referenced answer. */
export interface ParsedInput {
  message: string;
  /** User and assistant texts before the turn's message. */
  earlier: TranscriptEntry[];
  /** The session of the last `item_reference` to one of this server's answers. */
  referencedSession?: string;
}

/** Reads `input`: a string is the message; in a list, the last `user` message is. */
export function parseInput(
  input: string | readonly ResponseInputItem[],
  maxMessageLength: number,
): ParsedInput {
  const invalid = (issue: string) =>
    new ValidationError({ message: 'Invalid response request', issues: [issue] });
  if (typeof input === 'string') {
    if (input.length === 0) throw invalid('input: must not be empty');
    if (input.length > maxMessageLength)
      throw invalid(`input: must be at most ${maxMessageLength} characters`);
    return { message: input, earlier: [] };
  }
  let last = input.length - 1;
  while (last >= 0 && !(isMessage(input[last]!) && (input[last] as ResponseInputMessage).role === 'user'))
    last--;
  if (last < 0) throw invalid("input: there is no message with role 'user'");
  const message = textOf((input[last] as ResponseInputMessage).content);
  if (message.length === 0) throw invalid(`input.${last}.content: the last user message must not be empty`);
  if (message.length > maxMessageLength)
    throw invalid(
      `input.${last}.content: the last user message must be at most ${maxMessageLength} characters`,
    );
  const parsed: ParsedInput = { message, earlier: [] };
  for (const item of input.slice(0, last)) {
    if (isMessage(item)) {
      if (item.role === 'user' || item.role === 'assistant')
        parsed.earlier.push({ role: item.role, text: textOf(item.content) });
    } else if (item.type === 'item_reference' && item.id) {
      const turn = turnOfId(item.id, 'msg_');
      if (turn) parsed.referencedSession = turn.sessionId;
    }
  }
  return parsed;
}

/** What a `response` object is built from. */
export interface ResponseParts {
  responseId: string;
  itemId: string;
  model: string;
  /** Unix seconds. */
  createdAt: number;
  status: TurnStatus;
  text: string;
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  metadata: Record<string, string>;
  usage: TokenUsage | undefined;
  switchboard: SwitchboardExtension;
  /** A background response (queued, then run by whichever replica took it). */
  background?: boolean;
}

/** The output message item of a response. */
export function outputMessage(
  itemId: string,
  text: string,
  status: 'completed' | 'in_progress' | 'incomplete',
) {
  return {
    id: itemId,
    type: 'message' as const,
    status,
    role: 'assistant' as const,
    content:
      status === 'in_progress' ? [] : [{ type: 'output_text' as const, text, annotations: [], logprobs: [] }],
  };
}

/** OpenAI's Responses `usage`: the turn's tokens, zeros when no model reported any. */
export function responseUsage(usage: TokenUsage | undefined) {
  const input = usage?.inputTokens ?? 0;
  const output = usage?.outputTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/**
 * The `response` object; `inProgress` gives the shape of `response.created`
 * (no output yet), `queued` that of a background response not yet run.
 */
export function responseObject(
  parts: ResponseParts,
  { inProgress = false, queued = false }: { inProgress?: boolean; queued?: boolean } = {},
) {
  const status = queued ? 'queued' : inProgress ? 'in_progress' : RESPONSE_STATUS_BY_TURN[parts.status];
  inProgress ||= queued;
  return {
    id: parts.responseId,
    object: 'response' as const,
    created_at: parts.createdAt,
    status,
    background: parts.background ?? false,
    error: null,
    incomplete_details:
      status === 'incomplete'
        ? { reason: parts.status === 'blocked' ? 'content_filter' : 'max_output_tokens' }
        : null,
    instructions: parts.instructions,
    max_output_tokens: null,
    model: parts.model,
    output: inProgress ? [] : [outputMessage(parts.itemId, parts.text, status as 'completed' | 'incomplete')],
    parallel_tool_calls: false,
    previous_response_id: parts.previousResponseId,
    reasoning: { effort: null, summary: null },
    store: parts.store,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    metadata: parts.metadata,
    usage: inProgress ? null : responseUsage(parts.usage),
    switchboard: parts.switchboard,
  };
}
