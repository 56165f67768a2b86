/**
 * The HTTP side of background turns: `POST /v1/chat` with `background: true`
 * (202), `GET /v1/sessions/:id/turns/:turnId` (any turn's status and
 * result), `GET /v1/background-turns` (the latest, for the console), and
 * cancelling a turn still queued.
 *
 * @module
 */
import { NotFoundError, ValidationError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { checkSessionOwner, requireScope } from '../backend/access-checks.js';
import type { Principal } from '../backend/principal.js';
import type { Authenticated, ServerBackend } from '../backend/server-backend.js';
import { BackgroundUnavailableError } from '../background/background-errors.js';
import type { TurnProgress } from '../background/background-turns.js';
import type { TurnRequest, TurnResult } from '../engine/turn-types.js';
import { TURN_STATUSES } from '../turns/turn-record.js';
import { principalOf } from './access.js';
import { parseOrThrow } from './http-errors.js';
import { SessionIdSchema, TurnIdSchema } from './schemas.js';
import { turnEventsPath } from './turn-event-routes.js';

/** What a `POST /v1/chat` body says of background turns. */
interface BackgroundAsk {
  background?: boolean;
  callbackUrl?: string;
  stream?: boolean;
  onDisconnect?: 'continue' | 'cancel';
}

/**
 * Queues a `POST /v1/chat` turn (`background: true`): the same access
 * checks as a turn run at once, then 202 with where to read it
 * (`Location`) and follow its events.
 */
export async function queueTurn(
  c: Context,
  backend: ServerBackend,
  { principal, ...request }: TurnRequest & Authenticated,
  ask: BackgroundAsk,
): Promise<Response> {
  if (!ask.background)
    throw new ValidationError({ message: 'callbackUrl is for background turns (background: true)' });
  if (ask.stream || ask.onDisconnect !== undefined) {
    throw new ValidationError({
      message:
        'A background turn answers at once: follow its events at the events path the answer names, not in this request (no stream, no onDisconnect)',
    });
  }
  const { background } = backend;
  if (!background) throw new BackgroundUnavailableError();
  requireScope(principal, 'chat');
  if (principal?.userId !== undefined) {
    await checkSessionOwner(backend.sessionsOf(principal.tenantId), request.sessionId, principal, {
      allowNew: true,
    });
  }
  const receipt = await background.submit(request, ask.callbackUrl);
  c.header('Location', turnPath(receipt.sessionId, receipt.turnId));
  return c.json({ ...receipt, events: turnEventsPath(receipt.sessionId, receipt.turnId) }, 202);
}

/** Cancels a background turn still queued (as the principal may); undefined when it is not one. */
export async function cancelQueuedTurn(
  backend: ServerBackend,
  sessionId: string,
  turnId: string,
  principal: Principal | undefined,
): Promise<TurnResult | undefined> {
  if (!backend.background) return undefined;
  requireScope(principal, 'chat');
  const cancelled = await backend.background.cancelQueued(sessionId, turnId, {
    tenantId: principal?.tenantId,
    userId: principal?.userId,
  });
  if (!cancelled) return undefined;
  return { sessionId, turnId, reply: '', status: 'interrupted', steps: [] };
}

const LIST_STATUSES = new Set<TurnProgress>(['queued', ...TURN_STATUSES]);

/**
 * Mounts `GET /v1/sessions/:id/turns/:turnId` (scope `sessions:read`; a
 * user-bound key reaches its own turns only): `queued`, `running`,
 * `awaiting_approval` or how the turn ended, with its result once it has
 * one. And `GET /v1/background-turns` (`?status=queued,running`): the
 * tenant's latest background turns, newest first.
 */
export function mountTurnStatus(app: Hono, backend: ServerBackend): void {
  app.get('/v1/sessions/:id/turns/:turnId', async (c) => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const turnId = parseOrThrow(TurnIdSchema, c.req.param('turnId'), 'turn id');
    const view = await backend.turnStatus(sessionId, turnId, principal?.tenantId, principal?.userId);
    if (!view) throw new NotFoundError({ resource: 'Turn', id: turnId });
    return c.json(view);
  });
  app.get('/v1/background-turns', async (c) => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    const wanted = (c.req.query('status') ?? '').split(',').filter((status) => status.length > 0);
    for (const status of wanted) {
      if (!LIST_STATUSES.has(status as TurnProgress))
        throw new ValidationError({
          message: `status must be a comma-separated list of: ${[...LIST_STATUSES].join(', ')}`,
        });
    }
    if (!backend.background) return c.json({ data: [] });
    const turns = await backend.background.list({ tenantId: principal?.tenantId, userId: principal?.userId });
    const data = wanted.length === 0 ? turns : turns.filter((turn) => wanted.includes(turn.status));
    return c.json({ data });
  });
}

function turnPath(sessionId: string, turnId: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}`;
}
