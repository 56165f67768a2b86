import type { StepAnnotations } from '@switchboard/core';
import { z } from 'zod';
import { type InnerStep, TURN_STATUSES, type TurnRecord } from './turn-record.js';

/**
 * The zod schemas of the turn model: what the Redis store validates when it
 * reads a record, and what the OpenAPI document describes.
 */

/** The states of a turn. */
export const TurnStatusSchema = z.enum(TURN_STATUSES);

/** Token counts. */
export const UsageSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
});

const annotationsSchema = z.custom<StepAnnotations>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'annotations must be an object',
);

/** A nested orchestrator agent's step: checked for its shape at the top; its calls are kept as written. */
const innerStepSchema = z.custom<InnerStep>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { calls?: unknown }).calls) &&
    typeof (value as { kind?: unknown }).kind === 'string',
  'inner steps must be steps',
);

/** A routing step. */
export const RouteStepSchema = z.object({
  hop: z.number().int().nonnegative(),
  kind: z.enum(['call', 'fan-out', 'answer', 'error', 'note']),
  calls: z.array(
    z.object({
      toolCallId: z.string(),
      agent: z.string(),
      message: z.string().optional(),
      input: z.unknown().optional(),
      thought: z.string().optional(),
      reason: z.string().optional(),
      approvalId: z.string().optional(),
      timeoutMs: z.number().optional(),
      fanInGraceMs: z.number().optional(),
      innerSteps: z.array(innerStepSchema).optional(),
    }),
  ),
  label: z.string().optional(),
  error: z.string().optional(),
  decidedAt: z.string(),
  durationMs: z.number(),
  annotations: annotationsSchema.optional(),
  usage: UsageSchema.optional(),
});

/** An approval. */
export const ApprovalRecordSchema = z.object({
  id: z.string().min(1),
  toolCallId: z.string(),
  agent: z.string(),
  message: z.string(),
  input: z.unknown().optional(),
  thought: z.string().optional(),
  reason: z.string().optional(),
  risk: z.enum(['low', 'medium', 'high', 'critical']),
  requestedBy: z.enum(['orchestrator', 'agent', 'policy']),
  requestedAt: z.string(),
  expiresAt: z.string().nullable(),
  status: z.enum(['pending', 'approved', 'rejected', 'expired', 'withdrawn']),
  decidedAt: z.string().optional(),
  decidedBy: z.string().optional(),
  requestedFor: z.string().optional(),
  comment: z.string().optional(),
  tool: z.string().optional(),
  toolUseId: z.string().optional(),
  pauseId: z.string().optional(),
  agentState: z.unknown().optional(),
});

/** A turn record, as stored and as returned by the HTTP API. */
export const TurnRecordSchema = z.object({
  turnId: z.string().min(1),
  userMessageId: z.string(),
  status: TurnStatusSchema,
  startedAt: z.string(),
  updatedAt: z.string().optional(),
  endedAt: z.string().optional(),
  steps: z.array(RouteStepSchema),
  traceId: z.string().optional(),
  traces: z.array(z.object({ traceId: z.string(), spanId: z.string() })).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  approvals: z.array(ApprovalRecordSchema).optional(),
  recoveries: z.number().int().nonnegative().optional(),
  part: z.number().int().nonnegative().optional(),
  profile: z.string().optional(),
  configVersion: z
    .object({ app: z.number().int().nonnegative(), tenant: z.number().int().nonnegative().optional() })
    .optional(),
  usage: UsageSchema.optional(),
  userId: z.string().optional(),
}) satisfies z.ZodType<TurnRecord>;
