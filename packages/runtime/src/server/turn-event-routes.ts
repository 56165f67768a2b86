import { NotFoundError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { requireScope } from '../backend/access-checks.js';
import type { ServerBackend } from '../backend/server-backend.js';
import { findStoredTurn, followTurnEvents, MAX_FOLLOWERS, type TurnFollow } from '../backend/turn-follow.js';
import type { TurnLogKey } from '../stores/turn-event-log.js';
import { parseEventId } from '../turns/event-ids.js';
import { principalOf } from './access.js';
import { errorResponse, parseOrThrow } from './http-errors.js';
import { SessionIdSchema, TurnIdSchema } from './schemas.js';

export { MAX_FOLLOWERS } from '../backend/turn-follow.js';

/** The path a client rejoins a turn's stream at (the `turn-start` event of `/v1/chat` names it). */
export function turnEventsPath(sessionId: string, turnId: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/events`;
}

/**
 * Mounts `GET /v1/sessions/:id/turns/:turnId/events` (scope
 * `sessions:read`; a user-bound key reaches its user's sessions only): a
 * turn's events as Server-Sent Events, from the start or after the event
 * `Last-Event-ID` (or `?after=`) names, live until the turn's latest
 * `turn-end` (the end of the turn, or of its part when it pauses for an
 * approval: a part already resumed is streamed on), from whichever replica the client reaches when the app's
 * event log is shared. An id that is not an event id is 400; one the log
 * does not hold is 404 (`event_not_found`), or 410 (`event_expired`) when
 * it is older than what the log still keeps: never a replay of everything.
 * At most {@link MAX_FOLLOWERS} at once: past it, 503 with `Retry-After`.
 */
export function mountTurnEvents(
  app: Hono,
  backend: Pick<ServerBackend, 'events' | 'sessionsOf' | 'isClosing'>,
): void {
  let followers = 0;
  app.get('/v1/sessions/:id/turns/:turnId/events', async (c) => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    const sessionId = parseOrThrow(SessionIdSchema, c.req.param('id'), 'session id');
    const turnId = parseOrThrow(TurnIdSchema, c.req.param('turnId'), 'turn id');
    const after = c.req.query('after') ?? c.req.header('last-event-id');
    if (after !== undefined && parseEventId(after) === undefined) {
      return errorResponse(
        c,
        400,
        'invalid_event_id',
        'after (or Last-Event-ID) must be the id of an event of the turn, as its stream gave it (such as 1764370000000-3)',
      );
    }
    const log = backend.events;
    if (!log) return errorResponse(c, 404, 'events_not_kept', 'This server keeps no turn events');
    const sessions = backend.sessionsOf(principal?.tenantId, principal?.userId);
    const record = await findStoredTurn(sessions, sessionId, turnId);
    if (!record) throw new NotFoundError({ resource: 'Turn', id: turnId });
    const key: TurnLogKey = { tenantId: principal?.tenantId, sessionId, turnId };
    const replay = await log.replay(key, after);
    if (replay.kind === 'unknown') {
      return errorResponse(c, 404, 'event_not_found', `Turn '${turnId}' has no event '${after}'`);
    }
    if (
      replay.kind === 'expired' ||
      (replay.kind === 'missing' && (after !== undefined || record.status !== 'running'))
    ) {
      return errorResponse(
        c,
        410,
        replay.kind === 'expired' ? 'event_expired' : 'events_expired',
        `The events of turn '${turnId}' ${replay.kind === 'expired' ? 'from there ' : ''}are no longer kept; GET /v1/sessions/${sessionId} has the turn's outcome`,
      );
    }
    if (followers >= MAX_FOLLOWERS) {
      c.header('Retry-After', '1');
      return errorResponse(
        c,
        503,
        'too_many_followers',
        'Too many streams are followed on this server; retry later',
      );
    }
    const backlog = replay.kind === 'events' ? replay.events : [];
    const endedAt = replay.kind === 'events' && replay.from?.type === 'turn-end';
    followers += 1;
    return followTurn(c, {
      log,
      key,
      sessions,
      backlog,
      after,
      ended: endedAt,
      finished: record.status !== 'running',
      isClosing: backend.isClosing,
      done: () => {
        followers -= 1;
      },
    });
  });
}

/** Writes a turn's logged events, then its live ones, until its next `turn-end` (or the client leaves). */
function followTurn(
  c: Context,
  options: Omit<TurnFollow, 'signal'> & {
    /** Called once the stream is over. */
    done: () => void;
  },
): Response {
  const { done, ...follow } = options;
  return streamSSE(c, async (stream) => {
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    try {
      for await (const event of followTurnEvents({ ...follow, signal: gone.signal })) {
        const id = 'eventId' in event ? event.eventId : undefined;
        await stream.writeSSE(
          id === undefined
            ? { event: event.type, data: JSON.stringify(event) }
            : { event: event.type, data: JSON.stringify(event), id },
        );
      }
    } catch {
      // The store or the log failed while following: the client rejoins later from the last id it got.
      await stream.writeSSE({
        event: 'error',
        data: JSON.stringify({
          type: 'error',
          code: 'store_unavailable',
          message: 'The turn can no longer be followed here; rejoin later',
        }),
      });
    } finally {
      done();
    }
  });
}
