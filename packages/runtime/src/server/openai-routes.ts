import { createSecretId } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import type { TurnRequest } from '../engine/turn-engine.js';
import { isPromiseLike } from '../promise-like.js';
import type { LimitedHandler } from './body-limits.js';
import { handleError, parseJsonBody, parseOrThrow } from './http-errors.js';
import { chatCompletion, earlierTranscript, turnMessage } from './openai-completion.js';
import { asOpenAiErrorResponse, openAiErrorBodyFor, openAiErrorResponse } from './openai-errors.js';
import { rememberHistory, sessionOfHistory } from './openai-history.js';
import { responsesHandlers } from './openai-responses-routes.js';
import { ChatCompletionRequestSchema } from './openai-schemas.js';
import { streamCompletion } from './openai-stream.js';
import { clientClosedResponse, isClientClosed } from './request-log.js';
import { IdempotencyKeySchema, SessionIdSchema } from './schemas.js';

/** What {@link mountOpenAiRoutes} shares with the other routes. */
export interface OpenAiRouteOptions {
  /** The body limit of the other POST routes (413 before the handler runs). */
  limited: LimitedHandler;
  /** Longest accepted turn message (the last user message) in characters. */
  maxMessageLength: number;
  exposeErrorDetails: boolean;
  /** Who a request acts for (tenant and key from auth, the user), as on the other routes. */
  callerOf: (c: Context, userId?: string) => Caller;
}

/**
 * Adds the OpenAI-compatible surface, so that any OpenAI client (SDKs, chat
 * UIs, eval tools) can talk to the app:
 *
 * - `GET /v1/models` (and `/v1/models/:model`): the app's orchestrator, as the one model.
 * - `POST /v1/chat/completions`: one turn. The last `user` message is the
 *   turn's message (the session keeps the history, so earlier messages are
 *   not replayed); the session comes from the `x-session-id` header, else
 *   `metadata.session_id`, else the `Idempotency-Key`, else the session
 *   whose conversation the earlier messages resend (see
 *   `sessionOfHistory`), else a new one, and is returned in the
 *   `x-session-id` response header; `user` is the turn's user id;
 *   `metadata.trace_name` and `metadata.tags` (comma-separated) name and
 *   tag the turn's trace;
 *   `Idempotency-Key` works as on `POST /v1/chat`. The turn rides along in
 *   the `switchboard` extension field (`FINISH_REASON_BY_STATUS` says how
 *   each turn state maps; `streamCompletion` what a stream sends).
 *
 * - `POST /v1/responses` and `GET /v1/responses/:id`: the Responses API
 *   (see `responsesHandlers`).
 *
 * Errors use OpenAI's shape (`{ error: { message, type, code, param } }`),
 * so OpenAI clients raise their usual error classes.
 *
 * @example
 * ```ts
 * const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
 * const completion = await client.chat.completions.create({
 *   model: 'support', // the orchestrator's name
 *   messages: [{ role: 'user', content: 'refund order 42' }],
 * });
 * ```
 */
