import { createId } from '@switchboard/core';
import type { TurnEvent, TurnEventBody } from '../engine/events.js';
import type { SessionStore } from '../stores/session-store.js';
import type { TurnEventLog, TurnLogKey } from '../stores/turn-event-log.js';
import type { TurnRecord } from '../turns/turn-record.js';

/** How long a follower waits for a turn's next events before it asks the store whether the turn still runs. */
const FOLLOW_CHECK_MS = 5_000;

/**
 * Turns a server follows at once per surface (`GET …/events`, A2A's
 * `SubscribeToTask`): each waits on the log, on Redis with a connection of its own.
 */
export const MAX_FOLLOWERS = 256;

/** A turn of a session, by id: the last one first (the one usually followed), then the others. */
export async function findStoredTurn(
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
 * The stored answer of an ended turn whose log holds no `message` since its
 * last `turn-start` (undefined when it does, or the store has none).
 */
async function unloggedAnswer(
  { log, key, sessions }: TurnFollow,
  record: TurnRecord,
): Promise<TurnEventBody | undefined> {
  const logged = await log.replay(key, undefined);
  if (logged.kind === 'events') {
    const events = logged.events;
    let start = events.length - 1;
    while (start >= 0 && events[start]?.type !== 'turn-start') start -= 1;
    if (events.slice(start + 1).some((event) => event.type === 'message')) return undefined;
  }
  const history = await sessions.read(key.sessionId);
  const asked = history.findIndex((message) => message.id === record.userMessageId);
  if (asked < 0) return undefined;
  let answer: (typeof history)[number] | undefined;
  for (const message of history.slice(asked + 1)) {
    if (message.role === 'user') break;
    if (message.role === 'assistant') answer = message;
  }
  if (answer?.role !== 'assistant') return undefined;
  return {
    type: 'message',
    sessionId: key.sessionId,
    turnId: key.turnId,
    messageId: answer.id,
    content: answer.content,
    endOfMessage: true,
  };
}

/** What {@link followTurnEvents} follows, and from where. */
export interface TurnFollow {
  log: TurnEventLog;
  key: TurnLogKey;
  /** The sessions the follower may read (the turn's record, once the log has nothing more). */
  sessions: SessionStore;
  /** The events the log replayed after `after`. */
  backlog: TurnEvent[];
  /** The event id the follower rejoined after. */
  after: string | undefined;
  /** The event the follower rejoined after ended the turn (or its part). */
  ended: boolean;
  isClosing: () => boolean;
  /** The turn had ended (or paused) when the follower came: nothing more is waited for. */
  finished?: boolean;
  /** Stops following (the client left). */
  signal: AbortSignal;
}

/**
 * A turn's logged events after `after`, then its live ones, until its next
 * `turn-end` (a `turn-end` followed by more events ended a part that paused
 * and was resumed since: following goes on); once the log has nothing more
 * and the turn no longer runs anywhere, the rest of the log, then the end
 * the store records. Protocol-neutral: the HTTP route writes these as
 * Server-Sent Events, A2A's `SubscribeToTask` as task updates. Throws when
 * the store or the log fails.
 */
export async function* followTurnEvents(follow: TurnFollow): AsyncGenerator<TurnEvent | TurnEventBody> {
  const { log, key, sessions, isClosing, signal } = follow;
  let last = follow.after;
  let ended = follow.ended;
  let endedLast = false;
  async function* emit(events: readonly (TurnEvent | TurnEventBody)[]) {
    for (const event of events) {
      yield event;
      if ('eventId' in event && event.eventId !== undefined) last = event.eventId;
    }
    endedLast = events.at(-1)?.type === 'turn-end';
  }
  yield* emit(follow.backlog);
  if (endedLast) return;
  if (follow.backlog.length > 0) ended = false;
  while (!signal.aborted && !isClosing()) {
    const events = follow.finished ? [] : await log.waitAfter(key, last, FOLLOW_CHECK_MS, signal);
    if (events.length > 0) {
      ended = false;
      yield* emit(events);
      if (endedLast) return;
      continue;
    }
    if (signal.aborted || isClosing()) return;
    const record = await findStoredTurn(sessions, key.sessionId, key.turnId);
    if (record?.status === 'running') continue;
    // Not running here or anywhere: whatever was logged in between comes first, then the stored end.
    const tail = await log.replay(key, last);
    if (tail.kind === 'events') {
      yield* emit(tail.events);
      if (endedLast) return;
    }
    if (!ended && record) {
      // Its replica stopped between storing the end and logging it: the answer comes from the store too.
      const answer = record.status === 'awaiting_approval' ? undefined : await unloggedAnswer(follow, record);
      if (answer) yield answer;
      yield storedEnd(key.sessionId, record);
    }
    return;
  }
}
