import { z } from 'zod';
import {
  AgentsResponseSchema,
  ChatResponseSchema,
  ErrorResponseSchema,
  SessionIdSchema,
  SessionResponseSchema,
} from './schemas.js';

const json = (schema: z.ZodType) => ({
  'application/json': { schema: z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) },
});
const errorContent = () => json(ErrorResponseSchema);
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [String(status), { description: `Error ${status}`, content: errorContent() }]),
  );

/**
 * The OpenAPI 3.1 document of the HTTP API, generated once from the same zod
 * schemas that validate requests.
 */
export function buildOpenApiDocument({ title, chatRequest }: { title: string; chatRequest: z.ZodType }) {
  const sessionParameter = {
    name: 'id',
    in: 'path',
    required: true,
    schema: z.toJSONSchema(SessionIdSchema),
  };
  return {
    openapi: '3.1.0',
    info: { title: `${title} (Switchboard)`, version: '1' },
    paths: {
      '/v1/chat': {
        post: {
          summary: 'Send a user message and run one turn',
          description:
            'Answers JSON, or Server-Sent Events (turn-start, route, agent-start, agent-delta, agent-end, message, error, turn-end) with `Accept: text/event-stream` or `"stream": true`.',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: z.toJSONSchema(chatRequest, { io: 'input' }) } },
          },
          responses: {
            '200': {
              description: 'The turn finished',
              content: { ...json(ChatResponseSchema), 'text/event-stream': {} },
            },
            ...errors(400, 409, 413, 500, 503),
          },
        },
      },
      '/v1/sessions/{id}': {
        get: {
          summary: 'Read a session: messages and turns with their routing steps',
          parameters: [sessionParameter],
          responses: {
            '200': { description: 'The session', content: json(SessionResponseSchema) },
            ...errors(400, 404, 503),
          },
        },
        delete: {
          summary: 'Delete a session and its memory',
          parameters: [sessionParameter],
          responses: { '204': { description: 'Deleted' }, ...errors(400, 404, 409, 503) },
        },
      },
      '/v1/agents': {
        get: {
          summary: 'List the agents',
          responses: { '200': { description: 'The agents', content: json(AgentsResponseSchema) } },
        },
      },
      '/healthz': {
        get: { summary: 'Liveness', responses: { '200': { description: 'The process is up' } } },
      },
      '/readyz': {
        get: {
          summary: 'Readiness (stores reachable)',
          responses: { '200': { description: 'Ready' }, ...errors(503) },
        },
      },
    },
  };
}
