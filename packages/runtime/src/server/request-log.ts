import { createId } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { HonoRequest } from 'hono/request';
import type { Principal } from '../backend/principal.js';
import type { Logger } from '../logging/logger.js';
import type { HttpMetrics } from '../metrics/http-metrics.js';
import { isPromiseLike } from '../promise-like.js';

/** What a request's line says beyond what the request log sees itself. */
interface RequestNotes {
  readonly logger: Logger;
  readonly requestId: string;
  sessionId?: string;
  traceId?: string;
  /** Who the request was authenticated as (see `accessControl`). */
  principal?: Principal;
  /** The route's response carries `x-request-id` itself (see {@link jsonAnswer}). */
  echoed?: boolean;
  /** Set while a streamed response is still being written: the line waits for its end. */
  held?: boolean;
  /** The route the line names, when no route of the router answered (see {@link noteRoute}). */
  route?: { pattern: string; params: Readonly<Record<string, string>> };
  /** The line, once the response is answered while it is held. */
  write?: () => void;
}

/** What a route learnt about its request: the session it acted on, the trace of its turn, its caller. */
export interface RequestFacts {
  sessionId?: string;
  traceId?: string;
  principal?: Principal;
}

/** Where a request's notes travel: in the bindings its handlers see as `c.env`. */
const NOTES = Symbol('request-log');

/** What the routes read of a server's bindings: `@hono/node-server`'s Node request and response. */
interface ServerBindings {
  incoming?: unknown;
  outgoing?: NodeResponse;
}

/** The bindings of a logged request: the server's, and its notes. */
interface Bindings extends ServerBindings {
  [NOTES]?: RequestNotes;
}

/** The part of Node's `ServerResponse` (`c.env.outgoing` under `@hono/node-server`) used here. */
interface NodeResponse {
  setHeader(name: string, value: string): unknown;
  readonly headersSent: boolean;
}

/** At most 128 visible ASCII characters: anything else is replaced, so that no log line carries it. */
const REQUEST_ID = /^[!-~]{1,128}$/;

/** The request id to use: the client's `x-request-id` when it is acceptable, else a fresh one. */
export function acceptRequestId(header: string | undefined | null): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : createId('req');
}

function notesOf(c: Context): RequestNotes | undefined {
  return (c.env as Bindings | undefined)?.[NOTES];
}

/** The request's id, as echoed in `x-request-id` and given to its turn. */
export function requestIdOf(c: Context): string {
  return notesOf(c)?.requestId ?? acceptRequestId(c.req.header('x-request-id'));
}

/** Adds what a route learnt (its session, its turn's trace, its caller) to the request's line; returns `facts`. */
export function noteRequest<T extends RequestFacts>(c: Context, facts: T): T {
  const notes = notesOf(c);
  if (notes) {
    if (facts.sessionId !== undefined) notes.sessionId = facts.sessionId;
    if (facts.traceId !== undefined) notes.traceId = facts.traceId;
    if (facts.principal !== undefined) notes.principal = facts.principal;
  }
  return facts;
}

/**
 * Names the route of a request that no route of the router answered (a 405
 * for another method of a known path), with its path parameters, for the
 * request's line and metrics.
 */
export function noteRoute(c: Context, pattern: string, params: Readonly<Record<string, string>>): void {
  const notes = notesOf(c);
  if (notes) notes.route = { pattern, params };
}

/**
 * A route's JSON answer (200), carrying the request's `x-request-id` itself:
 * the same response as `c.json(body)` with that header. For the hot routes
 * (`POST /v1/chat`); any other answer gets the header from the request log.
 */
