import { type AgentMeta, createId, createSecretId, NotFoundError, ValidationError } from '@switchboard/core';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { expireOverdue } from '../engine/approvals.js';
import type { TurnEvent } from '../engine/events.js';
import type { ApprovalResolution, CancelRequest, TurnRequest, TurnResult } from '../engine/turn-engine.js';
import { isPromiseLike } from '../promise-like.js';
import type { SessionStore } from '../stores/session-store.js';
import { isFinished, pendingApprovals, publicApproval, publicTurn } from '../turns/turn-record.js';
import { streamTurn } from './event-stream.js';
import { errorResponse, handleError, parseJsonBody, parseOrThrow } from './http-errors.js';
import { buildOpenApiDocument } from './openapi.js';
import {
  ApprovalRequestSchema,
  chatRequestSchema,
  IdempotencyKeySchema,
  SessionIdSchema,
  TurnIdSchema,
} from './schemas.js';

/** What the HTTP layer needs from the App. */
export interface ServerBackend {
  name: string;
  agents: readonly AgentMeta[];
  sessions: SessionStore;
  /** Runs a turn: its result at once when no step had to wait. */
  chat(request: TurnRequest): TurnResult | Promise<TurnResult>;
  /** Resolves an approval; the turn continues when it was the last one pending. */
  resolveApproval(resolution: ApprovalResolution): Promise<TurnResult>;
  /** Stops a running or paused turn. */
  cancelTurn(request: CancelRequest): Promise<TurnResult>;
  /** Derives the session id of a first message sent with an `Idempotency-Key` and no session id. */
  sessionIdForKey(idempotencyKey: string): string;
  deleteSession(sessionId: string): Promise<boolean>;
  /** Throws when the app cannot serve (a store is down, the app is closing). */
  checkReady(): Promise<void>;
  /** True once `close()` was called: new turns are refused. */
  isClosing(): boolean;
  log(error: unknown): void;
}

/** HTTP limits. */
export interface ServerLimits {
  /** Longest accepted chat message in characters (default 16 000). */
  maxMessageLength?: number;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}

/** Builds the Hono app serving the Switchboard HTTP API. */
export function createRoutes(
  backend: ServerBackend,
  {
    maxMessageLength = 16_000,
    maxBodyBytes = 1_048_576,
    exposeErrorDetails = false,
  }: ServerLimits & { exposeErrorDetails?: boolean } = {},
) {
  const ChatRequest = chatRequestSchema(maxMessageLength);
  const openApi = buildOpenApiDocument({ title: backend.name, chatRequest: ChatRequest });
  const agentsBody = { agents: backend.agents };
  const app = new Hono();

  app.onError((error, c) => handleError(error, c, backend.log, exposeErrorDetails));
  app.notFound((c) => errorResponse(c, 404, 'not_found', `No route for ${c.req.method} ${c.req.path}`));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await backend.checkReady();
      return c.json({ status: 'ready' });
    } catch (error) {
      // The store's own text names its host and port: only with exposeErrorDetails.
      const reason =
        exposeErrorDetails && error instanceof Error
          ? error.message
          : 'A store is unreachable or the server is shutting down';
      return errorResponse(c, 503, 'not_ready', reason);
    }
  });
  app.get('/openapi.json', (c) => c.json(openApi));
  app.get('/v1/agents', (c) => c.json(agentsBody));

  const limitBody = bodyLimit({
    maxSize: maxBodyBytes,
    onError: (c) => errorResponse(c, 413, 'payload_too_large', `Request body exceeds ${maxBodyBytes} bytes`),
  });
  const wantsStream = (c: Context, stream: boolean | undefined) =>
    stream ?? (c.req.header('accept') ?? '').includes('text/event-stream');
  const chat = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
    const body = parseOrThrow(ChatRequest, parseJsonBody(await c.req.text()), 'chat request');
    const keyHeader = c.req.header('idempotency-key');
    const idempotencyKey =
      keyHeader === undefined
        ? undefined
        : parseOrThrow(IdempotencyKeySchema, keyHeader, 'Idempotency-Key header');
    const request: TurnRequest = {
      sessionId:
        body.sessionId ?? (idempotencyKey ? backend.sessionIdForKey(idempotencyKey) : createSecretId('ses')),
      message: body.message,
      userId: body.userId,
      metadata: body.metadata,
      requestId: c.req.header('x-request-id') ?? createId('req'),
    };
    if (idempotencyKey) request.idempotencyKey = idempotencyKey;
    if (body.concurrency) request.concurrency = body.concurrency;
    if (!wantsStream(c, body.stream)) {
      const result = backend.chat(request);
      return c.json(isPromiseLike(result) ? await result : result);
    }
    return streamTurn(c, (onEvent: (event: TurnEvent) => void) => backend.chat({ ...request, onEvent }));
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
      requestId: c.req.header('x-request-id') ?? createId('req'),
    };
    if (body.comment !== undefined) resolution.comment = body.comment;
    if (body.userId !== undefined) resolution.userId = body.userId;
    if (!wantsStream(c, body.stream)) return c.json(await backend.resolveApproval(resolution));
    return streamTurn(c, (onEvent) => backend.resolveApproval({ ...resolution, onEvent }));
  };
  // One handler, not a middleware chain: Hono runs a route with a single handler without composing.
  const limited =
    (handler: (c: Context) => Promise<Response>) =>
    async (c: Context): Promise<Response> => {
      const declared = c.req.header('content-length');
      if (declared === undefined) {
        // No declared length (a chunked body): Hono's streaming limiter counts the bytes as they arrive.
        const tooLarge = await limitBody(c, async () => {
          c.res = await handler(c);
        });
        return tooLarge ?? c.res;
      }
      if (Number(declared) > maxBodyBytes) {
        return errorResponse(c, 413, 'payload_too_large', `Request body exceeds ${maxBodyBytes} bytes`);
      }
      return handler(c);
    };
  app.post('/v1/chat', limited(chat));
  app.post('/v1/sessions/:id/approvals/:approvalId', limited(resolveApproval));
  const cancel = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const turnId = parseOrThrow(TurnIdSchema, c.req.param('turnId'), 'turn id');
    // Read whatever came (chunked bodies declare no length): a body means the client meant something else.
    if ((await c.req.text()).length > 0) throw new ValidationError({ message: 'A cancel takes no body' });
    return c.json(
      await backend.cancelTurn({
        sessionId,
        turnId,
        requestId: c.req.header('x-request-id') ?? createId('req'),
      }),
    );
  };
  app.post('/v1/sessions/:id/turns/:turnId/cancel', limited(cancel));

  app.get('/v1/sessions/:id', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const [messages, turns] = await Promise.all([
      backend.sessions.read(sessionId),
      backend.sessions.listTurns(sessionId),
    ]);
    if (messages.length === 0) throw new NotFoundError({ resource: 'Session', id: sessionId });
    const last = turns[turns.length - 1];
    // An approval past its expiry is shown as expired, though the turn records it only when it next moves.
    if (last) expireOverdue(last.approvals);
    const body: Record<string, unknown> = {
      sessionId,
      messages,
      turns: turns.map(publicTurn),
      pendingApprovals: last ? pendingApprovals(last).map(publicApproval) : [],
    };
    if (last && !isFinished(last.status)) body.activeTurn = { turnId: last.turnId, status: last.status };
    return c.json(body);
  });

  app.delete('/v1/sessions/:id', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    if (!(await backend.deleteSession(sessionId)))
      throw new NotFoundError({ resource: 'Session', id: sessionId });
    return c.body(null, 204);
  });

  return app;
}
