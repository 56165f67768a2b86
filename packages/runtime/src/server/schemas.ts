import { AgentMetaSchema, MessageItemSchema } from '@switchboard/core';
import { z } from 'zod';
import {
  ApprovalRecordSchema as ApprovalSchema,
  RouteStepSchema,
  TurnRecordSchema,
  TurnStatusSchema,
  UsageSchema,
} from '../turns/turn-schemas.js';

export { RouteStepSchema, TurnRecordSchema, TurnStatusSchema };

/** Session ids: 1–128 letters, digits, `_`, `-`, `.` or `:`. */
export const SessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'sessionId must be 1-128 characters: letters, digits, _ - . :')
  .refine((id) => id !== '.' && id !== '..', 'sessionId must not be . or .. (no URL can address it)');

/** Builds the `POST /v1/chat` body schema for a maximum message length (once, at start-up). */
export function chatRequestSchema(maxMessageLength: number) {
  return z.strictObject({
    message: z
      .string({ error: 'message is required and must be a string' })
      .min(1, 'message must not be empty')
      .max(maxMessageLength, `message must be at most ${maxMessageLength} characters`),
    sessionId: SessionIdSchema.optional(),
    userId: z.string().min(1).max(256).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /** Same as sending `Accept: text/event-stream`. */
    stream: z.boolean().optional(),
    /** What to do when the session is busy with another turn (default: the app's `concurrency`). */
    concurrency: z.enum(['wait', 'reject', 'interrupt']).optional(),
  });
}

/** Turn and approval ids in a path: 1–128 letters, digits, `_`, `-`, `.` or `:`. */
export const TurnIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'ids are 1-128 characters: letters, digits, _ - . :');

/** An `Idempotency-Key` header: 1–255 visible ASCII characters. */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1-255 visible ASCII characters');

/** The body of `POST /v1/sessions/:id/approvals/:approvalId`. */
export const ApprovalRequestSchema = z.strictObject({
  decision: z.enum(['approve', 'reject'], { error: "decision must be 'approve' or 'reject'" }),
  /** Shown to the orchestrator with a rejection. At most 2 000 characters. */
  comment: z.string().max(2_000, 'comment must be at most 2000 characters').optional(),
  /** Who decides (stored on the approval and traced). */
  userId: z.string().min(1).max(256).optional(),
  /** Same as sending `Accept: text/event-stream`. */
  stream: z.boolean().optional(),
});

/** A `POST /v1/chat` body. */
export type ChatRequest = z.infer<ReturnType<typeof chatRequestSchema>>;

/** The JSON answer of `POST /v1/chat` (and of resolving an approval, or cancelling a turn). */
export const ChatResponseSchema = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  reply: z.string(),
  status: TurnStatusSchema,
  steps: z.array(RouteStepSchema),
  approvals: z.array(ApprovalSchema).optional(),
  usage: UsageSchema.optional(),
  traceId: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** The answer of `GET /v1/sessions/:id`. */
export const SessionResponseSchema = z.object({
  sessionId: z.string(),
  messages: z.array(MessageItemSchema),
  turns: z.array(TurnRecordSchema),
  /** The approvals the session's last turn waits for. */
  pendingApprovals: z.array(ApprovalSchema),
  /** The session's turn that has not ended, if any. */
  activeTurn: z.object({ turnId: z.string(), status: TurnStatusSchema }).optional(),
});

/** The answer of `GET /v1/agents`. */
export const AgentsResponseSchema = z.object({ agents: z.array(AgentMetaSchema) });

/** Every error answer. */
export const ErrorResponseSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.string()).optional(),
    /** With `approval_pending`: the approvals to resolve first, and their turn. */
    approvalIds: z.array(z.string()).optional(),
    turnId: z.string().optional(),
    /** With `store_unavailable`: `unknown` when the message may have been stored (retry with the same Idempotency-Key). */
    outcome: z.literal('unknown').optional(),
  }),
});