export function jsonAnswer(c: Context, body: unknown): Response {
  const notes = notesOf(c);
  if (!notes) return c.json(body);
  notes.echoed = true;
  // Measured (bench/route-overhead.ts, in process through @hono/node-server): the Node response's setHeader
  // puts its writeHead() on the slow path that validates and merges every header, about 2 µs of a /v1/chat
  // request's 45; in the response's own header object, @hono/node-server hands it to writeHead() as it is.
  return new Response(JSON.stringify(body), {
    headers: { 'content-type': 'application/json', 'x-request-id': notes.requestId },
  });
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

/**
 * The route pattern a request matched (e.g. `/v1/sessions/:id`; null when
 * none did), and a reader of its path parameters.
 */
function routeOf(
  hono: Hono,
  request: Request,
  bindings: Bindings,
): { route: string | null; parameter: (name: string) => string | undefined } {
  // Hono answers HEAD with its GET route.
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const path = hono.getPath(request, { env: bindings });
  const matched = hono.router.match(method, path);
  // The route that answers is the last matched: the middlewares (`*`, stored as `/*`) come first.
  const index = matched[0].length - 1;
  const pattern = index >= 0 ? matched[0][index]?.[0][1].path : undefined;
  if (pattern === undefined || pattern === '/*' || pattern === '*' || pattern === '')
    return { route: null, parameter: () => undefined };
  const parameter = (name: string) => {
    const parameters = new HonoRequest(request, path, matched);
    parameters.routeIndex = index;
    return parameters.param(name);
  };
  return { route: pattern, parameter };
}

function writeLine(
  hono: Hono,
  request: Request,
  bindings: Bindings,
  response: Response,
  notes: RequestNotes,
  startedAt: number,
  metrics: HttpMetrics | undefined,
): void {
  const status = response.status;
  const level = status >= 500 ? 'error' : 'info';
  const logged = notes.logger.isLevelEnabled?.(level) !== false;
  // With its line dropped and no metrics, nothing needs the route or the duration.
  if (!logged && !metrics) return;
  const durationMs = performance.now() - startedAt;
  const { route, parameter } = notes.route
    ? { route: notes.route.pattern, parameter: (name: string) => notes.route?.params[name] }
    : routeOf(hono, request, bindings);
  metrics?.requestEnded(request.method, route, status, durationMs / 1000);
  if (!logged) return;
  const { principal } = notes;
  // A path parameter only once its route accepted it (a 400 may be about the parameter itself); else the
  // session a route named in `x-session-id` (the OpenAI-compatible routes do).
  const sessionId =
    notes.sessionId ??
    (status === 400 ? undefined : (parameter('id') ?? response.headers.get('x-session-id') ?? undefined));
  const line: Record<string, unknown> = {
    method: request.method,
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

/** `response` with `x-request-id`, on a copy when its headers cannot change (a fetched response's). */
function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set('x-request-id', requestId);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set('x-request-id', requestId);
    return copy;
  }
}

/**
 * Serves `hono` with one line per request (method, route, status,
 * durationMs, requestId, and sessionId, tenantId, keyName and traceId when
 * known), and the request id echoed in `x-request-id` on every response. It
 * wraps the routes, so that it sees every answer, refusals by auth and CORS
 * preflights included. Never logs headers or bodies: an `Authorization` key
 * cannot reach a line. With `metrics`, the same timing is recorded as the
 * request's duration, so that nothing else times requests.
 */
export function loggedFetch(
  hono: Hono,
  logger: Logger,
  metrics?: HttpMetrics,
): (request: Request, env?: object) => Response | Promise<Response> {
  return (request, env) => {
    const startedAt = performance.now();
    const notes: RequestNotes = { logger, requestId: acceptRequestId(request.headers.get('x-request-id')) };
    // Measured (bench/route-overhead.ts: /v1/chat in process through @hono/node-server, against a plain Hono
    // route calling app.chat): as a Hono middleware, the log put every route on Hono's composed path; outside
    // the routes (and with jsonAnswer) a route alone on its path is called directly, and the route cost 3.8 µs
    // over the plain one instead of 7.3. The line's route is matched again only when the line is written or
    // timed. The bindings are built field by field: a spread copy of the server's took 0.6 µs.
    const server = env as ServerBindings | undefined;
    const bindings: Bindings = { incoming: server?.incoming, outgoing: server?.outgoing, [NOTES]: notes };
    const answered = (response: Response): Response => {
      let echoed = response;
      if (!notes.echoed) {
        // Under @hono/node-server the Node response's own header: writeHead() merges it into the route's
        // (c.header() would make Hono build a Headers object for every response, about 6 µs a request).
        const outgoing = bindings.outgoing;
        if (typeof outgoing?.setHeader !== 'function') echoed = withRequestId(response, notes.requestId);
        else if (!outgoing.headersSent) outgoing.setHeader('x-request-id', notes.requestId);
      }
      const write = () => writeLine(hono, request, bindings, echoed, notes, startedAt, metrics);
      if (notes.held) notes.write = write;
      else write();
      return echoed;
    };
    const response = hono.fetch(request, bindings);
    return isPromiseLike(response) ? response.then(answered) : answered(response);
  };
}
