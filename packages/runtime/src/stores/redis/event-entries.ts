import type { TurnEvent } from '../../engine/events.js';
import type { TurnLogKey } from '../turn-event-log.js';

/** A Redis Stream reply: entries of `[id, [field, value, …]]`. */
export type StreamEntries = Array<[string, string[]]>;

/** The JSON of a key's ids as an event of its turn holds them, after its `type` (see {@link encodeEventEntry}). */
export function keyIdsJson(key: TurnLogKey): string {
  return `,"sessionId":${JSON.stringify(key.sessionId)},"turnId":${JSON.stringify(key.turnId)}`;
}

/**
 * An event as a stream entry's value: its JSON without the fields the entry
 * already says (measured: a third of a short turn's log). `eventId` is the
 * entry's id; `sessionId` and `turnId` are those of the log's key, and are
 * kept only when an event names another (never, as the engine builds them).
 * `ids` is {@link keyIdsJson} of the key.
 *
 * The engine builds each event with `type`, `sessionId` and `turnId` first
 * and numbers it last (`eventId`): those are cut out of its JSON as text,
 * one `JSON.stringify` and no copy of the event (measured: half the CPU of
 * leaving them out by destructuring); any other event is copied without them.
 */
export function encodeEventEntry(event: TurnEvent, key: TurnLogKey, ids: string): string {
  const json = JSON.stringify(event);
  const headLength = 10 + event.type.length; // {"type":"<type>"
  const tail = `,"eventId":"${event.eventId}"}`;
  if (json.startsWith(ids, headLength) && json.endsWith(tail) && json.startsWith(`{"type":"${event.type}"`)) {
    return `${json.slice(0, headLength)}${json.slice(headLength + ids.length, json.length - tail.length)}}`;
  }
  const { sessionId, turnId, eventId: _eventId, ...rest } = event;
  if (sessionId !== key.sessionId) (rest as { sessionId?: string }).sessionId = sessionId;
  if (turnId !== key.turnId) (rest as { turnId?: string }).turnId = turnId;
  return JSON.stringify(rest);
}

/**
 * The events of stream entries, oldest first, each whole again (its fields
 * in the order the engine gives them: `type`, `sessionId`, `turnId` first,
 * `eventId` last). An entry that does not parse is left out.
 */
export function decodeEventEntries(entries: StreamEntries, key: TurnLogKey): TurnEvent[] {
  const events: TurnEvent[] = [];
  for (const [id, fields] of entries) {
    let stored: Partial<TurnEvent> | null;
    try {
      stored = JSON.parse(fields[1] as string) as Partial<TurnEvent> | null;
    } catch {
      stored = null;
    }
    // Written by this code only: a damaged entry is skipped rather than ending the stream.
    if (typeof stored !== 'object' || stored === null) continue;
    const { type, ...rest } = stored;
    events.push({ type, sessionId: key.sessionId, turnId: key.turnId, ...rest, eventId: id } as TurnEvent);
  }
  return events;
}
