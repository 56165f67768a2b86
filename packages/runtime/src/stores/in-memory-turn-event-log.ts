import { ConfigurationError } from '@switchboard/core';
import type { TurnEvent } from '../engine/events.js';
import { compareEventIds, parseEventId } from '../turns/event-ids.js';
import {
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_MAX_TURN_EVENTS,
  type EventLogRetention,
  type EventReplay,
  type TurnEventLog,
  type TurnLogKey,
} from './turn-event-log.js';

/** Options of {@link InMemoryTurnEventLog}. */
export interface InMemoryTurnEventLogOptions extends EventLogRetention {
  /** The most events kept over all turns (default {@link DEFAULT_MAX_LOGGED_EVENTS}); the oldest go first. */
  maxEvents?: number;
}

/**
 * Default {@link InMemoryTurnEventLogOptions.maxEvents}: 10,000 events in the process (about the last
 * 1,500 short turns): enough to rejoin recent turns, little for the garbage collector to keep walking.
 */
export const DEFAULT_MAX_LOGGED_EVENTS = 10_000;

const keyOf = ({ tenantId, sessionId, turnId }: TurnLogKey) => `${tenantId ?? ''}\n${sessionId}\n${turnId}`;

const sameTurn = (a: TurnLogKey, b: TurnLogKey) =>
  a === b || (a.turnId === b.turnId && a.sessionId === b.sessionId && a.tenantId === b.tenantId);

/** What a scan of the ring found of one turn. */
interface Found {
  /** The turn's events after the one asked for (all of them without one), oldest first. */
  events: TurnEvent[];
  /** The event asked for, when the log still shows it. */
  from: TurnEvent | undefined;
  /**
   * Whether the log no longer shows some of the turn's events: trimmed to `maxEventsPerTurn`, or the first
   * of the oldest part shown overwritten or expired (a part lost whole cannot be told from one never run).
   */
  lost: boolean;
  /** The oldest event of the turn the log still shows. */
  oldest: TurnEvent | undefined;
}

/**
 * The embedded default {@link TurnEventLog}: the process's last events in
 * one ring of `maxEvents` slots, whatever turn each belongs to (so a stream
 * is rejoined on the replica that ran the turn only; use the Redis log with
 * several replicas). The oldest events go first: overwritten by newer ones,
 * or cleared `retentionMs` after they were appended. A turn shows at most
 * its `maxEventsPerTurn` newest events.
 *
 * Appending writes a slot of each of three arrays (the event, its turn's
 * key, the time) and makes no object: the log is written by every turn and
 * heard by few (measured on the churn bench: a map of per-turn lists cost
 * 14 µs a turn, the ring 4, against no log). Reading scans the ring from its
 * newest event back: cheap for a follower asking for what came after its
 * last event (about 1 µs), a full scan for the rarer replay of a whole turn
 * or an id the log does not hold (about 35 µs for 10,000 slots). An event's
 * time is read once per run of events of one part, so a part that writes
 * for long without another turn in between has its events timed by the
 * first.
 */
export class InMemoryTurnEventLog implements TurnEventLog {
  /** The ring's slots: grown as events come, up to `#size`, then written over from the oldest. */
  readonly #events: Array<TurnEvent | undefined> = [];
  readonly #keys: Array<TurnLogKey | undefined> = [];
  /** When each slot was written (epoch ms). */
  readonly #times: number[] = [];
  readonly #size: number;
  /** Events appended since the start: the next one goes to slot `#appended % #size`. */
  #appended = 0;
  /** The oldest event still held, as a count of appends (slots before it are empty). */
  #oldest = 0;
  readonly #maxPerTurn: number;
  readonly #retentionMs: number;
  /** Followers waiting for a turn's next events, by turn. */
  readonly #waiters = new Map<string, Set<() => void>>();
  #closed = false;
  /** The turn appended to last: a part's events come with the same key object, so the time is read once a part. */
  #lastKey: TurnLogKey | undefined;
  #now = 0;

