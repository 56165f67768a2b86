import { z } from 'zod';
import {
  ResponseCreateRequestSchema,
  ResponseObjectSchema,
  ResponseStreamEventSchema,
} from './openai-responses-schemas.js';
import {
  ChatCompletionChunkSchema,
  ChatCompletionRequestSchema,
  ChatCompletionSchema,
  ModelListSchema,
  OpenAiErrorResponseSchema,
} from './openai-schemas.js';
import { IdempotencyKeySchema, SessionIdSchema } from './schemas.js';

const toJson = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: `Error ${status} (OpenAI's error shape)`,
        content: { 'application/json': { schema: toJson(OpenAiErrorResponseSchema) } },
      },
    ]),
  );

/** The OpenAPI paths of the OpenAI-compatible routes, for the app's document. */
export function openAiPaths() {
  return {
    '/v1/chat/completions': {
      post: {
        summary: 'OpenAI-compatible chat completion: the last user message runs one turn',
        description:
          'The session comes from the `x-session-id` header, else `metadata.session_id`, else a new one; it is returned in the `x-session-id` response header. The turn rides along in the `switchboard` extension field. With `"stream": true`, Server-Sent Events of `chat.completion.chunk` objects end with `data: [DONE]`.',
        parameters: [
          {
            name: 'x-session-id',
            in: 'header',
            required: false,
            description: 'The session to continue (wins over `metadata.session_id`).',
            schema: z.toJSONSchema(SessionIdSchema),
          },
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'As on `POST /v1/chat`.',
            schema: z.toJSONSchema(IdempotencyKeySchema),
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: z.toJSONSchema(ChatCompletionRequestSchema, { io: 'input', unrepresentable: 'any' }),
            },
          },
        },
        responses: {
          '200': {
            description: 'The completion, or its chunks as Server-Sent Events',
            headers: {
              'x-session-id': { description: 'The session of the turn', schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: toJson(ChatCompletionSchema) },
              'text/event-stream': { schema: toJson(ChatCompletionChunkSchema) },
            },
          },
          ...errors(400, 404, 409, 413, 415, 422, 500, 503),
        },
      },
    },
    '/v1/responses': {
      post: {
        summary: 'OpenAI Responses API: the last user message of `input` runs one turn',
        description:
          'The session is the one of `previous_response_id` (404 when the caller cannot see it), else the `x-session-id` header, else the session of the `Idempotency-Key`, else the one of an `item_reference` to an earlier answer, else the one whose conversation a message-list `input` resends, else a new one; it is returned in the `x-session-id` response header. `store: false` keeps nothing once answered. With `"stream": true`, Server-Sent Events named by their `type`: `response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`…, `response.output_text.done`, `response.content_part.done`, `response.output_item.done`, `response.completed` (`response.incomplete` for a blocked turn, `error` for a failure once started).',
        parameters: [
          {
            name: 'x-session-id',
            in: 'header',
            required: false,
            description: 'The session to continue when there is no `previous_response_id`.',
            schema: z.toJSONSchema(SessionIdSchema),
          },
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'As on `POST /v1/chat`: a retry answers the first response again.',
            schema: z.toJSONSchema(IdempotencyKeySchema),
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: z.toJSONSchema(ResponseCreateRequestSchema, { io: 'input', unrepresentable: 'any' }),
            },
          },
        },
        responses: {
          '200': {
            description: 'The response, or its events as Server-Sent Events',
            headers: {
              'x-session-id': { description: 'The session of the turn', schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: toJson(ResponseObjectSchema) },
              'text/event-stream': { schema: toJson(ResponseStreamEventSchema) },
            },
          },
          ...errors(400, 404, 409, 413, 415, 422, 500, 503),
        },
      },
    },
    '/v1/responses/{id}': {
      get: {
        summary: 'OpenAI Responses API: a stored response (its turn, as the caller’s tenant and user see it)',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'The response',
            content: { 'application/json': { schema: toJson(ResponseObjectSchema) } },
          },
          ...errors(404),
        },
      },
    },
    '/v1/models': {
      get: {
        summary: 'OpenAI-compatible model list: the app’s orchestrator',
        responses: {
          '200': {
            description: 'The models',
            content: { 'application/json': { schema: toJson(ModelListSchema) } },
          },
        },
      },
    },
  };
}
