import { AgentMetaSchema, MessageItemSchema } from '@switchboard/core';
import { z } from 'zod';

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
  });
}

/** A `POST /v1/chat` body. */
export type ChatRequest = z.infer<ReturnType<typeof chatRequestSchema>>;

/** One routing decision as returned to clients. */
export const RouteStepSchema = z.object({
  hop: z.number().int(),
  kind: z.enum(['call', 'fan-out', 'answer', 'error']),
  calls: z.array(
    z.object({
      toolCallId: z.string(),
      agent: z.string(),
      thought: z.string().optional(),
      reason: z.string().optional(),
    }),
  ),
  error: z.string().optional(),
  decidedAt: z.string(),
  durationMs: z.number(),
});

/** The JSON answer of `POST /v1/chat`. */
export const ChatResponseSchema = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  reply: z.string(),
  status: z.enum(['completed', 'failed']),
  steps: z.array(RouteStepSchema),
  traceId: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** A stored turn as returned by `GET /v1/sessions/:id`. */
export const TurnRecordSchema = z.object({
  turnId: z.string(),
  userMessageId: z.string(),
  status: z.enum(['completed', 'failed']),
  startedAt: z.string(),
  endedAt: z.string(),
  steps: z.array(RouteStepSchema),
  traceId: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

/** The answer of `GET /v1/sessions/:id`. */
export const SessionResponseSchema = z.object({
  sessionId: z.string(),
  messages: z.array(MessageItemSchema),
  turns: z.array(TurnRecordSchema),
});

/** The answer of `GET /v1/agents`. */
export const AgentsResponseSchema = z.object({ agents: z.array(AgentMetaSchema) });

/** Every error answer. */
export const ErrorResponseSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.string()).optional(),
  }),
});
