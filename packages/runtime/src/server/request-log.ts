import { createId } from '@switchboard/core';
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from '../logging/logger.js';
import type { HttpMetrics } from '../metrics/http-metrics.js';
import { principalOf } from './access.js';

/** What a request's line says beyond what the middleware sees itself. */
interface RequestNotes {
  readonly logger: Logger;
  readonly requestId: string;
  sessionId?: string;
  traceId?: string;
  /** Set while a streamed response is still being written: the line waits for its end. */
  held?: boolean;
  /** The line, once the middleware is done while the response is held. */
  write?: () => void;
}

/** What a route learnt about its request: the session it acted on, the trace of its turn. */
export interface RequestFacts {
  sessionId?: string;
  traceId?: string;
}

type WithNotes = Context<{ Variables: { requestLog?: RequestNotes } }>;

/** The part of Node's `ServerResponse` (`c.env.outgoing` under `@hono/node-server`) used here. */
interface NodeResponse {
  setHeader(name: string, value: string): unknown;
}

/** At most 128 visible ASCII characters: anything else is replaced, so that no log line carries it. */
const REQUEST_ID = /^[!-~]{1,128}$/;

/** The request id to use: the client's `x-request-id` when it is acceptable, else a fresh one. */
export function acceptRequestId(header: string | undefined): string {
  return header !== undefined && REQUEST_ID.test(header) ? header : createId('req');
}

function notesOf(c: Context): RequestNotes | undefined {
  return (c as WithNotes).get('requestLog');
}

/** The request's id, as echoed in `x-request-id` and given to its turn. */
export function requestIdOf(c: Context): string {
  return notesOf(c)?.requestId ?? acceptRequestId(c.req.header('x-request-id'));
}

/** Adds what a route learnt (its session, its turn's trace) to the request's line; returns `facts`. */
export function noteRequest<T extends RequestFacts>(c: Context, facts: T): T {
  const notes = notesOf(c);
  if (notes) {
    if (facts.sessionId !== undefined) notes.sessionId = facts.sessionId;
    if (facts.traceId !== undefined) notes.traceId = facts.traceId;
  }
  return facts;
}

/**
 * Holds the request's line until a streamed response ends: call the returned
 * function then, with what the stream learnt. The line's `durationMs` is the
 * whole stream's.
 */
export function holdRequestLog(c: Context): (facts: RequestFacts) => void {
  const notes = notesOf(c);
  if (!notes) return () => {};
  notes.held = true;
  return (facts) => {
    noteRequest(c, facts);
    notes.held = false;
    notes.write?.();
  };
}

/** The logger of the request, when it is logged (the turn's failures go there too). */
export function requestLoggerOf(c: Context): Logger | undefined {
  return notesOf(c)?.logger;
}

/** Logs an unexpected error a route answered with a 5xx, with the request's id. */
export function unexpectedErrorLog(logger: Logger): (error: unknown, c?: Context) => void {
  return (error, c) => {
    logger.error({ err: error, requestId: c && notesOf(c)?.requestId }, 'unexpected error');
  };
}

/**
 * The status a request's line shows when its client went away before the
 * answer (nginx's "client closed request"): logged at info, as nothing
 * failed on the server's side.
 */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * True when `error` is the client going away: the connection closed while
 * its body was read (Node's `aborted`), or the request's signal aborted it.
 */
export function isClientClosed(error: unknown, c: Context): boolean {
  if (!(error instanceof Error)) return false;
  if (error.message === 'aborted' && (error as { code?: unknown }).code === 'ECONNRESET') return true;
  return error.name === 'AbortError' && c.req.raw.signal?.aborted === true;
}

/** The answer to a request whose client went away: nobody reads it, the request's line shows it. */
export function clientClosedResponse(): Response {
  return new Response(null, { status: CLIENT_CLOSED_STATUS });
}

/** The pattern of the route that answered, e.g. `/v1/sessions/:id`; null when none matched. */
function routeOf(c: Context): string | null {
  // The middlewares' own pattern (`*`, which Hono stores as `/*`) is last when no route matched.
  const path = routePath(c, -1);
  return path === '/*' || path === '*' || path === '' ? null : path;
}

function writeLine(
  c: Context,
  notes: RequestNotes,
  startedAt: number,
  metrics: HttpMetrics | undefined,
): void {
  const status = c.res.status;
  const level = status >= 500 ? 'error' : 'info';
  const logged = notes.logger.isLevelEnabled?.(level) !== false;
  // With its line dropped and no metrics, nothing needs the route or the duration.
  if (!logged && !metrics) return;
  const durationMs = performance.now() - startedAt;
  const route = routeOf(c);
  metrics?.requestEnded(c.req.method, route, status, durationMs / 1000);
  if (!logged) return;
  const principal = principalOf(c);
  // A path parameter only once its route accepted it (a 400 may be about the parameter itself).
  const sessionId = notes.sessionId ?? (status === 400 ? undefined : (c.req.param('id') ?? sessionHeader(c)));
  const line: Record<string, unknown> = {
    method: c.req.method,
    route,
    status,
    durationMs: Math.round(durationMs * 100) / 100,
    requestId: notes.requestId,
  };
  if (sessionId !== undefined) line.sessionId = sessionId;
  if (principal) {
    line.tenantId = principal.tenantId;
    if (principal.keyName !== undefined) line.keyName = principal.keyName;
  }
  if (notes.traceId !== undefined) line.traceId = notes.traceId;
  notes.logger[level](line, 'request completed');
}

/** The session a route named in `x-session-id` (the OpenAI-compatible routes do). */
function sessionHeader(c: Context): string | undefined {
  return c.res.headers.get('x-session-id') ?? undefined;
}

/**
 * One line per request (method, route, status, durationMs, requestId, and
 * sessionId, tenantId, keyName and traceId when known), and the request id
 * echoed in `x-request-id` on every response. Registered first, so that it
 * sees every answer, refusals by auth and CORS preflights included. Never
 * logs headers or bodies: an `Authorization` key cannot reach a line.
 * With `metrics`, the same timing is recorded as the request's duration, so
 * that no second middleware times requests.
 */
export function requestLog(logger: Logger, metrics?: HttpMetrics): MiddlewareHandler {
  return async (c, next) => {
    const startedAt = performance.now();
    const notes: RequestNotes = { logger, requestId: acceptRequestId(c.req.header('x-request-id')) };
    (c as WithNotes).set('requestLog', notes);
    // Measured (bench memory variant): c.header() makes Hono build a Headers object for every response,
    // about 6 µs of CPU per request (24k → 21k req/s). Under @hono/node-server the Node response's own
    // setHeader costs next to nothing, and writeHead() merges it into whatever the route answers.
    const outgoing = (c.env as { outgoing?: NodeResponse } | undefined)?.outgoing;
    if (typeof outgoing?.setHeader === 'function') outgoing.setHeader('x-request-id', notes.requestId);
    else c.header('x-request-id', notes.requestId);
    await next();
    if (notes.held) notes.write = () => writeLine(c, notes, startedAt, metrics);
    else writeLine(c, notes, startedAt, metrics);
  };
}
