import { createSecretId, type MessageItem, ValidationError } from '@switchboard/core';
import type { Context } from 'hono';
import { checkSessionOwner, requireScope } from '../backend/access-checks.js';
import { jsonBoundsProblem, MAX_METADATA_BYTES, MAX_METADATA_DEPTH } from '../backend/json-bounds.js';
import type { Principal } from '../backend/principal.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { BackgroundUnavailableError } from '../background/background-errors.js';
import type { TurnRequest, TurnResult } from '../engine/turn-engine.js';
import { isPromiseLike } from '../promise-like.js';
import { publicTurn, type TurnRecord, type TurnStatus } from '../turns/turn-record.js';
import { principalOf } from './access.js';
import { parseJsonBody, parseOrThrow } from './http-errors.js';
import { switchboardExtension } from './openai-completion.js';
import { openAiErrorBodyFor, openAiErrorResponse } from './openai-errors.js';
import { rememberHistory, sessionOfHistory } from './openai-history.js';
import { parseInput, type ResponseParts, responseIds, responseObject, turnOfId } from './openai-responses.js';
import { ResponseCreateRequestSchema } from './openai-responses-schemas.js';
import { streamResponse } from './openai-responses-stream.js';
import { IdempotencyKeySchema, SessionIdSchema } from './schemas.js';

/** What the Responses handlers share with the chat-completions routes. */
export interface ResponsesRouteOptions {
  /** The one model: the orchestrator's name. */
  model: string;
  maxMessageLength: number;
  exposeErrorDetails: boolean;
  callerOf: (c: Context, userId?: string) => Caller;
  /** The 404 of an unknown model. */
  unknownModel: (c: Context, name: string) => Response;
}

const notFound = (c: Context, message: string, param: string | null = null) =>
  openAiErrorResponse(c, 404, { code: 'not_found', message, param });

/** The stored answer of a turn: the last assistant message after its user message. */
function answerOf(messages: readonly MessageItem[], turn: TurnRecord): { text: string; user?: MessageItem } {
  const at = messages.findIndex((message) => message.id === turn.userMessageId);
  let text = '';
  for (let index = at + 1; at >= 0 && index < messages.length && messages[index]!.role !== 'user'; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant') text = message.content;
  }
  return at >= 0 ? { text, user: messages[at] } : { text };
}

/** The string pairs of stored metadata a client sent (`instructions` is a response field of its own). */
function clientMetadata(stored: Record<string, unknown> | undefined): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(stored ?? {}))
    if (typeof value === 'string' && key !== 'instructions' && key !== 'traceName') metadata[key] = value;
  return metadata;
}

/**
 * The handlers of `POST /v1/responses` and `GET /v1/responses/:id`. The
 * session of a request is, in order: the one of `previous_response_id`
 * (404 when this caller cannot see it), the `x-session-id` header, the
 * `Idempotency-Key`'s (a retry answers the first response again), the one
 * of an `item_reference` to an earlier answer, the one whose conversation
 * the `input` list resends (see `sessionOfHistory`), else a new one.
 */
