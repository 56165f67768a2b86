import { AgentMetaSchema, MessageItemSchema } from '@switchboard/core';
import { z } from 'zod';
import { PublishedGraphSchema } from '../agents/published-graph.js';
import { jsonBoundsProblem, MAX_METADATA_BYTES, MAX_METADATA_DEPTH } from '../backend/json-bounds.js';
import {
  IdempotencyKeySchema,
  isSessionId,
  SessionIdSchema,
  TurnIdSchema,
  UserIdSchema,
} from '../backend/request-schemas.js';
import {
  ApprovalRecordSchema as ApprovalSchema,
  RouteStepSchema,
  TurnRecordSchema,
  TurnStatusSchema,
  UsageSchema,
} from '../turns/turn-schemas.js';

export {
  IdempotencyKeySchema,
  MAX_METADATA_BYTES,
  MAX_METADATA_DEPTH,
  RouteStepSchema,
  SessionIdSchema,
  TurnIdSchema,
  TurnRecordSchema,
  TurnStatusSchema,
  UserIdSchema,
};

/**
 * Metadata is stored with the message and walked by stores and tracing:
 * bounded in depth (checked first, so that nothing deeper is walked) and size.
 */
export const MetadataSchema = z.record(z.string(), z.unknown()).superRefine((metadata, context) => {
  const problem = jsonBoundsProblem(
    metadata,
    { maxDepth: MAX_METADATA_DEPTH, maxBytes: MAX_METADATA_BYTES },
    'metadata',
  );
  if (problem) context.addIssue({ code: 'custom', message: problem.message });
});

/** A request's `message`: a non-empty string of at most `maxMessageLength` characters. */
export function messageSchema(maxMessageLength: number) {
  return z
    .string({ error: 'message is required and must be a string' })
    .min(1, 'message must not be empty')
    .max(maxMessageLength, `message must be at most ${maxMessageLength} characters`);
}

/** Builds the `POST /v1/chat` body schema for a maximum message length (once, at start-up). */
export function chatRequestSchema(maxMessageLength: number) {
  return z.strictObject({
    message: messageSchema(maxMessageLength),
    sessionId: SessionIdSchema.optional(),
    userId: z.string().min(1).max(256).optional(),
    /** At most {@link MAX_METADATA_DEPTH} levels deep and {@link MAX_METADATA_BYTES} bytes as JSON. */
    metadata: MetadataSchema.optional(),
    /** Same as sending `Accept: text/event-stream`. */
    stream: z.boolean().optional(),
    /** What to do when the session is busy with another turn (default: the app's `concurrency`). */
    concurrency: z.enum(['wait', 'reject', 'interrupt']).optional(),
    /**
     * What happens to the turn when the client goes away before it ends:
     * it runs on (`continue`, the default; its stream can be rejoined) or
     * is cancelled (`cancel`).
     */
    onDisconnect: z.enum(['continue', 'cancel']).optional(),
    /**
     * Queues the turn and answers 202 `{ sessionId, turnId, status: 'queued' }`
     * at once; `GET /v1/sessions/:id/turns/:turnId` reports it, its events
     * can be followed, and `callbackUrl` gets its result.
     */
    background: z.boolean().optional(),
    /** With `background`: where the result is POSTed (http or https, at most 2 048 characters). */
    callbackUrl: z.string().max(2_048, 'callbackUrl must be at most 2048 characters').optional(),
  });
}

/**
 * The most common `POST /v1/chat` body, `{ message, sessionId?, stream? }`
 * with values {@link chatRequestSchema} accepts, as that schema would return
 * it; undefined for any other body, which the schema then decides on (with
 * its messages for what is wrong).
 */
export function commonChatRequest(value: unknown, maxMessageLength: number): ChatRequest | undefined {
  // Measured: the schema's parse was about 1.4 µs of a /v1/chat request in the bench memory variant's profile
  // (bench/route-profile.ts); with this check the route costs 1.2 µs less in process (bench/route-overhead.ts).
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const key in value) if (key !== 'message' && key !== 'sessionId' && key !== 'stream') return undefined;
  const { message, sessionId, stream } = value as Record<string, unknown>;
  if (typeof message !== 'string' || message.length === 0 || message.length > maxMessageLength)
    return undefined;
  if (sessionId !== undefined && !isSessionId(sessionId)) return undefined;
  if (stream !== undefined && typeof stream !== 'boolean') return undefined;
  return value as ChatRequest;
}

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

