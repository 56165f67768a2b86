import { z } from 'zod';
import { MetadataSchema, SwitchboardExtensionSchema } from './openai-schemas.js';

/**
 * The zod schemas of the OpenAI Responses API surface (`POST /v1/responses`,
 * `GET /v1/responses/:id`): what validates requests and what the OpenAPI
 * document describes. Shapes follow OpenAI's Responses API.
 */

const onlyText =
  'only text content parts (input_text, output_text, refusal) are supported, not images, audio or files';

const ContentPartSchema = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('input_text'), text: z.string() }).loose(),
    z.object({ type: z.literal('output_text'), text: z.string() }).loose(),
    z.object({ type: z.literal('refusal'), refusal: z.string() }).loose(),
  ],
  { error: onlyText },
);

/** A message of a list `input` (`type: 'message'` may be left out, as OpenAI allows). */
const InputMessageSchema = z
  .object({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer'], {
      error: "role must be one of 'user', 'assistant', 'system', 'developer'",
    }),
    content: z.union([z.string(), z.array(ContentPartSchema)], { error: onlyText }),
    id: z.string().max(512).optional(),
  })
  .loose();

/** A message of a Responses `input` list. */
export type ResponseInputMessage = z.infer<typeof InputMessageSchema>;

/**
 * Items other than messages: checked for shape and not run. An
 * `item_reference` to an answer of this server names its session.
 */
const OtherItemSchema = z
  .object({
    type: z.enum(['item_reference', 'function_call', 'function_call_output', 'reasoning']),
    id: z.string().max(512).nullish(),
  })
  .loose();

/** One item of a list `input`. */
export const ResponseInputItemSchema = z.union([InputMessageSchema, OtherItemSchema], {
  error: 'each input item must be a message ({ role, content }) or an item_reference',
});

/** An item of a Responses `input` list. */
export type ResponseInputItem = z.infer<typeof ResponseInputItemSchema>;

const nullableNumber = z.number().nullish();

/**
 * The body of `POST /v1/responses`. Unknown parameters are refused (400), as
 * OpenAI does. Parameters that steer a model (`temperature`, `tools`,
 * `reasoning`, `text`, …) are type-checked and ignored: the orchestrator and
 * its agents decide how the turn runs.
 */
export const ResponseCreateRequestSchema = z.strictObject({
  /** The orchestrator to talk to, as listed by `GET /v1/models`. */
  model: z.string({ error: 'model is required and must be a string' }).min(1, 'model must not be empty'),
  /** The turn's message as text, or a list of messages whose last `user` message is the turn's. */
  input: z.union([z.string(), z.array(ResponseInputItemSchema).min(1, 'input must not be empty')], {
    error: 'input is required: a string or a list of messages',
  }),
  /** Echoed in the response and given to the turn as `metadata.instructions`. */
  instructions: z.string().nullish(),
  /** Continues the session of that response. */
  previous_response_id: z.string().max(512).nullish(),
  /** `false`: nothing is kept once answered (the session the request opened is deleted). Default true. */
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_obfuscation: z.boolean().optional() }).strict().nullish(),
  /** Stored with the turn's message and echoed in the response. */
  metadata: MetadataSchema.nullish(),
  /** The turn's user id. */
  user: z.string().max(256, 'user must be at most 256 characters').optional(),
  /** Queues the turn (a background turn): answered `queued` at once, read with `GET /v1/responses/{id}`. */
  background: z.boolean().nullish(),
  conversation: z
    .null({ error: 'conversation is not supported: chain turns with previous_response_id' })
    .optional(),
  prompt: z.null({ error: 'prompt templates are not supported: send input' }).optional(),
  include: z.array(z.string()).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  max_tool_calls: z.number().int().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_retention: z.string().nullish(),
  prompt_cache_options: z.record(z.string(), z.unknown()).optional(),
  reasoning: z.object({}).loose().nullish(),
  safety_identifier: z.string().nullish(),
  service_tier: z.string().nullish(),
  temperature: nullableNumber,
  top_p: nullableNumber,
  top_logprobs: z.number().int().nullish(),
  text: z.object({}).loose().optional(),
  tool_choice: z.union([z.string(), z.object({ type: z.string() }).loose()]).optional(),
  tools: z.array(z.object({ type: z.string() }).loose()).optional(),
  truncation: z.string().nullish(),
  context_management: z.array(z.unknown()).nullish(),
  moderation: z.unknown().optional(),
});

/** A `POST /v1/responses` body. */
export type ResponseCreateRequest = z.infer<typeof ResponseCreateRequestSchema>;

const OutputMessageSchema = z.object({
  id: z.string(),
  type: z.literal('message'),
  status: z.enum(['completed', 'in_progress', 'incomplete']),
  role: z.literal('assistant'),
  content: z.array(
    z.object({
      type: z.literal('output_text'),
      text: z.string(),
      annotations: z.array(z.never()),
      logprobs: z.array(z.never()),
    }),
  ),
});

/** The answer of `POST /v1/responses` and `GET /v1/responses/:id`: a `response` object. */
export const ResponseObjectSchema = z.object({
  id: z.string(),
  object: z.literal('response'),
  /** Unix seconds. */
  created_at: z.number(),
  status: z.enum(['completed', 'incomplete', 'in_progress']),
  error: z.null(),
  incomplete_details: z.object({ reason: z.string() }).nullable(),
  instructions: z.string().nullable(),
  model: z.string(),
  output: z.array(OutputMessageSchema),
  previous_response_id: z.string().nullable(),
  store: z.boolean(),
  metadata: z.record(z.string(), z.string()),
  usage: z.object({
    input_tokens: z.number(),
    input_tokens_details: z.object({ cached_tokens: z.number() }),
    output_tokens: z.number(),
    output_tokens_details: z.object({ reasoning_tokens: z.number() }),
    total_tokens: z.number(),
  }),
  /** The turn behind the response, as on chat completions. */
  switchboard: SwitchboardExtensionSchema,
});

/** One event of a streamed response (`event:` names its `type`). */
export const ResponseStreamEventSchema = z.object({
  type: z.enum([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
    'response.incomplete',
    'error',
  ]),
  sequence_number: z.number(),
});
