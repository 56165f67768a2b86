import { SwitchboardError, ValidationError } from '@switchboard/core';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

const STATUS_BY_CODE: Record<string, ContentfulStatusCode> = {
  validation_error: 400,
  not_found: 404,
  session_busy: 409,
  approval_pending: 409,
  approval_resolved: 409,
  approval_expired: 409,
  turn_not_active: 409,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  store_unavailable: 503,
  shutting_down: 503,
};

/** What a client reads for a store outage: never the store's address or its error text. */
const STORE_UNAVAILABLE_MESSAGE = 'The session store is unavailable; try again shortly';
const NOT_STORED_MESSAGE =
  'The session store is unavailable and nothing of this request was stored: send it again shortly';
const UNKNOWN_OUTCOME_MESSAGE =
  'The session store stopped answering while the message was being stored: it may or may not have been processed.';
const RETRY_WITH_KEY = 'Retry with the same Idempotency-Key to get its result without running it twice';
const RETRY_WITHOUT_KEY =
  "Read the session's history before sending it again. Send each message with an Idempotency-Key header (any unique string): a retry with the same key then returns the first result instead of running the message twice";

/** What a client is told of a store failure, by what became of its writes (see `StoreUnavailableError.outcome`). */
function storeFailureMessage(outcome: string | undefined, sentIdempotencyKey: boolean): string {
  if (outcome === 'not_stored') return NOT_STORED_MESSAGE;
  if (outcome === 'unknown')
    return `${UNKNOWN_OUTCOME_MESSAGE} ${sentIdempotencyKey ? RETRY_WITH_KEY : RETRY_WITHOUT_KEY}`;
  return STORE_UNAVAILABLE_MESSAGE;
}

/** Writes the JSON error body every route uses. */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: string,
  message: string,
  issues?: readonly string[],
  extra?: Record<string, unknown>,
) {
  const error: Record<string, unknown> = { code, message };
  if (issues?.length) error.issues = [...issues];
  if (extra) Object.assign(error, extra);
  return c.json({ error }, status);
}

/** The fields beside code and message that tell a client what to do next. */
function extraFields(error: SwitchboardError): Record<string, unknown> | undefined {
  const fields = error as SwitchboardError & {
    approvalIds?: readonly string[];
    turnId?: string;
    outcome?: string;
  };
  if (error.code === 'approval_pending')
    return { approvalIds: [...(fields.approvalIds ?? [])], turnId: fields.turnId };
  if (error.code === 'store_unavailable' && fields.outcome) {
    return fields.turnId ? { outcome: fields.outcome, turnId: fields.turnId } : { outcome: fields.outcome };
  }
  return undefined;
}

/** What a client is told of a Switchboard error (see {@link publicErrorOf}). */
export interface PublicError {
  status: ContentfulStatusCode;
  code: string;
  message: string;
  issues?: readonly string[];
  extra?: Record<string, unknown>;
}

/**
 * The one policy for what a client learns of a Switchboard error, on every
 * protocol: user errors keep their message; a store outage says so without
 * naming the store (unless `exposeDetails`), and whether the request was
 * stored, with retry advice that names the `Idempotency-Key` only when the
 * request carried one (`sentIdempotencyKey`); anything else is an internal
 * error without its text. Errors of 5xx are logged, except a shutdown.
 */
export function publicErrorOf(
  known: SwitchboardError,
  log: (error: unknown) => void,
  exposeDetails = false,
  sentIdempotencyKey = false,
): PublicError {
  const status = STATUS_BY_CODE[known.code] ?? (known.kind === 'user' ? 400 : 500);
  // A store outage is logged too (its detail names the store, which clients never see); a shutdown is not.
  if (status >= 500 && known.code !== 'shutting_down') log(known);
  const issues = ValidationError.isInstance(known) ? (known as ValidationError).issues : undefined;
  let message = status === 500 ? 'Internal server error' : known.message;
  if (known.code === 'store_unavailable' && !exposeDetails) {
    // The store's own text names its host and port.
    message = storeFailureMessage((known as { outcome?: string }).outcome, sentIdempotencyKey);
  }
  return { status, code: known.code, message, issues, extra: extraFields(known) };
}

/**
 * The one place where errors become HTTP statuses: user errors are 4xx with
 * their message; unexpected errors are a 500 without internals or stacks.
 */
export function handleError(
  error: unknown,
  c: Context,
  log: (error: unknown, c?: Context) => void,
  exposeDetails = false,
) {
  if (SwitchboardError.isInstance(error)) {
    const { status, code, message, issues, extra } = publicErrorOf(
      error as SwitchboardError,
      (logged) => log(logged, c),
      exposeDetails,
      c.req.header('idempotency-key') !== undefined,
    );
    return errorResponse(c, status, code, message, issues, extra);
  }
  if (error instanceof HTTPException) {
    const status = error.status as ContentfulStatusCode;
    return errorResponse(
      c,
      status,
      status === 413 ? 'payload_too_large' : 'http_error',
      error.message || 'Request failed',
    );
  }
  log(error, c);
  return errorResponse(c, 500, 'internal_error', 'Internal server error');
}

/** Parses `value` with `schema`, throwing a `ValidationError` that lists every problem. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) =>
    issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
  );
  throw new ValidationError({ message: `Invalid ${what}`, issues });
}

/** Parses a JSON body, turning bad JSON into a `ValidationError` instead of a 500. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError({ message: 'Malformed JSON body' });
  }
}
