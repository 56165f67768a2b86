/**
 * Turn event ids: `<part>-<seq>`, unique and increasing within a turn. The
 * part is when the turn's part began (epoch ms, and always above the
 * previous part's, whatever the clocks of the replicas that ran them); the
 * sequence counts the part's events from 1. The same shape as a Redis
 * Stream entry id, so a Redis log keeps them as its own ids.
 *
 * @module
 */

/** A parsed event id. */
export interface EventPosition {
  part: number;
  seq: number;
}

const EVENT_ID = /^(\d{1,15})-(\d{1,9})$/;

/** The position an event id names, or undefined when it is not one (`-1`, `$`, `0-0`, a number alone…). */
export function parseEventId(id: string): EventPosition | undefined {
  const match = EVENT_ID.exec(id);
  if (!match) return undefined;
  const part = Number(match[1]);
  const seq = Number(match[2]);
  return seq === 0 ? undefined : { part, seq };
}

/** Negative, zero or positive as `a` comes before, with or after `b`. */
export function compareEventIds(a: EventPosition, b: EventPosition): number {
  return a.part === b.part ? a.seq - b.seq : a.part - b.part;
}

/** The part a turn's next part numbers its events with: now, or one more than the last part when the clock says less. */
export function nextPart(previous: number | undefined, now = Date.now()): number {
  return previous === undefined || now > previous ? now : previous + 1;
}