export function mountOpenAiRoutes(
  app: Hono,
  backend: ServerBackend,
  { limited, maxMessageLength, exposeErrorDetails, callerOf }: OpenAiRouteOptions,
): void {
  const model = backend.orchestratorName ?? backend.name;
  const created = Math.floor(Date.now() / 1000);
  const listed = { id: model, object: 'model', created, owned_by: 'switchboard' };
  const models = { object: 'list', data: [listed] };
  const unknownModel = (c: Context, name: string) =>
    openAiErrorResponse(c, 404, {
      code: 'model_not_found',
      param: 'model',
      message: `The model '${name}' does not exist; GET /v1/models lists '${model}'`,
    });

  // Every error of these routes leaves in OpenAI's shape, also those the shared body limit answers.
  const openAiErrors =
    (handler: (c: Context) => Response | Promise<Response>) =>
    async (c: Context): Promise<Response> => {
      let response: Response;
      try {
        response = await handler(c);
      } catch (error) {
        if (isClientClosed(error, c)) return clientClosedResponse();
        response = handleError(error, c, backend.log, exposeErrorDetails);
      }
      const shaped = await asOpenAiErrorResponse(response);
      // The body limiter hands a chunked request's answer over through `c.res`, which Hono then sends.
      if (shaped !== response && c.finalized) c.res = shaped;
      return shaped;
    };

  const completions = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) {
      return openAiErrorResponse(c, 503, { code: 'shutting_down', message: 'The server is shutting down' });
    }
    const body = parseOrThrow(
      ChatCompletionRequestSchema,
      parseJsonBody(await c.req.text()),
      'chat completion request',
    );
    if (body.model !== model) return unknownModel(c, body.model);
    const message = turnMessage(body.messages, maxMessageLength);
    const caller = callerOf(c, body.user || undefined);
    const sessionHeader = c.req.header('x-session-id');
    const { session_id: sessionField, trace_name: traceName, ...metadata } = body.metadata ?? {};
    // OpenAI metadata is snake_case: `trace_name` names the turn's trace (`metadata.traceName` of /v1/chat).
    if (traceName !== undefined) (metadata as Record<string, unknown>).traceName = traceName;
    const keyHeader = c.req.header('idempotency-key');
    const idempotencyKey =
      keyHeader === undefined
        ? undefined
        : parseOrThrow(IdempotencyKeySchema, keyHeader, 'Idempotency-Key header');
    let sessionId: string;
    // Without a session named, a client that resends the conversation continues the session it had.
    let remember: ((answer: string) => Promise<void>) | undefined;
    if (sessionHeader !== undefined) {
      sessionId = parseOrThrow(SessionIdSchema, sessionHeader, 'x-session-id header');
    } else if (sessionField !== undefined) {
      sessionId = parseOrThrow(SessionIdSchema, sessionField, 'metadata.session_id');
    } else if (idempotencyKey) {
      sessionId = backend.sessionIdForKey(idempotencyKey, caller.tenantId);
    } else {
      const earlier = earlierTranscript(body.messages);
      const found = await sessionOfHistory(backend, caller, earlier);
      const id = found ?? createSecretId('ses');
      sessionId = id;
      remember = (answer) =>
        rememberHistory(
          backend,
          caller,
          [...earlier, { role: 'user', text: message }, { role: 'assistant', text: answer }],
          id,
        );
    }
    const request: TurnRequest = { sessionId, message, entryPoint: '/v1/chat/completions', ...caller };
    if (Object.keys(metadata).length > 0) request.metadata = metadata;
    if (idempotencyKey) request.idempotencyKey = idempotencyKey;
    c.header('x-session-id', sessionId);

    const header = { model, created: Math.floor(Date.now() / 1000) };
    if (!body.stream) {
      const pending = backend.chat(request);
      const result = isPromiseLike(pending) ? await pending : pending;
      await remember?.(result.reply);
      return c.json(chatCompletion(result, header));
    }
    return streamCompletion(c, (onEvent) => backend.chat({ ...request, onEvent }), {
      header,
      includeUsage: body.stream_options?.include_usage === true,
      describeError: (error) => openAiErrorBodyFor(error, c, backend.log, exposeErrorDetails),
      mode: c.req.header('x-switchboard-stream') === 'answer' ? 'answer' : 'live',
      ...(remember ? { onAnswer: remember } : {}),
    });
  };

  app.get('/v1/models', (c) => c.json(models));
  app.get('/v1/models/:model', (c) =>
    c.req.param('model') === model ? c.json(listed) : unknownModel(c, c.req.param('model')),
  );
  app.post('/v1/chat/completions', openAiErrors(limited(completions)));
  const responses = responsesHandlers(backend, {
    model,
    maxMessageLength,
    exposeErrorDetails,
    callerOf,
    unknownModel,
  });
  app.post('/v1/responses', openAiErrors(limited(responses.create)));
  app.get('/v1/responses/:id', openAiErrors(responses.retrieve));
}
