/**
 * The background timers of an `InMemorySessionStore`: one forgets the
 * sessions idle for longer than their expiry, one compacts the sessions
 * idle for `compactAfterSeconds` (see `compact` in
 * `in-memory-session-data.ts`). Neither keeps the process alive.
 *
 * @module
 */
import { isFinished } from '../turns/turn-record.js';
import type { InMemoryLeases } from './in-memory-leases.js';
import { compact, NOT_COMPACTABLE, type SessionData } from './in-memory-session-data.js';

/** The longest pause between looks for idle sessions to compact. */
const MAX_COMPACT_INTERVAL_MS = 5_000;
/** Sessions compacted at most per timer tick, so that a tick stays short; the rest wait a few ms. */
const COMPACTIONS_PER_TICK = 1000;

/** The longest pause between sweeps of idle sessions. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

/** Sweeps a store's expired sessions and compacts its idle ones, on timers; compacts on demand too. */
export class SessionHousekeeping {
  readonly #sessions: ReadonlyMap<string, SessionData>;
  readonly #leases: InMemoryLeases;
  /** Forgets an expired session (and tells its tenant's share). */
  readonly #forget: (sessionId: string, session: SessionData) => void;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  readonly #compactAfterMs: number | undefined;
  #compactTimer: ReturnType<typeof setInterval> | undefined;
  #compactRest: ReturnType<typeof setTimeout> | undefined;

  /** Starts the timers: the sweep's, and the compaction's unless `compactAfterMs` is undefined. */
  constructor(
    sessions: ReadonlyMap<string, SessionData>,
    leases: InMemoryLeases,
    forget: (sessionId: string, session: SessionData) => void,
    { idleTtlMs, compactAfterMs }: { idleTtlMs: number; compactAfterMs: number | undefined },
  ) {
    this.#sessions = sessions;
    this.#leases = leases;
    this.#forget = forget;
    this.#sweepTimer = setInterval(() => this.#sweep(), Math.min(idleTtlMs, MAX_SWEEP_INTERVAL_MS));
    this.#sweepTimer.unref();
    if (compactAfterMs !== undefined) {
      this.#compactAfterMs = compactAfterMs;
      const tick = Math.max(Math.min(this.#compactAfterMs / 2, MAX_COMPACT_INTERVAL_MS), 50);
      this.#compactTimer = setInterval(() => this.#compactIdle(), tick);
      this.#compactTimer.unref();
    }
  }

  /** Stops the timers. */
  close(): void {
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
    clearInterval(this.#compactTimer);
    this.#compactTimer = undefined;
    clearTimeout(this.#compactRest);
  }

  /**
   * Compacts the sessions idle for `compactAfterSeconds` whose last turn has
   * ended and whose lease is free: walks the map from its least recently
   * written entry and stops at the first recent one. At most
   * {@link COMPACTIONS_PER_TICK} per call; the rest follow a few ms later.
   */
  #compactIdle(): void {
    clearTimeout(this.#compactRest);
    this.#compactRest = undefined;
    const left = this.compactUntil(Date.now() - (this.#compactAfterMs as number), COMPACTIONS_PER_TICK);
    if (left === 0) {
      this.#compactRest = setTimeout(() => this.#compactIdle(), 5);
      this.#compactRest.unref();
    }
  }

  /**
   * Compacts, least recently written first, the sessions last written before
   * `idleSince` (epoch ms) that can be: up to `budget` of them. Returns the
   * budget left (0: it stopped early).
   */
  compactUntil(idleSince: number, budget: number): number {
    for (const [sessionId, session] of this.#sessions) {
      if (session.lastActiveAt > idleSince) break;
      if (
        session.compacted !== undefined ||
        session.compactedMessages === NOT_COMPACTABLE ||
        this.#leases.isHeld(sessionId)
      )
        continue;
      const last = session.turns[session.turns.length - 1];
      if (last && !isFinished(last.status)) continue;
      if (compact(session) && --budget === 0) break;
    }
    return budget;
  }

  /** Forgets the sessions past their expiry whose lease is free. */
  #sweep(): void {
    const now = Date.now();
    for (const [sessionId, session] of this.#sessions) {
      if (session.expiresAt <= now && !this.#leases.isHeld(sessionId)) this.#forget(sessionId, session);
    }
  }
}