export function responsesHandlers(
  backend: ServerBackend,
  { model, maxMessageLength, exposeErrorDetails, callerOf, unknownModel }: ResponsesRouteOptions,
) {
  const create = async (c: Context): Promise<Response> => {
    if (backend.isClosing()) {
      return openAiErrorResponse(c, 503, { code: 'shutting_down', message: 'The server is shutting down' });
    }
    const body = parseOrThrow(
      ResponseCreateRequestSchema,
      parseJsonBody(await c.req.text()),
      'response request',
    );
    if (body.model !== model) return unknownModel(c, body.model);
    const input = parseInput(body.input, maxMessageLength);
    const instructions = body.instructions ?? null;
    if (instructions !== null && instructions.length > maxMessageLength) {
      throw new ValidationError({
        message: 'Invalid response request',
        issues: [`instructions: must be at most ${maxMessageLength} characters`],
      });
    }
    const caller = callerOf(c, body.user || undefined);
    const store = body.store !== false;
    const previousId = body.previous_response_id ?? null;
    const sessionHeader = c.req.header('x-session-id');
    const keyHeader = c.req.header('idempotency-key');
    const idempotencyKey =
      keyHeader === undefined
        ? undefined
        : parseOrThrow(IdempotencyKeySchema, keyHeader, 'Idempotency-Key header');
    let sessionId: string;
    let remembers = false;
    let forgets = false;
    if (previousId !== null) {
      const previous = turnOfId(previousId, 'resp_');
      const turns = previous
        ? await backend.sessionsOf(caller.tenantId, caller.principal?.userId).listTurns(previous.sessionId)
        : [];
      if (!previous || !turns.some((turn) => turn.turnId === previous.turnId))
        return notFound(c, `Previous response with id '${previousId}' not found.`, 'previous_response_id');
      if (!store) {
        throw new ValidationError({
          message: 'Invalid response request',
          issues: ['store: false cannot continue a stored response: its conversation is kept in its session'],
        });
      }
      sessionId = previous.sessionId;
    } else if (sessionHeader !== undefined) {
      sessionId = parseOrThrow(SessionIdSchema, sessionHeader, 'x-session-id header');
    } else if (idempotencyKey) {
      sessionId = backend.sessionIdForKey(idempotencyKey, caller.tenantId);
    } else if (!store) {
      sessionId = createSecretId('ses');
      forgets = true;
    } else {
      sessionId =
        input.referencedSession ??
        (await sessionOfHistory(backend, caller, input.earlier)) ??
        createSecretId('ses');
      remembers = true;
    }
    const { trace_name: traceName, ...metadata } = body.metadata ?? {};
    const turnMetadata: Record<string, unknown> = { ...metadata };
    if (traceName !== undefined) turnMetadata.traceName = traceName;
    if (instructions !== null) turnMetadata.instructions = instructions;
    // Stored with the message: the bound of `/v1/chat`'s metadata holds for instructions and metadata together.
    const problem = jsonBoundsProblem(
      turnMetadata,
      { maxDepth: MAX_METADATA_DEPTH, maxBytes: MAX_METADATA_BYTES },
      'instructions and metadata together',
    );
    if (problem)
      throw new ValidationError({
        message: 'Invalid response request',
        issues: [`instructions: ${problem.message}`],
      });
    const request: TurnRequest = {
      sessionId,
      message: input.message,
      entryPoint: '/v1/responses',
      ...caller,
    };
    if (Object.keys(turnMetadata).length > 0) request.metadata = turnMetadata;
    if (idempotencyKey) request.idempotencyKey = idempotencyKey;
    c.header('x-session-id', sessionId);

    const createdAt = Math.floor(Date.now() / 1000);
    const partsOf = (
      turn: { sessionId: string; turnId: string },
      result?: TurnResult,
      text?: string,
    ): ResponseParts => ({
      ...responseIds(turn.sessionId, turn.turnId),
      model,
      createdAt,
      status: result?.status ?? 'running',
      text: text ?? result?.reply ?? '',
      instructions,
      previousResponseId: previousId,
      store,
      metadata: body.metadata ?? {},
      usage: result?.usage,
      switchboard: result ? switchboardExtension(result) : { ...turn, status: 'running', steps: [] },
    });
    const afterAnswer = async (text: string, result: TurnResult) => {
      if (remembers) {
        const conversation = [...input.earlier, { role: 'user' as const, text: input.message }];
        await rememberHistory(backend, caller, [...conversation, { role: 'assistant', text }], sessionId);
      } else if (forgets && result.status !== 'awaiting_approval') {
        // Nothing kept: the session this request opened goes (a turn paused for approval keeps it until decided).
        await backend
          .deleteSession(sessionId, caller.tenantId)
          .catch((error: unknown) => backend.log(error, c));
      }
    };
    if (body.background) return queueResponse(c, request, body.stream === true, store, partsOf);
    if (!body.stream) {
      const pending = backend.chat(request);
      const result = isPromiseLike(pending) ? await pending : pending;
      await afterAnswer(result.reply, result);
      return c.json(responseObject(partsOf(result, result)));
    }
    return streamResponse(c, (onEvent) => backend.chat({ ...request, onEvent }), {
      partsOf,
      describeError: (error) => openAiErrorBodyFor(error, c, backend.log, exposeErrorDetails),
      onAnswer: afterAnswer,
    });
  };

  /** `background: true`: the turn is queued (as `POST /v1/chat` queues it) and answered `queued` at once. */
  const queueResponse = async (
    c: Context,
    { principal, ...request }: TurnRequest & { principal?: Principal },
    stream: boolean,
    store: boolean,
    partsOf: (turn: { sessionId: string; turnId: string }) => ResponseParts,
  ): Promise<Response> => {
    const issue = stream
      ? 'background: a background response is not streamed; read it with GET /v1/responses/{id}'
      : store
        ? undefined
        : 'background: a background response is stored (store: false cannot be read back)';
    if (issue) throw new ValidationError({ message: 'Invalid response request', issues: [issue] });
    if (!backend.background) throw new BackgroundUnavailableError();
    requireScope(principal, 'chat');
    if (principal?.userId !== undefined) {
      await checkSessionOwner(backend.sessionsOf(principal.tenantId), request.sessionId, principal, {
        allowNew: true,
      });
    }
    const receipt = await backend.background.submit(request);
    return c.json(responseObject({ ...partsOf(receipt), background: true }, { queued: true }));
  };

  const retrieve = async (c: Context): Promise<Response> => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    const id = c.req.param('id') ?? '';
    const turn = turnOfId(id, 'resp_');
    const missing = () => notFound(c, `Response with id '${id}' not found.`);
    if (!turn) return missing();
    const sessions = backend.sessionsOf(principal?.tenantId, principal?.userId);
    const record = (await sessions.listTurns(turn.sessionId)).find(
      (candidate) => candidate.turnId === turn.turnId,
    );
    if (!record) return notRunYet(c, turn, principal, missing);
    const { text, user } = answerOf(await sessions.read(turn.sessionId), record);
    const stored = user?.metadata;
    const switchboard = switchboardExtension({
      ...publicTurn(record),
      sessionId: turn.sessionId,
      reply: text,
    });
    return c.json(
      responseObject({
        ...responseIds(turn.sessionId, turn.turnId),
        model,
        createdAt: Math.floor(Date.parse(record.startedAt) / 1000),
        status: record.status,
        text,
        instructions: typeof stored?.instructions === 'string' ? stored.instructions : null,
        previousResponseId: null,
        store: true,
        metadata: clientMetadata(stored),
        usage: record.usage,
        switchboard,
      }),
    );
  };
  /** A background response that has no turn yet: queued (or taken), or cancelled or failed before it ran. */
  const notRunYet = async (
    c: Context,
    turn: { sessionId: string; turnId: string },
    principal: Principal | undefined,
    missing: () => Response,
  ): Promise<Response> => {
    const view = await backend.background?.status(turn.sessionId, turn.turnId, {
      tenantId: principal?.tenantId,
      userId: principal?.userId,
    });
    if (!view) return missing();
    const parts: ResponseParts = {
      ...responseIds(turn.sessionId, turn.turnId),
      model,
      createdAt: Math.floor(Date.parse(view.queuedAt ?? new Date().toISOString()) / 1000),
      status: view.status === 'queued' ? 'running' : (view.status as TurnStatus),
      text: '',
      instructions: null,
      previousResponseId: null,
      store: true,
      metadata: {},
      usage: undefined,
      switchboard: { ...turn, status: view.status === 'queued' ? 'running' : view.status, steps: [] },
      background: true,
    };
    return c.json(
      responseObject(parts, { queued: view.status === 'queued', inProgress: view.status === 'running' }),
    );
  };
  return { create, retrieve };
}
