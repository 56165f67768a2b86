import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

/**
 * The constants of Switchboard's tokenizer-free token estimate, so that a
 * budget can be reasoned about without a model's tokenizer:
 *
 * - text: one token per 4 characters (UTF-16 code units) below U+0800 —
 *   Latin, Greek, Cyrillic, Hebrew, Arabic, code, JSON — rounded up, plus
 *   one token per character from U+0800 up (CJK, Thai, Devanagari, emoji
 *   halves), which tokenizers split into a token or more each;
 * - each chat message adds 4 tokens (role and separators), and a request
 *   3 more (the reply's priming), as OpenAI's counting guide does;
 * - tool definitions count as their JSON text.
 *
 * For English prose and code this is close to OpenAI's tokenizers, usually a
 * little above; it is an estimate, so leave headroom under a hard context limit.
 */
export const TOKEN_ESTIMATE = {
  charactersPerToken: 4,
  tokensPerMessage: 4,
  tokensPerRequest: 3,
} as const;

const WIDE = /[\u0800-\uffff]/g;

/**
 * Estimates the tokens of a text without a tokenizer (see {@link TOKEN_ESTIMATE}).
 *
 * @example
 * ```ts
 * estimateTokens('Hello, world!'); // 4 (13 characters / 4, rounded up)
 * ```
 */
export function estimateTokens(text: string): number {
  const wide = text.match(WIDE)?.length ?? 0;
  return Math.ceil((text.length - wide) / TOKEN_ESTIMATE.charactersPerToken) + wide;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  return JSON.stringify(content);
}

/**
 * Estimates the tokens one chat message adds to a request: its text (or
 * content parts, as JSON), its name and tool calls, plus the per-message overhead.
 *
 * @example
 * ```ts
 * estimateMessageTokens({ role: 'user', content: 'Hello, world!' }); // 8
 * ```
 */
export function estimateMessageTokens(message: ChatCompletionMessageParam): number {
  let tokens = TOKEN_ESTIMATE.tokensPerMessage + estimateTokens(contentText(message.content));
  if ('name' in message && message.name) tokens += estimateTokens(message.name);
  if ('tool_calls' in message && message.tool_calls?.length)
    tokens += estimateTokens(JSON.stringify(message.tool_calls));
  return tokens;
}

/**
 * Estimates the input tokens of a chat-completions request: its messages,
 * its tool definitions and the per-request overhead. This is what an
 * `llmAgent`'s `memory.tokenBudget` bounds.
 *
 * @example
 * ```ts
 * const size = estimateRequestTokens({ messages, tools });
 * ```
 */
export function estimateRequestTokens({
  messages,
  tools,
}: {
  messages: readonly ChatCompletionMessageParam[];
  tools?: readonly ChatCompletionTool[];
}): number {
  let tokens = TOKEN_ESTIMATE.tokensPerRequest;
  for (const message of messages) tokens += estimateMessageTokens(message);
  if (tools?.length) tokens += estimateTokens(JSON.stringify(tools));
  return tokens;
}

/** Appended to a text cut to fit a token budget. */
export const TRUNCATION_NOTE = '\n[… truncated to fit the token budget]';

/**
 * Cuts a text so that its estimate is at most `maxTokens`, ending it with
 * {@link TRUNCATION_NOTE}; a text that fits is returned unchanged.
 *
 * @example
 * ```ts
 * truncateToTokens(longTask, 200); // '…the first 150-odd tokens…\n[… truncated to fit the token budget]'
 * ```
 */
export function truncateToTokens(text: string, maxTokens: number, note: string = TRUNCATION_NOTE): string {
  if (estimateTokens(text) <= maxTokens) return text;
  // Whole tokens of each kind: narrow characters cost 1/4, wide ones 1 (the note is counted too).
  let room = Math.max(0, maxTokens - estimateTokens(note)) * TOKEN_ESTIMATE.charactersPerToken;
  let end = 0;
  while (end < text.length) {
    const cost = text.charCodeAt(end) >= 0x0800 ? TOKEN_ESTIMATE.charactersPerToken : 1;
    if (cost > room) break;
    room -= cost;
    end += 1;
  }
  // Never leave half of a surrogate pair.
  if (end > 0 && /[\ud800-\udbff]/.test(text.charAt(end - 1))) end -= 1;
  return text.slice(0, end) + note;
}
