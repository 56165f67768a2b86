import { createId, SessionBusyError } from '@switchboard/core';
import type { Logger } from '../logging/logger.js';
import { canSweep, type SessionStore } from '../stores/session-store.js';
import { parseStoreId } from '../stores/tenant-sessions.js';
import type { TurnResult } from './turn-types.js';

/** How the app's sweeper looks for turns a stopped replica left running (see {@link TurnSweeper}). */
export interface SweeperOptions {
  /** How often a sweep runs, on one replica at a time (default {@link DEFAULT_SWEEP_INTERVAL_MS}). */
  intervalMs?: number;
  /** How long a running turn must have gone unwritten to be looked at (default {@link DEFAULT_SWEEP_AFTER_MS}). */
  afterMs?: number;
}

/** Default {@link SweeperOptions.intervalMs}: every 10 seconds. */
export const DEFAULT_SWEEP_INTERVAL_MS = 10_000;
/** Default {@link SweeperOptions.afterMs}: a running turn not written for 5 seconds. */
export const DEFAULT_SWEEP_AFTER_MS = 5_000;
/** Turns one sweep looks at, at most (the oldest first; the rest wait for the next sweep). */
export const MAX_TURNS_PER_SWEEP = 20;
/**
 * How long a sweep waits for a candidate's lease: long enough for a dead
 * holder's lease to be taken over (its liveness key gone twice, a refresh
 * apart), short enough to give up soon on a live holder's long turn.
 */
const LEASE_WAIT_MS = 4_000;

/**
 * Recovers, without waiting for a user's next message, the turns a stopped
 * replica left `running`: at start-up and every `intervalMs`, on one replica
 * at a time (a lock in the store), it asks the store for the sessions
 * whose turn is marked running and was not written for `afterMs`, and
 * recovers each whose lease it can take: a live replica's turn keeps its
 * lease, a dead one's is taken over (see the Redis store's failover). The
 * turn then resumes (or fails, with `recovery: 'fail'`) here, streaming its
 * events to the event log, as a new message would have had it. Only stores
 * shared by replicas can tell (`SessionStore.runningSessions`); with others
 * it does nothing.
 */
export class TurnSweeper {
  readonly #store: SessionStore;
  readonly #recover: (
    sessionId: string,
    tenantId: string | undefined,
    waitMs: number,
  ) => Promise<TurnResult | undefined>;
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #afterMs: number;
  readonly #owner = createId('sweep');
  #timer: ReturnType<typeof setInterval> | undefined;
  #sweeping: Promise<number> | undefined;

  constructor(
    store: SessionStore,
    recover: (
      sessionId: string,
      tenantId: string | undefined,
      waitMs: number,
    ) => Promise<TurnResult | undefined>,
    logger: Logger,
    { intervalMs = DEFAULT_SWEEP_INTERVAL_MS, afterMs = DEFAULT_SWEEP_AFTER_MS }: SweeperOptions = {},
  ) {
    this.#store = store;
    this.#recover = recover;
    this.#logger = logger;
    this.#intervalMs = intervalMs;
    this.#afterMs = afterMs;
  }

  /** Sweeps now and every interval (nothing with a store that cannot tell). */
  start(): void {
    if (this.#timer || !canSweep(this.#store)) return;
    void this.sweep();
    this.#timer = setInterval(() => void this.sweep(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops sweeping; resolves once a sweep under way is over. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }

  /** One sweep (skipped while another runs here, or another replica has the sweep): how many turns it recovered. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepOnce().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #sweepOnce(): Promise<number> {
    const store = this.#store;
    if (!canSweep(store)) return 0;
    let candidates: string[];
    try {
      if (!(await store.takeSweep(this.#owner, this.#intervalMs))) return 0;
      candidates = await store.runningSessions(this.#afterMs, MAX_TURNS_PER_SWEEP);
    } catch {
      // The store is down: the next sweep tries again.
      return 0;
    }
    const recovered = await Promise.all(candidates.map((storeId) => this.#recoverOne(store, storeId)));
    return recovered.filter(Boolean).length;
  }

  async #recoverOne(store: Required<Pick<SessionStore, 'forgetRunning'>>, storeId: string): Promise<boolean> {
    const { sessionId, tenantId } = parseStoreId(storeId);
    try {
      const result = await this.#recover(sessionId, tenantId, LEASE_WAIT_MS);
      if (result === undefined) {
        await store.forgetRunning(storeId);
        return false;
      }
      this.#logger.info(
        { sessionId, tenantId, turnId: result.turnId, status: result.status },
        'recovered a turn a stopped replica left running',
      );
      return true;
    } catch (error) {
      // Its lease is held: a live replica runs it (a long turn), or a new message does.
      if (SessionBusyError.isInstance(error)) return false;
      this.#logger.warn({ sessionId, tenantId, err: error }, 'could not recover a stranded turn');
      return false;
    }
  }
}
