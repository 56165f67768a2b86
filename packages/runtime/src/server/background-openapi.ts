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

const ScheduleSchema = z.object({
  id: z.string(),
  message: z.string(),
  every: z.number().int().optional().describe('Milliseconds between runs'),
  cron: z.string().optional(),
  timezone: z.string().optional(),
  sessionId: z.string().optional().describe('The session every run continues; absent: a new one per run'),
  userId: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  callbackUrl: z.string().optional(),
  createdAt: z.string(),
});

/** The OpenAPI paths of a turn's status, the background-turn list and schedules, for the app's document. */
export function backgroundPaths(scheduleRequest: z.ZodType) {
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
    '/v1/schedules': {
      post: {
        summary:
          'Run a message as a background turn on a schedule (`every` milliseconds, or `cron` in `timezone`)',
        description:
          'Once per tick across replicas. Each run is a background turn (listed at `GET /v1/background-turns`, its result POSTed to `callbackUrl`). At most 100 schedules per tenant (429 `too_many_schedules`).',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: z.toJSONSchema(scheduleRequest, { io: 'input' }) } },
        },
        responses: {
          '201': { description: 'The schedule', content: json(ScheduleSchema) },
          ...errors(400, 429, 503),
        },
      },
      get: {
        summary: 'The caller’s schedules (its tenant’s; its own with a user-bound key)',
        responses: {
          '200': { description: 'The schedules', content: json(z.object({ data: z.array(ScheduleSchema) })) },
          ...errors(400, 503),
        },
      },
    },
    '/v1/schedules/{id}': {
      delete: {
        summary: 'Stop and remove a schedule (a run under way finishes)',
        parameters: [path('id', TurnIdSchema, 'The schedule')],
        responses: { '204': { description: 'Removed' }, ...errors(400, 404, 503) },
      },
    },
  };
}
