import { createId, NotFoundError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import { requireScope } from '../backend/access-checks.js';
import type { ServerBackend } from '../backend/server-backend.js';
import type { TurnEvent, TurnEventBody } from '../engine/events.js';
import type { SessionStore } from '../stores/session-store.js';
import type { TurnEventLog, TurnLogKey } from '../stores/turn-event-log.js';
import { parseEventId } from '../turns/event-ids.js';
import type { TurnRecord } from '../turns/turn-record.js';
import { principalOf } from './access.js';
import { errorResponse, parseOrThrow } from './http-errors.js';
import { SessionIdSchema, TurnIdSchema } from './schemas.js';

/** How long a follower waits for a turn's next events before it asks the store whether the turn still runs. */
const FOLLOW_CHECK_MS = 5_000;
/** Streams of `GET …/events` a server serves at once (each waits on the log; on Redis, with a connection of its own). */
export const MAX_FOLLOWERS = 256;

/** The path a client rejoins a turn's stream at (the `turn-start` event of `/v1/chat` names it). */
export function turnEventsPath(sessionId: string, turnId: string): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/events`;
}

async function findTurn(
  sessions: SessionStore,
  sessionId: string,
  turnId: string,
): Promise<TurnRecord | undefined> {
  const last = await sessions.lastTurn(sessionId);
  if (last?.turnId === turnId) return last;
  return (await sessions.listTurns(sessionId)).find((turn) => turn.turnId === turnId);
}

/** The end of a turn whose log holds no `turn-end` (lost, or past its retention), from its stored record. */
function storedEnd(sessionId: string, record: TurnRecord): TurnEventBody {
  const end: TurnEventBody = {
    type: 'turn-end',
    sessionId,
    turnId: record.turnId,
    messageId: createId('evt'),
    status: record.status,
    endOfMessage: true,
    endOfDialog: true,
  };
  if (record.traceId !== undefined) end.traceId = record.traceId;
  return end;
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
    const record = await findTurn(sessions, sessionId, turnId);
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
  options: {
    log: TurnEventLog;
    key: TurnLogKey;
    sessions: SessionStore;
    backlog: TurnEvent[];
    after: string | undefined;
    /** The event the client rejoined after ended the turn (or its part). */
    ended: boolean;
    isClosing: () => boolean;
    /** Called once the stream is over. */
    done: () => void;
  },
): Response {
  const { log, key, sessions, backlog, isClosing } = options;
  return streamSSE(c, async (stream) => {
    try {
      await follow(stream);
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
      options.done();
    }
  });
  async function follow(stream: SSEStreamingApi): Promise<void> {
    const gone = new AbortController();
    stream.onAbort(() => gone.abort());
    let last = options.after;
    let ended = options.ended;
    /**
     * Writes events; true when the last was a `turn-end` (one inside them, followed by more, ended a part
     * that paused and was resumed since: the stream goes on).
     */
    const write = async (events: readonly (TurnEvent | TurnEventBody)[]) => {
      for (const event of events) {
        const id = 'eventId' in event ? event.eventId : undefined;
        await stream.writeSSE(
          id === undefined
            ? { event: event.type, data: JSON.stringify(event) }
            : { event: event.type, data: JSON.stringify(event), id },
        );
        if (id !== undefined) last = id;
      }
      return events.at(-1)?.type === 'turn-end';
    };
    if (await write(backlog)) return;
    if (backlog.length > 0) ended = false;
    while (!gone.signal.aborted && !isClosing()) {
      const events = await log.waitAfter(key, last, FOLLOW_CHECK_MS, gone.signal);
      if (events.length > 0) {
        ended = false;
        if (await write(events)) return;
        continue;
      }
      if (gone.signal.aborted || isClosing()) return;
      const record = await findTurn(sessions, key.sessionId, key.turnId);
      if (record?.status === 'running') continue;
      // Not running here or anywhere: whatever was logged in between comes first, then the stored end.
      const tail = await log.replay(key, last);
      if (tail.kind === 'events' && (await write(tail.events))) return;
      if (!ended && record) await write([storedEnd(key.sessionId, record)]);
      return;
    }
  }
}
