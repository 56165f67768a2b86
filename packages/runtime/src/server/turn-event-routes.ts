import { setTimeout as delay } from 'node:timers/promises';
import { createId, NotFoundError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { requireScope } from '../backend/access-checks.js';
import type { ServerBackend } from '../backend/server-backend.js';
import { findStoredTurn, followTurnEvents, MAX_FOLLOWERS, type TurnFollow } from '../backend/turn-follow.js';
import type { TurnEventBody } from '../engine/events.js';
import type { SessionStore } from '../stores/session-store.js';
import type { TurnLogKey } from '../stores/turn-event-log.js';
import { parseEventId } from '../turns/event-ids.js';
import type { TurnRecord, TurnStatus } from '../turns/turn-record.js';
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
  backend: Pick<ServerBackend, 'events' | 'sessionsOf' | 'isClosing' | 'background'>,
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
    const key: TurnLogKey = { tenantId: principal?.tenantId, sessionId, turnId };
    if (!record) {
      // A background turn not yet run: its stream opens now and starts with the turn.
      const queued = await backend.background?.status(sessionId, turnId, {
        tenantId: principal?.tenantId,
        userId: principal?.userId,
      });
      if (after !== undefined || (queued?.status !== 'queued' && queued?.status !== 'running'))
        throw new NotFoundError({ resource: 'Turn', id: turnId });
      if (followers >= MAX_FOLLOWERS) return tooManyFollowers(c);
      followers += 1;
      return followTurn(c, {
        log,
        key,
        sessions,
        backlog: [],
        after: undefined,
        ended: false,
        isClosing: backend.isClosing,
        start: (signal) => turnStart(backend, sessions, key, principal?.userId, signal),
        done: () => {
          followers -= 1;
        },
      });
    }
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
    if (followers >= MAX_FOLLOWERS) return tooManyFollowers(c);
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

function tooManyFollowers(c: Context): Response {
  c.header('Retry-After', '1');
  return errorResponse(
    c,
    503,
    'too_many_followers',
    'Too many streams are followed on this server; retry later',
  );
}

/** How often a follower of a background turn not yet run looks whether it started. */
const START_CHECK_MS = 250;

/**
 * Waits until a queued background turn opens (its record stored): then
 * its record; or the end it had without ever opening (cancelled while
 * queued, failed before it opened) as a `turn-end`; undefined when the
 * follower left.
 */
async function turnStart(
  backend: Pick<ServerBackend, 'background'>,
  sessions: SessionStore,
  key: TurnLogKey,
  userId: string | undefined,
  signal: AbortSignal,
): Promise<TurnRecord | TurnEventBody | undefined> {
  for (let check = 1; !signal.aborted; check += 1) {
    await delay(START_CHECK_MS, undefined, { signal }).catch(() => {});
    if (signal.aborted) return undefined;
    const record = await findStoredTurn(sessions, key.sessionId, key.turnId);
    if (record) return record;
    // Every second, whether it ended without running.
    if (check % 4 !== 0) continue;
    const view = await backend.background?.status(key.sessionId, key.turnId, {
      tenantId: key.tenantId,
      userId,
    });
    if (view?.status === 'queued' || view?.status === 'running') continue;
    const end: TurnEventBody = {
      type: 'turn-end',
      sessionId: key.sessionId,
      turnId: key.turnId,
      messageId: createId('evt'),
      status: (view?.status ?? 'failed') as TurnStatus,
      endOfMessage: true,
      endOfDialog: true,
    };
    return end;
  }
  return undefined;
}

/** Writes a turn's logged events, then its live ones, until its next `turn-end` (or the client leaves). */
function followTurn(
  c: Context,
  options: Omit<TurnFollow, 'signal'> & {
    /** A background turn not yet run: waits for it first (see {@link turnStart}). */
    start?: (signal: AbortSignal) => Promise<TurnRecord | TurnEventBody | undefined>;
    /** Called once the stream is over. */
    done: () => void;
  },
): Response {
  const { done, start, ...follow } = options;
  return streamSSE(c, async (stream) => {
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    try {
      if (start) {
        const started = await start(gone.signal);
        if (!started) return;
        if ('type' in started) {
          await stream.writeSSE({ event: started.type, data: JSON.stringify(started) });
          return;
        }
        follow.finished = started.status !== 'running';
      }
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
