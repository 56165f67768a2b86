/**
 * What a client learns of an error, whichever protocol it came by: the
 * routes, the OpenAI-compatible routes and the A2A adapter all ask here.
 *
 * @module
 */
import { type SwitchboardError, ValidationError } from '@switchboard/core';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The HTTP status of each error code: the routes answer with it, the A2A adapter sorts errors by it. */
const STATUS_BY_CODE: Record<string, ContentfulStatusCode> = {
  validation_error: 400,
  insufficient_scope: 403,
  approval_forbidden: 403,
  not_found: 404,
  session_busy: 409,
  version_conflict: 409,
  approval_pending: 409,
  approval_resolved: 409,
  approval_expired: 409,
  too_many_pending_approvals: 429,
  turn_not_active: 409,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  store_unavailable: 503,
  shutting_down: 503,
  queue_full: 503,
  background_unavailable: 400,
  too_many_schedules: 429,
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

/** The fields beside code and message that tell a client what to do next. */
function extraFields(error: SwitchboardError): Record<string, unknown> | undefined {
  const fields = error as SwitchboardError & {
    scope?: string;
    reason?: string;
    approvalIds?: readonly string[];
    turnId?: string;
    outcome?: string;
    currentVersion?: number;
  };
  if (error.code === 'insufficient_scope') return { scope: fields.scope };
  if (error.code === 'approval_forbidden') return { reason: fields.reason };
  if (error.code === 'version_conflict') return { currentVersion: fields.currentVersion };
  if (error.code === 'approval_pending')
    return { approvalIds: [...(fields.approvalIds ?? [])], turnId: fields.turnId };
  if (error.code === 'store_unavailable' && fields.outcome) {
    return fields.turnId ? { outcome: fields.outcome, turnId: fields.turnId } : { outcome: fields.outcome };
  }
  return undefined;
}

/**
 * The HTTP status the server answers an error with: its code's status, else
 * 400 for a user error and 500 for a system one. `docs/reference/error-codes.md`
 * is generated with it (`pnpm docs:errors`).
 */
export function statusOfError({ code, kind }: Pick<SwitchboardError, 'code' | 'kind'>): ContentfulStatusCode {
  return STATUS_BY_CODE[code] ?? (kind === 'user' ? 400 : 500);
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
  const status = statusOfError(known);
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
