import type { TurnEvent } from '../engine/events.js';

/**
 * Where each turn's events are kept for a while, so that a client can
 * rejoin a turn's stream (`GET /v1/sessions/:id/turns/:turnId/events`),
 * from any replica when the log is shared (Redis), and replay a finished
 * turn's events within the retention.
 *
 * Appends are fire-and-forget: the turn never waits for its log, and a log
 * that cannot be written loses events, never the turn (its stored record
 * stays the truth: a follower that finds no more events reads the turn's
 * end from the store).
 */
export interface TurnEventLog {
  /** Appends one of the turn's events (numbered: `eventId` set). Never throws, never waits. */
  append(key: TurnLogKey, event: TurnEvent): void;
  /**
   * The turn's events after `after` (all of them without it), at most the
   * log's retention. `unknown` when `after` names no event the log holds
   * (`expired` when it is older than what the log still holds), `missing`
   * when the log has nothing of the turn.
   */
  replay(key: TurnLogKey, after: string | undefined): Promise<EventReplay>;
  /**
   * Waits until the turn has events after `after` (any event without it),
   * at most `timeoutMs` or until `signal` aborts, and returns them (an
   * empty array on time-out, on abort and once the log is closed).
   */
  waitAfter(
    key: TurnLogKey,
    after: string | undefined,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<TurnEvent[]>;
  /** Stops waiting followers and frees connections. */
  close?(): Promise<void>;
}

/** Which turn a log entry belongs to. */
export interface TurnLogKey {
  tenantId: string | undefined;
  sessionId: string;
  turnId: string;
}

/** What {@link TurnEventLog.replay} found. */
export type EventReplay =
  | {
      kind: 'events';
      /** The events after `after`, oldest first. */
      events: TurnEvent[];
      /** The event `after` named, when there was one. */
      from?: TurnEvent;
    }
  | { kind: 'missing' }
  | { kind: 'unknown' }
  | { kind: 'expired' };

/** How much of each turn's events a log keeps. */
export interface EventLogRetention {
  /** The most events kept per turn; the oldest go first (default {@link DEFAULT_MAX_TURN_EVENTS}). */
  maxEventsPerTurn?: number;
  /** How long a turn's events are kept after its last one (default {@link DEFAULT_EVENT_RETENTION_MS}). */
  retentionMs?: number;
}

/** Default {@link EventLogRetention.maxEventsPerTurn}: 10,000 events (deltas included). */
export const DEFAULT_MAX_TURN_EVENTS = 10_000;
/** Default {@link EventLogRetention.retentionMs}: one hour after the turn's last event. */
export const DEFAULT_EVENT_RETENTION_MS = 3_600_000;
