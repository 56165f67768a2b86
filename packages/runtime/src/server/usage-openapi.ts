import { z } from 'zod';
import { ErrorResponseSchema, SessionIdSchema } from './schemas.js';

const LimitsSchema = z.object({
  inputTokens: z.number().int().optional(),
  outputTokens: z.number().int().optional(),
  totalTokens: z.number().int().optional(),
  cost: z.number().optional().describe('In the currency of the price table'),
});

const PeriodUsageSchema = z.object({
  period: z.string().describe('`2026-11-29` (day), `2026-11` (month), `2026-11-29T13` (hour), UTC'),
  resetsAt: z.string().describe('When the counters start afresh (ISO 8601)'),
  used: z.object({
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    totalTokens: z.number().int(),
    cost: z.number(),
  }),
  limits: LimitsSchema.optional(),
  remaining: LimitsSchema.optional().describe('What is left under each limit set (never below 0)'),
});

/** The body of `GET /v1/usage` (see `UsageReport`). */
export const UsageReportSchema = z.object({
  tenantId: z.string().nullable().describe('The caller’s tenant; null without auth (the whole app)'),
  tenant: z
    .object({ day: PeriodUsageSchema, month: PeriodUsageSchema })
    .optional()
    .describe('The tenant’s totals; left out for a key bound to a user'),
  session: PeriodUsageSchema.extend({
    sessionId: SessionIdSchema,
    periodKind: z.enum(['hour', 'day', 'month']),
  }).optional(),
  turnLimits: LimitsSchema.optional(),
});

const json = (schema: z.ZodType) => ({
  'application/json': { schema: z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) },
});

/** The OpenAPI path of `GET /v1/usage`, for the app's document. */
export function usagePaths() {
  const error = (status: number) => [
    String(status),
    { description: `Error ${status}`, content: json(ErrorResponseSchema) },
  ];
  return {
    '/v1/usage': {
      get: {
        summary:
          'Spending against the budgets: the caller’s tenant’s this UTC day and month, and a session’s',
        description:
          'Scope `sessions:read`. Tokens and estimated cost of model calls, with the limits set and what is left (see docs/guides/budgets.md). A key sees its own tenant only; a key bound to a user must name one of its sessions and gets no tenant totals. 404 `not_configured` when the app has no budgets.',
        parameters: [
          {
            name: 'sessionId',
            in: 'query',
            required: false,
            description:
              'Also report this session’s spending in its budget period (404 when the caller cannot see it)',
            schema: z.toJSONSchema(SessionIdSchema),
          },
        ],
        responses: {
          '200': { description: 'The usage report', content: json(UsageReportSchema) },
          ...Object.fromEntries([400, 401, 403, 404, 503].map(error)),
        },
      },
    },
  };
}
