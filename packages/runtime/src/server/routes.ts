import {
  CallDepthExceededError,
  ConfigurationError,
  createSecretId,
  NotFoundError,
  ValidationError,
} from '@switchboard/core';
import { type Context, Hono } from 'hono';
import type { A2aOptions } from '../a2a/a2a-options.js';
import { checkSessionOwner, requireScope, withAccessChecks } from '../backend/access-checks.js';
import type { ApproversPolicy } from '../backend/approvers.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import type { ConfigAdmin } from '../config/config-admin.js';
import type { TurnEvent } from '../engine/events.js';
import type { ApprovalResolution, TurnRequest } from '../engine/turn-engine.js';
import type { HttpMetrics } from '../metrics/http-metrics.js';
import { type AppMetrics, mountMetrics } from '../metrics/prometheus-metrics.js';
import { isPromiseLike } from '../promise-like.js';
import type { RateLimiter } from '../stores/rate-limiter.js';
import { mountA2a } from './a2a-mount.js';
import { accessControl, principalOf, type RateLimitOptions } from './access.js';
import { type AllowedMethods, allowedMethods } from './allowed-methods.js';
import { cancelQueuedTurn, mountTurnStatus, queueTurn } from './background-routes.js';
import { bodyLimited } from './body-limits.js';
import { mountConfigRoutes } from './config-routes.js';
import { type ConsoleOptions, mountConsole } from './console-ui.js';
import { type CorsOptions, corsMiddleware } from './cors.js';
import { type DocsOptions, mountDocs } from './docs-ui.js';
import { streamTurn } from './event-stream.js';
import { errorResponse, handleError, parseJsonBody, parseOrThrow } from './http-errors.js';
import { type McpOptions, mountMcp } from './mcp-mount.js';
import { mountOpenAiRoutes } from './openai-routes.js';
import { buildOpenApiDocument } from './openapi.js';
import { protocolErrorShapes } from './protocol-error-shapes.js';
import {
  clientClosedResponse,
  isClientClosed,
  jsonAnswer,
  loggedFetch,
  noteRequest,
  noteRoute,
  requestIdOf,
} from './request-log.js';
import { mountSchedules, scheduleRequestSchema } from './schedule-routes.js';
import {
  ApprovalRequestSchema,
  chatRequestSchema,
  IdempotencyKeySchema,
  SessionIdSchema,
  TurnIdSchema,
  UserIdSchema,
} from './schemas.js';
import { mountSessionReads } from './session-read-routes.js';
import { mountTurnEvents } from './turn-event-routes.js';
import { mountUsage, type UsageBackend } from './usage-routes.js';

/** What the HTTP layer needs from the App: the protocol-neutral backend, plus rate limits, CORS and metrics. */
export interface HttpBackend extends ServerBackend {
  rateLimit?: RateLimitOptions;
  rateLimiter: RateLimiter;
  /** Cross-origin access for browsers (off without it). */
  cors?: CorsOptions;
  /** The app's metrics, served in the Prometheus text format (off without it). */
  metrics?: AppMetrics;
  /** Where each request's duration is recorded (off without it). */
  httpMetrics?: HttpMetrics;
  /** Who may decide approvals, with auth (see {@link ApproversPolicy}). */
  approvers?: ApproversPolicy;
  /** Spending against the budgets, for `GET /v1/usage` (none: the app has no budgets). */
  usage?: UsageBackend['usage'];
  /** The live configuration, served at `/v1/config` (off without it). */
  config?: ConfigAdmin;
}

/** HTTP limits. */
export interface ServerLimits {
  /** Longest accepted chat message in characters (default 16 000). */
  maxMessageLength?: number;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * How deep Switchboard servers may call each other through `remoteAgent`
   * (default 3): a chat request whose `x-switchboard-depth` header is above
   * it is refused with 400 `nesting_depth_exceeded`.
   */
  maxCallDepth?: number;
}

/** The `x-switchboard-depth` of a request (0 without it), refused past `maxCallDepth`. */
function callDepthOf(c: Context, maxCallDepth: number): number {
  const header = c.req.header('x-switchboard-depth');
  if (header === undefined) return 0;
  if (!/^\d{1,3}$/.test(header.trim()))
    throw new ValidationError({ message: 'x-switchboard-depth must be a whole number' });
  const depth = Number(header.trim());
  if (depth > maxCallDepth) throw new CallDepthExceededError({ depth, maxDepth: maxCallDepth });
  return depth;
}