/** How many messages a page of `GET /v1/sessions/:id` holds, and how many sessions a page of `GET /v1/sessions`, without `limit`. */
export const DEFAULT_PAGE_SIZE = 50;
/** The largest `limit` of `GET /v1/sessions` and `GET /v1/sessions/:id`. */
export const MAX_PAGE_SIZE = 200;

const PageLimitSchema = z
  .string()
  .regex(/^\d{1,4}$/, `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
  .transform(Number)
  .pipe(
    z
      .number()
      .min(1, 'limit must be at least 1')
      .max(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`),
  );
const CursorSchema = z.string().min(1).max(512);

/** The query of `GET /v1/sessions/:id`: `limit` messages (default {@link DEFAULT_PAGE_SIZE}) `before` a cursor. */
export const HistoryQuerySchema = z.object({
  limit: PageLimitSchema.optional(),
  /** The `before` of the newer page: the page of older messages ending there. */
  before: CursorSchema.optional(),
});

/** The query of `GET /v1/sessions`: `limit` sessions (default {@link DEFAULT_PAGE_SIZE}) after a `cursor`. */
export const SessionListQuerySchema = z.object({
  limit: PageLimitSchema.optional(),
  /** The `nextCursor` of the previous page. */
  cursor: CursorSchema.optional(),
});

/** The answer of `GET /v1/sessions/:id`: one page of its history, newest page first, and the session's state. */
export const SessionResponseSchema = z.object({
  sessionId: z.string(),
  /** The page's messages, oldest first: the newest `limit` ones, or those just before the `before` cursor. */
  messages: z.array(MessageItemSchema),
  /** The turns the page's messages belong to (and no other), oldest first. */
  turns: z.array(TurnRecordSchema),
  /** The approvals the session's last turn waits for (on every page). */
  pendingApprovals: z.array(ApprovalSchema),
  /** The session's turn that has not ended, if any (on every page). */
  activeTurn: z.object({ turnId: z.string(), status: TurnStatusSchema }).optional(),
  /** Pass as `?before=` for the page of older messages; absent on the oldest page. */
  before: z.string().optional(),
});

/** The answer of `GET /v1/sessions`. */
export const SessionListResponseSchema = z.object({
  /** Most recently active first. A page may hold fewer than `limit` even when more follow. */
  sessions: z.array(
    z.object({
      sessionId: z.string(),
      /** When the session was last active (its last turn started, or its last write in memory). */
      updatedAt: z.string(),
      messageCount: z.number().int(),
    }),
  ),
  /** Pass as `?cursor=` for the next page; absent on the last page. */
  nextCursor: z.string().optional(),
});

/** One agent's recent calls, as `withBreaker` keeps them (see `AgentStats` in `@switchboard/core`). */
export const AgentStatsSchema = z.object({
  /** Calls in the sliding window (at most the last 32). */
  calls: z.number().int(),
  /** The share of them that replied ok, 0–1. */
  successRate: z.number().min(0).max(1),
  /** Failed calls by error code. */
  errors: z.record(z.string(), z.number().int()),
  /** Median latency in ms, when known. */
  p50Ms: z.number().optional(),
  /** 95th-percentile latency in ms, when known. */
  p95Ms: z.number().optional(),
});

/** The answer of `GET /v1/agents`. */
export const AgentsResponseSchema = z.object({
  agents: z.array(AgentMetaSchema),
  /** The workflow graph the orchestrator runs, when it is a graph. */
  graph: PublishedGraphSchema.optional(),
  /**
   * The caller's tenant's stats by agent name (only agents called within the
   * window), when the orchestrator keeps them (`withBreaker`).
   */
  stats: z.record(z.string(), AgentStatsSchema).optional(),
});

/** Every error answer. */
export const ErrorResponseSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.string()).optional(),
    /** With `approval_pending`: the approvals to resolve first, and their turn. */
    approvalIds: z.array(z.string()).optional(),
    turnId: z.string().optional(),
    /**
     * With `store_unavailable`: `unknown` when the message may have been
     * stored (retry with the same Idempotency-Key); `not_stored` when nothing
     * of the request was stored (send it again).
     */
    outcome: z.enum(['unknown', 'not_stored']).optional(),
  }),
});
