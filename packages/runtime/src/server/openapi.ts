import type { AgentMeta } from '@switchboard/core';
import { z } from 'zod';
import { backgroundPaths, queuedTurnResponse } from './background-openapi.js';
import { configPaths } from './config-openapi.js';
import { openAiPaths } from './openai-openapi.js';
import {
  AgentsResponseSchema,
  ApprovalRequestSchema,
  ChatResponseSchema,
  DEFAULT_PAGE_SIZE,
  ErrorResponseSchema,
  IdempotencyKeySchema,
  MAX_PAGE_SIZE,
  SessionIdSchema,
  SessionListResponseSchema,
  SessionResponseSchema,
  TurnIdSchema,
} from './schemas.js';
import { usagePaths } from './usage-openapi.js';

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
export function buildOpenApiDocument({
  title,
  chatRequest,
  scheduleRequest,
  agents = [],
}: {
  title: string;
  chatRequest: z.ZodType;
  /** The `POST /v1/schedules` body. */
  scheduleRequest: z.ZodType;
  /** The agents whose input and output schemas are published as components (`<agent>.input`, `<agent>.output`). */
  agents?: readonly AgentMeta[];
}) {
  const agentSchemas: Record<string, unknown> = {};
  for (const agent of agents) {
    if (agent.inputSchema) agentSchemas[`${agent.name}.input`] = agent.inputSchema;
    if (agent.outputSchema) agentSchemas[`${agent.name}.output`] = agent.outputSchema;
  }
  const sessionParameter = {
    name: 'id',
    in: 'path',
    required: true,
    schema: z.toJSONSchema(SessionIdSchema),
  };
  const pathId = (name: string, description: string) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: z.toJSONSchema(TurnIdSchema),
  });
  const query = (name: string, description: string, schema: Record<string, unknown>) => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
  });
  const limitParameter = (what: string) =>
    query('limit', `How many ${what} (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE})`, {
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
    });
  const turnResult = {
    description:
      'The turn (or its part that ran): `status` is `completed`, `limited` (at a profile limit, with a partial answer), `budget_exceeded` (its next model call could have passed a spending budget; with a partial answer), `failed`, `interrupted`, `blocked` (a guardrail refused it), or `awaiting_approval` with the pending `approvals`',
    content: { ...json(ChatResponseSchema), 'text/event-stream': {} },
  };
  return {
    openapi: '3.1.0',
    info: { title: `${title} (Switchboard)`, version: '1' },
    paths: {
      '/v1/chat': {
        post: {
          summary: 'Send a user message and run one turn',
          description:
            'Answers JSON, or Server-Sent Events (turn-start, route, agent-start, agent-delta, agent-end, answer-delta, approval-request, message, error, turn-end) with `Accept: text/event-stream` or `"stream": true`.',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description:
                'A retry with the same key and message returns the first request’s turn instead of running another (on any replica). Without a sessionId, the session id is derived from the key.',
              schema: z.toJSONSchema(IdempotencyKeySchema),
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: z.toJSONSchema(chatRequest, { io: 'input' }) } },
          },
          responses: {
            '200': turnResult,
            '202': queuedTurnResponse(),
            ...errors(400, 409, 413, 422, 500, 503),
          },
        },
      },
      '/v1/sessions/{id}/approvals/{approvalId}': {
        post: {
          summary: 'Approve or reject a pending approval; the turn continues once none is pending',
          description:
            'Answers like `POST /v1/chat` (JSON, or Server-Sent Events). 404 for an unknown approval, 409 `approval_resolved` for one already resolved, 409 `approval_expired` for one past its expiry (it counts as rejected).',
          parameters: [
            sessionParameter,
            pathId('approvalId', 'The approval id from the chat response or the approval-request event'),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: z.toJSONSchema(ApprovalRequestSchema, { io: 'input' }) },
            },
          },
          responses: { '200': turnResult, ...errors(400, 404, 409, 413, 500, 503) },
        },
      },
      '/v1/sessions/{id}/turns/{turnId}/cancel': {
        post: {
          summary: 'Stop a running or paused turn (it ends `interrupted`), on whichever replica runs it',
          parameters: [sessionParameter, pathId('turnId', 'The turn to stop')],
          responses: { '200': turnResult, ...errors(400, 404, 409, 500, 503) },
        },
      },
      '/v1/sessions/{id}/turns/{turnId}/events': {
        get: {
          summary: 'Rejoin a turn’s stream: its events as Server-Sent Events, live until its next turn-end',
          description:
            'From the start, or after the event named by `Last-Event-ID` (or `after`): the `id:` of the last event received. From any replica when the app’s event log is shared (Redis); a finished turn’s events replay within the retention (by default, on Redis, about 10,000 events per turn, kept an hour after its last; in memory, the process’s last 10,000 events, each kept an hour). 400 for an id that is not an event id, 404 `event_not_found` for one the turn does not have, 410 when its events are no longer kept.',
          parameters: [
            sessionParameter,
            pathId('turnId', 'The turn whose events to stream'),
            query('after', 'The id of the last event received (same as the `Last-Event-ID` header)', {
              type: 'string',
              pattern: '^\\d{1,15}-\\d{1,9}$',
            }),
          ],
          responses: {
            '200': { description: 'The turn’s events', content: { 'text/event-stream': {} } },
            ...errors(400, 404, 410, 503),
          },
        },
      },
      '/v1/sessions': {
        get: {
          summary: 'List recent sessions (the caller’s tenant’s with auth), most recently active first',
          parameters: [
            limitParameter('sessions'),
            query('cursor', 'The `nextCursor` of the previous page (opaque)', { type: 'string' }),
          ],
          responses: {
            '200': { description: 'A page of sessions', content: json(SessionListResponseSchema) },
            ...errors(400, 501, 503),
          },
        },
      },
      '/v1/sessions/{id}': {
        get: {
          summary:
            'Read a page of a session: messages, their turns with routing steps, and the session’s state',
          description:
            'Newest page first: the last `limit` messages, and `before`, a cursor for the page of older messages. `turns` holds only the turns of the page’s messages; `pendingApprovals` and `activeTurn` are on every page.',
          parameters: [
            sessionParameter,
            limitParameter('messages'),
            query('before', 'The `before` of the newer page: returns the messages just before it (opaque)', {
              type: 'string',
            }),
          ],
          responses: {
            '200': { description: 'A page of the session', content: json(SessionResponseSchema) },
            ...errors(400, 404, 503),
          },
        },
        delete: {
          summary: 'Delete a session and its memory',
          parameters: [sessionParameter],
          responses: { '204': { description: 'Deleted' }, ...errors(400, 404, 409, 503) },
        },
      },
      '/v1/sessions/{id}/export': {
        get: {
          summary: 'Export a whole session as JSON Lines (for `switchboard replay`)',
          description:
            'A `session` line, then one `message` line per message and one `turn` line per turn (with its routing steps), oldest first. 413 `export_too_large` past 10 000 messages.',
          parameters: [sessionParameter],
          responses: {
            '200': {
              description: 'The session',
              content: { 'application/x-ndjson': { schema: { type: 'string' } } },
            },
            ...errors(400, 404, 413, 503),
          },
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
          summary: 'Readiness (stores reachable, taking writes, and set not to evict)',
          responses: {
            '200': {
              description: 'Ready; `warnings` lists what an operator should know (Redis eviction allowed)',
            },
            ...errors(503),
          },
        },
      },
      ...usagePaths(),
      ...backgroundPaths(scheduleRequest),
      ...openAiPaths(),
      ...configPaths(),
    },
    ...(Object.keys(agentSchemas).length > 0 ? { components: { schemas: agentSchemas } } : {}),
  };
}
