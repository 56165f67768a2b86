import { z } from 'zod';
import { TURN_STATUSES } from '../turns/turn-record.js';
import { ChatResponseSchema, ErrorResponseSchema, SessionIdSchema, TurnIdSchema } from './schemas.js';

/** Where a turn stands, as `GET /v1/sessions/:id/turns/:turnId` reports it. */
export const TurnProgressSchema = z.enum(['queued', ...TURN_STATUSES]);

/** The answer of `POST /v1/chat` with `background: true`. */
export const QueuedTurnSchema = z.object({
  sessionId: SessionIdSchema,
  turnId: TurnIdSchema,
  status: z.literal('queued'),
  events: z.string().describe('Where to follow the turn’s events (Server-Sent Events), once it runs'),
});

/** A turn's status and, once it has one, its result. */
export const TurnStatusSchema = ChatResponseSchema.partial()
  .extend({
    sessionId: z.string(),
    turnId: z.string(),
    status: TurnProgressSchema,
    queuedAt: z.string().optional().describe('When a background turn was queued (ISO 8601)'),
  })
  .describe('`reply`, `steps` and the rest once the turn has a result');

const json = (schema: z.ZodType) => ({
  'application/json': { schema: z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) },
});
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: `Error ${status}`, content: json(ErrorResponseSchema) },
    ]),
  );

/** The 202 answer `POST /v1/chat` gives a background turn. */
export function queuedTurnResponse() {
  return {
    description:
      'With `background: true`: the turn is queued. `Location` names its status (`GET /v1/sessions/{id}/turns/{turnId}`), `events` its stream.',
    content: json(QueuedTurnSchema),
  };
}

/** The OpenAPI paths of a turn's status and the background-turn list, for the app's document. */
export function backgroundPaths() {
  const path = (name: string, schema: z.ZodType, description: string) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: z.toJSONSchema(schema),
  });
  return {
    '/v1/sessions/{id}/turns/{turnId}': {
      get: {
        summary:
          'Where a turn stands (`queued`, `running`, `awaiting_approval`, or how it ended) and its result',
        description:
          'Any turn of the session; a background turn also before it runs. A key bound to a user reads its own turns only.',
        parameters: [
          path('id', SessionIdSchema, 'The session'),
          path('turnId', TurnIdSchema, 'The turn (the `turnId` of `POST /v1/chat`’s answer)'),
        ],
        responses: {
          '200': { description: 'The turn', content: json(TurnStatusSchema) },
          ...errors(400, 404, 503),
        },
      },
    },
    '/v1/background-turns': {
      get: {
        summary:
          'The latest background turns of the caller’s tenant (its own with a user-bound key), newest first',
        description: 'At most 200. `status` filters them (`queued,running`).',
        parameters: [
          {
            name: 'status',
            in: 'query',
            required: false,
            description: 'Comma-separated statuses to keep',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': {
            description: 'The turns',
            content: json(z.object({ data: z.array(TurnStatusSchema) })),
          },
          ...errors(400, 503),
        },
      },
    },
  };
}