  constructor({
    maxEventsPerTurn = DEFAULT_MAX_TURN_EVENTS,
    retentionMs = DEFAULT_EVENT_RETENTION_MS,
    maxEvents = DEFAULT_MAX_LOGGED_EVENTS,
  }: InMemoryTurnEventLogOptions = {}) {
    // The ring's size must be a count; the bounds per turn and in time may be Infinity (no bound).
    const problem =
      !Number.isSafeInteger(maxEvents) || maxEvents < 1
        ? `maxEvents must be a whole number of events of at least 1, got ${maxEvents}`
        : !(maxEventsPerTurn >= 1)
          ? `maxEventsPerTurn must be at least 1, got ${maxEventsPerTurn}`
          : !(retentionMs > 0)
            ? `retentionMs must be above 0, got ${retentionMs}`
            : undefined;
    if (problem) throw new ConfigurationError({ message: `The in-memory turn event log's ${problem}` });
    this.#size = maxEvents;
    this.#maxPerTurn = maxEventsPerTurn;
    this.#retentionMs = retentionMs;
  }

  append(key: TurnLogKey, event: TurnEvent): void {
    if (key !== this.#lastKey) {
      this.#lastKey = key;
      this.#now = Date.now();
      this.#expire(this.#now);
    }
    const size = this.#size;
    const slot = this.#appended % size;
    this.#events[slot] = event;
    this.#keys[slot] = key;
    this.#times[slot] = this.#now;
    this.#appended += 1;
    if (this.#appended - this.#oldest > size) this.#oldest = this.#appended - size;
    if (this.#waiters.size > 0) this.#wake(key);
  }

  async replay(key: TurnLogKey, after: string | undefined): Promise<EventReplay> {
    this.#expire(Date.now());
    const found = this.#scan(key, after);
    if (!found.oldest) return { kind: 'missing' };
    if (after === undefined) return { kind: 'events', events: found.events };
    if (found.from) return { kind: 'events', events: found.events, from: found.from };
    const position = parseEventId(after);
    if (!position) return { kind: 'unknown' };
    const oldest = parseEventId(found.oldest.eventId);
    return found.lost && oldest && compareEventIds(position, oldest) < 0
      ? { kind: 'expired' }
      : { kind: 'unknown' };
  }

  waitAfter(
    key: TurnLogKey,
    after: string | undefined,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<TurnEvent[]> {
    const newer = () => {
      const found = this.#scan(key, after);
      return after === undefined || found.from ? found.events : [];
    };
    const ready = newer();
    if (ready.length > 0 || signal.aborted || this.#closed) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const id = keyOf(key);
      const waiters = this.#waiters.get(id) ?? new Set();
      this.#waiters.set(id, waiters);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(id) === waiters) this.#waiters.delete(id);
        resolve(newer());
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      waiters.add(done);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiters of [...this.#waiters.values()]) for (const wake of [...waiters]) wake();
  }

  /**
   * The turn's events the log shows, from the newest back: those after `after` (stopping at it), at most
   * `maxEventsPerTurn` of the turn's newest.
   */
  #scan(key: TurnLogKey, after: string | undefined): Found {
    const size = this.#size;
    const found: Found = { events: [], from: undefined, lost: false, oldest: undefined };
    let seen = 0;
    for (let index = this.#appended - 1; index >= this.#oldest; index--) {
      const slot = index % size;
      const held = this.#keys[slot];
      if (held === undefined || !sameTurn(held, key)) continue;
      const event = this.#events[slot] as TurnEvent;
      if (seen === this.#maxPerTurn) {
        found.lost = true;
        break;
      }
      seen += 1;
      found.oldest = event;
      if (after !== undefined && event.eventId === after) {
        found.from = event;
        break;
      }
      found.events.push(event);
    }
    // The oldest event shown is not the first of its part: the part's first ones were overwritten or expired.
    if (!found.lost && found.oldest && !found.oldest.eventId.endsWith('-1')) found.lost = true;
    found.events.reverse();
    return found;
  }

  /** Clears the oldest events while they are past their retention (slots are written in time order). */
  #expire(now: number): void {
    const size = this.#size;
    while (this.#oldest < this.#appended) {
      const slot = this.#oldest % size;
      if ((this.#times[slot] as number) + this.#retentionMs > now) return;
      this.#events[slot] = undefined;
      this.#keys[slot] = undefined;
      this.#oldest += 1;
    }
  }

  #wake(key: TurnLogKey): void {
    const waiters = this.#waiters.get(keyOf(key));
    if (waiters) for (const wake of [...waiters]) wake();
  }
}
