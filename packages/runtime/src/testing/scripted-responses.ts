import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ScriptedReply } from './scripted-script.js';

/** A scripted tool call with its id and JSON arguments settled. */
export interface ResolvedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What a reply and its request settle to before being written out. */
export interface ResolvedReply {
  id: string;
  model: string;
  created: number;
  content: string | null;
  refusal: string | null;
  toolCalls: ResolvedToolCall[];
  finishReason: NonNullable<ScriptedReply['finishReason']>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  chunks: readonly string[];
}

/**
 * Splits text into word-sized chunks whose concatenation is the text.
 *
 * @example
 * ```ts
 * splitIntoChunks('Hello big world'); // ['Hello ', 'big ', 'world']
 * ```
 */
export function splitIntoChunks(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * Settles ids, arguments, usage and chunks of a scripted reply.
 *
 * @example
 * ```ts
 * const resolved = resolveReply({ content: 'hi' }, { id: 'chatcmpl-1', model: 'm', promptText, nextCallId });
 * ```
 */
export function resolveReply(
  reply: ScriptedReply,
  {
    id,
    model,
    promptText,
    nextCallId,
  }: { id: string; model: string; promptText: string; nextCallId: () => string },
): ResolvedReply {
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? nextCallId(),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  const content = reply.content ?? (toolCalls.length > 0 || reply.refusal !== undefined ? null : '');
  const outputText =
    (content ?? '') + (reply.refusal ?? '') + toolCalls.map((call) => call.name + call.arguments).join('');
  const input = reply.usage?.inputTokens ?? estimateTokens(promptText);
  const output = reply.usage?.outputTokens ?? estimateTokens(outputText);
  return {
    id,
    model,
    created: Math.floor(Date.now() / 1000),
    content,
    refusal: reply.refusal ?? null,
    toolCalls,
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    chunks: reply.chunks ?? splitIntoChunks(content ?? ''),
  };
}

/**
 * The non-streaming `chat.completion` body.
 *
 * @example
 * ```ts
 * sendJson(response, 200, completionBody(resolved));
 * ```
 */
export function completionBody(reply: ResolvedReply): ChatCompletion {
  const message: ChatCompletion.Choice['message'] = {
    role: 'assistant',
    content: reply.content,
    refusal: reply.refusal,
  };
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: reply.id,
    object: 'chat.completion',
    created: reply.created,
    model: reply.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    usage: reply.usage,
  };
}

/** Splits a tool call's arguments in two deltas, as real servers stream them in pieces. */
function argumentPieces(text: string): string[] {
  if (text.length < 2) return [text];
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

/**
 * The `chat.completion.chunk`s of a streamed reply, in OpenAI's order: a role
 * chunk, content deltas, tool-call deltas (id and name first, then argument
 * pieces), a finish chunk, and a usage chunk with no choices when asked for.
 *
 * @example
 * ```ts
 * for (const chunk of streamChunks(resolved, { includeUsage: true })) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
 * ```
 */
export function streamChunks(
  reply: ResolvedReply,
  { includeUsage }: { includeUsage: boolean },
): ChatCompletionChunk[] {
  const base = {
    id: reply.id,
    object: 'chat.completion.chunk' as const,
    created: reply.created,
    model: reply.model,
  };
  const usage = includeUsage ? { usage: null } : {};
  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finish: ChatCompletionChunk.Choice['finish_reason'] = null,
  ) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usage,
  });
  const chunks: ChatCompletionChunk[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const text of reply.chunks) chunks.push(chunk({ content: text }));
  if (reply.refusal !== null) chunks.push(chunk({ refusal: reply.refusal }));
  reply.toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of argumentPieces(call.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, reply.finishReason));
  if (includeUsage) chunks.push({ ...base, choices: [], usage: reply.usage });
  return chunks;
}

/**
 * The body of an OpenAI-style error response.
 *
 * @example
 * ```ts
 * errorBody('slow down', 'rate_limit_error'); // { error: { message: 'slow down', type: 'rate_limit_error', … } }
 * ```
 */
export function errorBody(message: string, type: string, code: string | null = null) {
  return { error: { message, type, param: null, code } };
}