/** The paths of the JSON-RPC endpoints (A2A, MCP) the options mount. */
/** The OpenAI-compatible routes, whose errors take OpenAI's shape (see `protocolErrorShapes`). */
const OPENAI_PATHS = [
  '/v1/chat/completions',
  '/v1/models',
  '/v1/models/*',
  '/v1/responses',
  '/v1/responses/*',
];

function jsonRpcPathsOf(a2a: boolean | A2aOptions, mcp: boolean | McpOptions): string[] {
  const paths: string[] = [];
  if (a2a) paths.push((a2a === true ? undefined : a2a.path) ?? '/a2a');
  if (mcp) paths.push((mcp === true ? undefined : mcp.path) ?? '/mcp');
  return paths;
}

/** Serves a request with the Switchboard HTTP API (`env`: the server's bindings, e.g. `@hono/node-server`'s). */
export type RoutesFetch = (request: Request, env?: object) => Response | Promise<Response>;

/** Builds the Hono app serving the Switchboard HTTP API, behind its request log. */
export function createRoutes(
  unchecked: HttpBackend,
  {
    maxMessageLength = 16_000,
    maxBodyBytes = 1_048_576,
    maxCallDepth = 3,
    exposeErrorDetails = false,
    docs = false,
    console: consoleOption = false,
    a2a = false,
    mcp = false,
  }: ServerLimits & {
    exposeErrorDetails?: boolean;
    docs?: boolean | DocsOptions;
    console?: boolean | ConsoleOptions;
    a2a?: boolean | A2aOptions;
    mcp?: boolean | McpOptions;
  } = {},
): RoutesFetch {
  // Every surface below goes through the same checks of what the caller's key may do.
  const backend = unchecked.auth ? withAccessChecks(unchecked, unchecked.approvers) : unchecked;
  const ChatRequest = chatRequestSchema(maxMessageLength);
  // Built on its first request, not at mount: it is most of an app's start-up (measured: 8 of 9 ms a mount,
  // in zod's JSON Schema conversion), which every app a test suite or a serverless function starts paid.
  let openApi: ReturnType<typeof buildOpenApiDocument> | undefined;
  const openApiDocument = () =>
    (openApi ??= buildOpenApiDocument({
      title: backend.name,
      chatRequest: ChatRequest,
      scheduleRequest: scheduleRequestSchema(maxMessageLength),
      agents: backend.agents,
    }));
  const agentsBody = backend.graph
    ? { agents: backend.agents, graph: backend.graph }
    : { agents: backend.agents };
  const app = new Hono();

  app.onError((error, c) =>
    // A client that went away is no server error: its request's line says 499, at info.
    isClientClosed(error, c)
      ? clientClosedResponse()
      : handleError(error, c, backend.log, exposeErrorDetails),
  );
  // Every answer is logged and carries x-request-id: the request log wraps the routes (see the end).
  // Only on the routes that answer in another protocol's shape: every other request skips a middleware layer.
  const shapes = protocolErrorShapes(jsonRpcPathsOf(a2a, mcp));
  for (const path of [...jsonRpcPathsOf(a2a, mcp), ...OPENAI_PATHS]) app.use(path, shapes);
  // CORS before auth, as preflights carry no key.
  if (backend.cors) app.use('*', corsMiddleware(backend.cors));
  // Before auth: the console's page and files hold no data; the API calls it makes carry the key.
  const consoleRoutes = consoleOption
    ? mountConsole(app, { title: backend.name, ...(consoleOption === true ? {} : consoleOption) })
    : {};
  if (backend.auth) app.use('*', accessControl(backend.auth, backend));
  // Set once every route is known (below): a known path asked with another method gets 405 with `Allow`.
  let allowed: AllowedMethods = () => undefined;
  app.notFound((c) => {
    const { method, path } = c.req;
    const found = allowed(path);
    // HEAD is answered as GET, by Hono; a route that asked for the 404 itself keeps it.
    if (found === undefined || method === 'HEAD' || found.methods.includes(method))
      return errorResponse(c, 404, 'not_found', `No route for ${method} ${path}`);
    noteRoute(c, found.route, found.params);
    const allow = found.methods.join(', ');
    c.header('Allow', allow);
    return errorResponse(c, 405, 'method_not_allowed', `${method} is not allowed here; use ${allow}`);
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      const warnings = await backend.checkReady();
      return c.json(warnings.length > 0 ? { status: 'ready', warnings } : { status: 'ready' });
    } catch (error) {
      // The store's own text names its host and port: only with exposeErrorDetails. A setting's does not.
      const reason =
        (exposeErrorDetails || ConfigurationError.isInstance(error)) && error instanceof Error
          ? error.message
          : 'A store is unreachable or refuses writes, or the server is shutting down';
      return errorResponse(c, 503, 'not_ready', reason);
    }
  });
  app.get('/openapi.json', (c) => c.json(openApiDocument()));
  const docsRoutes = docs ? mountDocs(app, { title: backend.name, ...(docs === true ? {} : docs) }) : {};
  const metricsRoutes = backend.metrics ? mountMetrics(app, backend.metrics) : {};
  const { agentStats } = backend;
  app.get('/v1/agents', async (c) =>
    agentStats
      ? c.json({ ...agentsBody, stats: await agentStats(principalOf(c)?.tenantId) })
      : c.json(agentsBody),
  );

  const wantsStream = (c: Context, stream: boolean | undefined) =>
    stream ?? (c.req.header('accept') ?? '').includes('text/event-stream');
  /** Who the request acts for: the tenant and key from auth, the user (the key's own, or as sent). */
  const callerOf = (c: Context, userId?: string) => {
    const principal = principalOf(c);
    const caller: Caller = { requestId: requestIdOf(c) };
    const depth = callDepthOf(c, maxCallDepth);
    if (depth > 0) caller.depth = depth;
    if (principal) {
      caller.tenantId = principal.tenantId;
      caller.principal = principal;
      if (principal.keyName !== undefined) caller.keyName = principal.keyName;
    }
    // A key that names its user acts as that user, whatever the body says; user memory is per tenant either way.
    const user = principal?.userId ?? userId;
    if (user !== undefined) caller.userId = user;
    return caller;
  };
  const chat = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
    const body = parseOrThrow(ChatRequest, parseJsonBody(await c.req.text()), 'chat request');
    const keyHeader = c.req.header('idempotency-key');
    const idempotencyKey =
      keyHeader === undefined
        ? undefined
        : parseOrThrow(IdempotencyKeySchema, keyHeader, 'Idempotency-Key header');
    const caller = callerOf(c, body.userId);
    const request: TurnRequest = {
      sessionId:
        body.sessionId ??
        (idempotencyKey ? backend.sessionIdForKey(idempotencyKey, caller.tenantId) : createSecretId('ses')),
      message: body.message,
      metadata: body.metadata,
      entryPoint: '/v1/chat',
      ...caller,
    };
    if (idempotencyKey) request.idempotencyKey = idempotencyKey;
    if (body.concurrency) request.concurrency = body.concurrency;
    noteRequest(c, { sessionId: request.sessionId });
    if (body.background || body.callbackUrl !== undefined) {
      return queueTurn(c, backend, { ...request, principal: caller.principal }, body);
    }
    const watch = body.onDisconnect === 'cancel' ? cancelOnDisconnect(c, request) : undefined;
    if (!wantsStream(c, body.stream)) {
      const result = backend.chat(watch ? { ...request, onEvent: watch } : request);
      return jsonAnswer(c, noteRequest(c, isPromiseLike(result) ? await result : result));
    }
    return streamTurn(
      c,
      (onEvent: (event: TurnEvent) => void) =>
        backend.chat({
          ...request,
          onEvent: watch
            ? (event) => {
                watch(event);
                onEvent(event);
              }
            : onEvent,
          streamEarlierTurn: true,
        }),
      { rejoinable: backend.events !== undefined },
    );
  };
  /**
   * `onDisconnect: 'cancel'`: a listener that learns the turn's id from its
   * events, and cancels the turn when the client goes away before its end.
   */
  const cancelOnDisconnect = (c: Context, request: TurnRequest) => {
    let turnId: string | undefined;
    let ended = false;
    c.req.raw.signal.addEventListener(
      'abort',
      () => {
        if (turnId === undefined || ended) return;
        // The turn may end meanwhile (409 turn_not_active): nothing is left to cancel then.
        backend.cancelTurn({ ...request, turnId }).catch(() => {});
      },
      { once: true },
    );
    return (event: TurnEvent) => {
      if (event.sessionId === request.sessionId) turnId = event.turnId;
      if (event.type === 'turn-end' && event.endOfDialog) ended = true;
    };
  };
  const resolveApproval = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const approvalId = parseOrThrow(TurnIdSchema, c.req.param('approvalId'), 'approval id');
    const body = parseOrThrow(ApprovalRequestSchema, parseJsonBody(await c.req.text()), 'approval decision');
    const resolution: ApprovalResolution = {
      sessionId,
      approvalId,
      decision: body.decision,
      ...callerOf(c, body.userId),
    };
    if (body.comment !== undefined) resolution.comment = body.comment;
    if (!wantsStream(c, body.stream))
      return c.json(noteRequest(c, await backend.resolveApproval(resolution)));
    return streamTurn(c, (onEvent) => backend.resolveApproval({ ...resolution, onEvent }));
  };
  const limited = bodyLimited(maxBodyBytes);
  app.post('/v1/chat', limited(chat));
  app.post('/v1/sessions/:id/approvals/:approvalId', limited(resolveApproval));
  const cancel = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const turnId = parseOrThrow(TurnIdSchema, c.req.param('turnId'), 'turn id');
    // Read whatever came (chunked bodies declare no length): a body means the client meant something else.
    if ((await c.req.text()).length > 0) throw new ValidationError({ message: 'A cancel takes no body' });
    const caller = callerOf(c);
    const queued = await cancelQueuedTurn(backend, sessionId, turnId, caller.principal);
    if (queued) return c.json(noteRequest(c, queued));
    return c.json(noteRequest(c, await backend.cancelTurn({ sessionId, turnId, ...caller })));
  };
  app.post('/v1/sessions/:id/turns/:turnId/cancel', limited(cancel, { json: false }));

  mountSessionReads(app, (tenantId, userId) => backend.sessionsOf(tenantId, userId));
  mountTurnEvents(app, backend);
  mountTurnStatus(app, backend);
  mountUsage(app, {
    usage: unchecked.usage,
    sessionsOf: (tenantId, userId) => backend.sessionsOf(tenantId, userId),
  });

  app.delete('/v1/sessions/:id', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const principal = principalOf(c);
    requireScope(principal, 'sessions:delete');
    await checkSessionOwner(backend.sessionsOf(principal?.tenantId), sessionId, principal);
    if (!(await backend.deleteSession(sessionId, principal?.tenantId)))
      throw new NotFoundError({ resource: 'Session', id: sessionId });
    return c.body(null, 204);
  });

  mountOpenAiRoutes(app, backend, { limited, maxMessageLength, exposeErrorDetails, callerOf });
  mountSchedules(app, backend, { limited, maxMessageLength, callerOf });
  const a2aRoutes = a2a
    ? mountA2a(app, backend, a2a === true ? {} : a2a, { limited, maxMessageLength, callerOf })
    : {};

  const mcpRoutes = mcp
    ? mountMcp(app, backend, mcp === true ? {} : mcp, {
        limited,
        maxMessageLength,
        callerOf,
        cors: backend.cors,
      })
    : {};

  app.delete('/v1/users/:userId', async (c) => {
    const userId = parseOrThrow(UserIdSchema, c.req.param('userId'), 'user id');
    const principal = principalOf(c);
    requireScope(principal, 'sessions:delete');
    // A key bound to one user may remove that user's data only; any other user is not there for it.
    if (principal?.userId !== undefined && principal.userId !== userId) {
      throw new NotFoundError({ resource: 'User', id: userId });
    }
    return c.json(await backend.deleteUser(userId, principal?.tenantId));
  });

  const configRoutes = backend.config ? mountConfigRoutes(app, backend.config, limited) : {};

  // Last: only methods no route above answered reach these.
  allowed = allowedMethods({
    '/v1/chat': ['POST'],
    '/v1/chat/completions': ['POST'],
    '/v1/models': ['GET'],
    '/v1/responses': ['POST'],
    '/v1/responses/:id': ['GET'],
    '/v1/sessions': ['GET'],
    '/v1/sessions/:id': ['GET', 'DELETE'],
    '/v1/sessions/:id/approvals/:approvalId': ['POST'],
    '/v1/sessions/:id/turns/:turnId/cancel': ['POST'],
    '/v1/agents': ['GET'],
    '/v1/users/:userId': ['DELETE'],
    '/v1/usage': ['GET'],
    '/healthz': ['GET'],
    '/readyz': ['GET'],
    '/openapi.json': ['GET'],
    ...docsRoutes,
    ...consoleRoutes,
    ...metricsRoutes,
    ...a2aRoutes,
    ...mcpRoutes,
    ...configRoutes,
  });
  return loggedFetch(app, backend.logger, backend.httpMetrics);
}
