import { z } from 'zod';
import { ApprovalRecordSchema, RouteStepSchema, TurnStatusSchema } from '../turns/turn-schemas.js';

/**
 * The zod schemas of the OpenAI-compatible surface (`POST /v1/chat/completions`,
 * `GET /v1/models`): what validates requests and what the OpenAPI document
 * describes. Shapes follow OpenAI's chat-completions API.
 */

const textPart = z.object({ type: z.literal('text'), text: z.string() });

/** A message's content: a string, or text parts (images, audio and files are refused). */
const textContent = z.union([z.string(), z.array(textPart)], {
  error: (issue) =>
    Array.isArray(issue.input)
      ? "only text content parts ({ type: 'text', text }) are supported, not images, audio or files"
      : "content must be a string or an array of text parts ({ type: 'text', text })",
});

const nullableNumber = z.number().nullish();

/**
 * One message of `messages`. Earlier messages are checked for shape but not
 * used: the session keeps the conversation, so only the last user message counts.
 */
const MessageSchema = z.discriminatedUnion(
  'role',
  [
    z.object({ role: z.literal('system'), content: textContent, name: z.string().optional() }),
    z.object({ role: z.literal('developer'), content: textContent, name: z.string().optional() }),
    z.object({ role: z.literal('user'), content: textContent, name: z.string().optional() }),
    z.object({
      role: z.literal('assistant'),
      content: z
        .union([z.string(), z.array(z.object({ type: z.enum(['text', 'refusal']) }).loose())])
        .nullish(),
      name: z.string().optional(),
      refusal: z.string().nullish(),
      tool_calls: z.array(z.unknown()).optional(),
      function_call: z.unknown().optional(),
      audio: z.unknown().optional(),
    }),
    z.object({ role: z.literal('tool'), content: textContent, tool_call_id: z.string() }),
    z.object({ role: z.literal('function'), content: z.string().nullable(), name: z.string() }),
  ],
  { error: "role must be one of 'system', 'developer', 'user', 'assistant', 'tool', 'function'" },
);

/** A message of a chat-completion request. */
export type CompletionMessage = z.infer<typeof MessageSchema>;

/** OpenAI's `metadata`: up to 16 string pairs (on chat completions, `session_id` names the session). */
export const MetadataSchema = z
  .record(
    z.string().max(64, 'metadata keys are at most 64 characters'),
    z
      .string({ error: 'metadata values must be strings' })
      .max(512, 'metadata values are at most 512 characters'),
  )
  .refine((metadata) => Object.keys(metadata).length <= 16, 'metadata has at most 16 keys');

/**
 * The body of `POST /v1/chat/completions`. Like OpenAI's API, unknown
 * parameters are refused (400). Parameters that steer a model's sampling or
 * tools (`temperature`, `tools`, `response_format`, …) are type-checked and
 * ignored: the orchestrator and its agents decide how the turn runs.
 */
