import { type AgentMeta, createId, createSecretId, NotFoundError } from '@switchboard/core';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { TurnEvent } from '../engine/events.js';
import type { TurnRequest, TurnResult } from '../engine/turn-engine.js';
import { isPromiseLike } from '../promise-like.js';
import type { SessionStore } from '../stores/session-store.js';
import { streamTurn } from './event-stream.js';
import { errorResponse, handleError, parseJsonBody, parseOrThrow } from './http-errors.js';
import { buildOpenApiDocument } from './openapi.js';
import { chatRequestSchema, SessionIdSchema } from './schemas.js';

/** What the HTTP layer needs from the App. */
export interface ServerBackend {
  name: string;
  agents: readonly AgentMeta[];
  sessions: SessionStore;
  /** Runs a turn: its result at once when no step had to wait. */
  chat(request: TurnRequest): TurnResult | Promise<TurnResult>;
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
  { maxMessageLength = 16_000, maxBodyBytes = 1_048_576 }: ServerLimits = {},
) {
  const ChatRequest = chatRequestSchema(maxMessageLength);
  const openApi = buildOpenApiDocument({ title: backend.name, chatRequest: ChatRequest });
  const agentsBody = { agents: backend.agents };
  const app = new Hono();

  app.onError((error, c) => handleError(error, c, backend.log));
  app.notFound((c) => errorResponse(c, 404, 'not_found', `No route for ${c.req.method} ${c.req.path}`));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await backend.checkReady();
      return c.json({ status: 'ready' });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return errorResponse(c, 503, 'not_ready', reason);
    }
  });
  app.get('/openapi.json', (c) => c.json(openApi));
  app.get('/v1/agents', (c) => c.json(agentsBody));

  const limitBody = bodyLimit({
    maxSize: maxBodyBytes,
    onError: (c) => errorResponse(c, 413, 'payload_too_large', `Request body exceeds ${maxBodyBytes} bytes`),
  });
  const chat = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) return errorResponse(c, 503, 'shutting_down', 'The server is shutting down');
    const body = parseOrThrow(ChatRequest, parseJsonBody(await c.req.text()), 'chat request');
    const request: TurnRequest = {
      sessionId: body.sessionId ?? createSecretId('ses'),
      message: body.message,
      userId: body.userId,
      metadata: body.metadata,
      requestId: c.req.header('x-request-id') ?? createId('req'),
    };
    const wantsStream = body.stream ?? (c.req.header('accept') ?? '').includes('text/event-stream');
    if (!wantsStream) {
      const result = backend.chat(request);
      return c.json(isPromiseLike(result) ? await result : result);
    }
    return streamTurn(c, (onEvent: (event: TurnEvent) => void) => backend.chat({ ...request, onEvent }));
  };
  // One handler, not a middleware chain: Hono runs a route with a single handler without composing.
  app.post('/v1/chat', async (c) => {
    const declared = c.req.header('content-length');
    if (declared === undefined) {
      // No declared length (a chunked body): Hono's streaming limiter counts the bytes as they arrive.
      const tooLarge = await limitBody(c, async () => {
        c.res = await chat(c);
      });
      return tooLarge ?? c.res;
    }
    if (Number(declared) > maxBodyBytes) {
      return errorResponse(c, 413, 'payload_too_large', `Request body exceeds ${maxBodyBytes} bytes`);
    }
    return chat(c);
  });

  app.get('/v1/sessions/:id', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const [messages, turns] = await Promise.all([
      backend.sessions.read(sessionId),
      backend.sessions.listTurns(sessionId),
    ]);
    if (messages.length === 0) throw new NotFoundError({ resource: 'Session', id: sessionId });
    return c.json({ sessionId, messages, turns });
  });

  app.delete('/v1/sessions/:id', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    if (!(await backend.deleteSession(sessionId)))
      throw new NotFoundError({ resource: 'Session', id: sessionId });
    return c.body(null, 204);
  });

  return app;
}
