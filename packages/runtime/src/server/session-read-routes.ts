import { NotFoundError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { requireScope } from '../backend/access-checks.js';
import { expireOverdue } from '../engine/approvals.js';
import { sessionExportLines } from '../eval/session-export.js';
import { historyPageOf } from '../stores/history-page.js';
import { decodePageCursor, encodePageCursor } from '../stores/page-cursor.js';
import {
  canListSessions,
  canReadPages,
  type HistoryPage,
  type ReadPageOptions,
  type SessionStore,
} from '../stores/session-store.js';
import { isFinished, pendingApprovals, publicApproval, publicTurn } from '../turns/turn-record.js';
import { principalOf } from './access.js';
import { errorResponse, parseOrThrow } from './http-errors.js';
import { DEFAULT_PAGE_SIZE, HistoryQuerySchema, SessionIdSchema, SessionListQuerySchema } from './schemas.js';

/** The most messages `GET /v1/sessions/:id/export` returns; a longer session is a 413 (read it by pages instead). */
export const EXPORT_MAX_MESSAGES = 10_000;

/** A history cursor: `[message, turn]` of a `HistoryPosition`. */
const HistoryCursorSchema = z.tuple([z.number().int().min(1), z.number().int().min(0)]);

/** A page of history from the store's ranged read, or cut from the whole session for a store without one. */
async function readHistoryPage(
  sessions: SessionStore,
  sessionId: string,
  options: ReadPageOptions,
): Promise<HistoryPage> {
  if (canReadPages(sessions)) return sessions.readPage(sessionId, options);
  const [messages, turns] = await Promise.all([sessions.read(sessionId), sessions.listTurns(sessionId)]);
  return historyPageOf(messages, turns, options);
}

/**
 * Mounts the read side of sessions (scope `sessions:read`; a user-bound key
 * sees its user's sessions only): `GET /v1/sessions` (the caller's
 * tenant's recent sessions, most recently active first, paged with an
 * opaque `cursor`) and `GET /v1/sessions/:id` (one page of a session,
 * newest first, paged with an opaque `before` cursor; default
 * {@link DEFAULT_PAGE_SIZE} items, at most `MAX_PAGE_SIZE`), and
 * `GET /v1/sessions/:id/export` (the whole session as JSONL, for replays,
 * up to {@link EXPORT_MAX_MESSAGES} messages).
 */
export function mountSessionReads(
  app: Hono,
  sessionsOf: (tenantId: string | undefined, userId?: string) => SessionStore,
): void {
  const sessionsFor = (c: Context) => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    return sessionsOf(principal?.tenantId, principal?.userId);
  };

  app.get('/v1/sessions', async (c) => {
    const sessions = sessionsFor(c);
    const query = parseOrThrow(SessionListQuerySchema, c.req.query(), 'query');
    if (!canListSessions(sessions)) {
      return errorResponse(c, 501, 'not_implemented', 'This server’s session store cannot list sessions');
    }
    const options: { limit: number; cursor?: string } = { limit: query.limit ?? DEFAULT_PAGE_SIZE };
    if (query.cursor !== undefined) options.cursor = query.cursor;
    const page = await sessions.listSessions(options);
    const body: Record<string, unknown> = {
      sessions: page.sessions.map(({ sessionId, lastActiveAt, messageCount }) => ({
        sessionId,
        updatedAt: new Date(lastActiveAt).toISOString(),
        messageCount,
      })),
    };
    if (page.nextCursor !== undefined) body.nextCursor = page.nextCursor;
    return c.json(body);
  });

  app.get('/v1/sessions/:id', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const query = parseOrThrow(HistoryQuerySchema, c.req.query(), 'query');
    const options: ReadPageOptions = { limit: query.limit ?? DEFAULT_PAGE_SIZE };
    if (query.before !== undefined) {
      const [message, turn] = decodePageCursor(query.before, HistoryCursorSchema);
      options.before = { message, turn };
    }
    // Another tenant's (or, for a user-bound key, another user's) session is not there at all: 404, not 403.
    const page = await readHistoryPage(sessionsFor(c), sessionId, options);
    if (page.messages.length === 0) throw new NotFoundError({ resource: 'Session', id: sessionId });
    const last = page.lastTurn;
    // An approval past its expiry is shown as expired, though the turn records it only when it next moves.
    if (last) expireOverdue(last.approvals);
    const body: Record<string, unknown> = {
      sessionId,
      messages: page.messages,
      turns: page.turns.map((turn) => publicTurn(turn.turnId === last?.turnId ? last : turn)),
      pendingApprovals: last ? pendingApprovals(last).map(publicApproval) : [],
    };
    if (last && !isFinished(last.status)) body.activeTurn = { turnId: last.turnId, status: last.status };
    if (page.before) body.before = encodePageCursor([page.before.message, page.before.turn]);
    return c.json(body);
  });

  app.get('/v1/sessions/:id/export', async (c) => {
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const sessions = sessionsFor(c);
    const [messages, turns] = await Promise.all([sessions.read(sessionId), sessions.listTurns(sessionId)]);
    // Another tenant's (or user's) session reads as empty through the caller's view: 404, as above.
    if (messages.length === 0) throw new NotFoundError({ resource: 'Session', id: sessionId });
    if (messages.length > EXPORT_MAX_MESSAGES)
      return errorResponse(
        c,
        413,
        'export_too_large',
        `The session has more than ${EXPORT_MAX_MESSAGES} messages; read it page by page with GET /v1/sessions/:id`,
      );
    const userId = turns[0]?.userId;
    const body = sessionExportLines({
      sessionId,
      messages,
      turns,
      ...(userId === undefined ? {} : { userId }),
    });
    return c.body(body, 200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="${sessionId}.jsonl"`,
    });
  });
}