export const ChatCompletionRequestSchema = z.strictObject({
  /** The orchestrator to talk to, as listed by `GET /v1/models`. */
  model: z.string({ error: 'model is required and must be a string' }).min(1, 'model must not be empty'),
  /** The conversation as the client has it; the last `user` message is the turn's message. */
  messages: z
    .array(MessageSchema, { error: 'messages is required and must be an array' })
    .min(1, 'messages must not be empty'),
  stream: z.boolean().nullish(),
  stream_options: z
    .object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
    .strict()
    .nullish(),
  /** `session_id` continues a session (the `x-session-id` header wins); the rest reaches the turn as its metadata. */
  metadata: MetadataSchema.nullish(),
  /** The turn's user id. */
  user: z.string().max(256, 'user must be at most 256 characters').optional(),
  /** One answer per turn: only 1 is accepted. */
  n: z.literal(1, { error: 'n must be 1: a turn has one answer' }).nullish(),
  temperature: nullableNumber,
  top_p: nullableNumber,
  frequency_penalty: nullableNumber,
  presence_penalty: nullableNumber,
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  logit_bias: z.record(z.string(), z.number()).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().nullish(),
  parallel_tool_calls: z.boolean().optional(),
  store: z.boolean().nullish(),
  service_tier: z.string().nullish(),
  reasoning_effort: z.string().nullish(),
  verbosity: z.string().nullish(),
  modalities: z.array(z.string()).nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_retention: z.string().nullish(),
  prompt_cache_options: z.record(z.string(), z.unknown()).optional(),
  safety_identifier: z.string().nullish(),
  response_format: z.object({ type: z.string() }).loose().optional(),
  tools: z.array(z.object({ type: z.string() }).loose()).optional(),
  tool_choice: z.union([z.string(), z.object({ type: z.string() }).loose()]).optional(),
  functions: z.array(z.unknown()).optional(),
  function_call: z.unknown().optional(),
  audio: z.unknown().optional(),
  prediction: z.unknown().optional(),
  moderation: z.unknown().optional(),
  web_search_options: z.unknown().optional(),
});

/** A `POST /v1/chat/completions` body. */
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

/** The finish reasons of OpenAI's chat-completions API. */
export const FinishReasonSchema = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

/** A chat-completion's `finish_reason`. */
export type FinishReason = z.infer<typeof FinishReasonSchema>;

/**
 * The Switchboard extension field (`switchboard`) on a completion and on the
 * last chunk of a stream: the turn behind the answer. Clients that ignore
 * unknown fields never notice it.
 */
export const SwitchboardExtensionSchema = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  status: TurnStatusSchema,
  /** The routing decisions of the turn. */
  steps: z.array(RouteStepSchema),
  /** With `awaiting_approval`: what to resolve with `POST /v1/sessions/:id/approvals/:approvalId`. */
  approvals: z.array(ApprovalRecordSchema).optional(),
  traceId: z.string().optional(),
  /** With `failed`, `interrupted` or `blocked`: the recorded error. */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** The `switchboard` extension field. */
export type SwitchboardExtension = z.infer<typeof SwitchboardExtensionSchema>;

const CompletionUsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

/** The answer of `POST /v1/chat/completions` without `stream`. */
export const ChatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
      logprobs: z.null(),
      finish_reason: FinishReasonSchema,
    }),
  ),
  usage: CompletionUsageSchema,
  switchboard: SwitchboardExtensionSchema,
});

/** One `data:` event of a streamed completion (the stream ends with `data: [DONE]`). */
export const ChatCompletionChunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
      logprobs: z.null(),
      finish_reason: FinishReasonSchema.nullable(),
    }),
  ),
  /** On the last chunk, with `stream_options.include_usage` (its `choices` is empty). */
  usage: CompletionUsageSchema.optional(),
  /** On the chunk with the `finish_reason`: the turn; on progress chunks: `{ delta }`, an agent's streamed text. */
  switchboard: z
    .union([
      SwitchboardExtensionSchema,
      z.object({
        delta: z.object({
          turnId: z.string(),
          agent: z.string(),
          toolCallId: z.string(),
          content: z.string(),
        }),
      }),
    ])
    .optional(),
});

/** The answer of `GET /v1/models`. */
export const ModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() }),
  ),
});

/** OpenAI's error body, on every error of the OpenAI-compatible routes. */
export const OpenAiErrorResponseSchema = z.object({
  error: z.object({
    message: z.string(),
    /** `invalid_request_error`, `authentication_error`, `permission_error`, `rate_limit_error` or `server_error`. */
    type: z.string(),
    /** The Switchboard error code (`validation_error`, `session_busy`, …), or `model_not_found`. */
    code: z.string().nullable(),
    /** The request field at fault, when one is. */
    param: z.string().nullable(),
    /** Every problem found, for a validation error. */
    issues: z.array(z.string()).optional(),
  }),
});
