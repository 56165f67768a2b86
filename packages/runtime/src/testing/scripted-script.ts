import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** Default: `call_<n>`, unique within the server. */
  id?: string;
  /** The function to call. */
  name: string;
  /** The arguments: an object (serialised as JSON) or a raw string, e.g. deliberately malformed JSON. */
  arguments: string | Record<string, unknown>;
}

/** Token counts the scripted model reports. */
export interface ScriptedUsage {
  inputTokens: number;
  outputTokens: number;
}

/** An HTTP error the scripted model answers with instead of a completion. */
export interface ScriptedError {
  /** The HTTP status, e.g. 429 or 500. */
  status: number;
  /** The error message in the OpenAI error body. Default: `scripted error <status>`. */
  message?: string;
  /** The error `type`, e.g. `rate_limit_error`. */
  type?: string;
  /** The error `code`, e.g. `rate_limit_exceeded`. */
  code?: string;
}

/**
 * One scripted model answer. For a JSON-schema request the content is served
 * as is: script the JSON text the model should produce (valid or not).
 */
export interface ScriptedReply {
  /** The assistant text. */
  content?: string | null;
  /** Tool calls the assistant makes (with or without content). */
  toolCalls?: readonly ScriptedToolCall[];
  /** Default: estimated from the text sizes (about 4 characters per token). */
  usage?: ScriptedUsage;
  /** Default: `tool_calls` when there are tool calls, `stop` otherwise. */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** A refusal instead of content, as structured-output models may return. */
  refusal?: string;
  /** How streamed content is split. Default: one chunk per word (concatenating to `content`). */
  chunks?: readonly string[];
  /** Answer with this HTTP error instead of a completion. */
  error?: ScriptedError;
  /** Waits this long before answering (a cancelled request stops waiting). */
  delayMs?: number;
}

/** A request the scripted server received, in arrival order. */
export interface RecordedRequest {
  /** 0 for the first request, then 1, 2, … */
  index: number;
  method: string;
  /** The request path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (`undefined` when it was not JSON). */
  body: ChatCompletionCreateParams;
  /** The index of the script entry that answered, or `undefined` when none did. */
  scriptIndex?: number;
}

/**
 * One entry of a script: a reply, a plain text answer, or a function computing
 * the reply from the request (for answers that depend on what was sent).
 */
export type ScriptEntry =
  | ScriptedReply
  | string
  | ((request: RecordedRequest) => ScriptedReply | string | Promise<ScriptedReply | string>);

/**
 * Turns a string entry into a reply.
 *
 * @example
 * ```ts
 * toReply('hello'); // { content: 'hello' }
 * ```
 */
export function toReply(entry: ScriptedReply | string): ScriptedReply {
  return typeof entry === 'string' ? { content: entry } : entry;
}
