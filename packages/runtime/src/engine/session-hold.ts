import { StoreUnavailableError, TurnInterruptedError } from '@switchboard/core';
import type { EngineMetrics } from '../metrics/engine-metrics.js';
import { isPromiseLike } from '../promise-like.js';
import type { LeaseOptions, SessionLease, SessionStore } from '../stores/session-store.js';
import { sessionStoreId } from '../stores/tenant-sessions.js';
import { LeaseRenewer } from './lease-renewer.js';
import { type Steps, settled } from './steps.js';
import type { TurnControl } from './turn-control.js';

/** Own cancels waiting to come back, at most (a store that never echoes them must not grow the map). */
const MAX_OWN_CANCELS = 10_000;

const noop = () => {};

/** What the session hold needs from its app. */
export interface HoldParts {
  sessions: SessionStore;
  /** Aborted to abandon running turns (server shutdown after the grace period). */
  signal: AbortSignal;
  /** Where the count of held leases is reported. */
  metrics?: EngineMetrics;
  /** The session lease's time to live. */
  leaseTtlMs: number;
}

/**
 * The sessions this engine holds: it takes a session's lease for a request,
 * keeps it renewed while the request runs (a lost lease stops the turn at
 * once), releases it at the end, and relays cancels: a cancel stops the
 * session's running turn here at once and reaches other replicas through
 * the store (`publishCancel` / `onCancel`). Server shutdown aborts the
 * agents of every turn held here.
 */
export class SessionHold {
  readonly #parts: HoldParts;
  readonly #renewer: LeaseRenewer;
  readonly #stopListening: () => void;
  /** This engine's cancels of "whichever turn runs" not yet back from the store, by session (see `stopRunning`). */
  readonly #ownCancels = new Map<string, number>();

  constructor(parts: HoldParts) {
    this.#parts = parts;
    this.#renewer = new LeaseRenewer(Math.max(250, Math.floor(parts.leaseTtlMs / 3)));
    const { signal } = parts;
    const onShutdown = () => this.#renewer.abortAgents(signal.reason);
    signal.addEventListener('abort', onShutdown, { once: true });
    const unsubscribe =
      parts.sessions.onCancel?.((sessionId, turnId) => {
        // This engine's own "whichever turn runs" cancel coming back: it stopped that turn already, and the
        // turn running now is the one that sent it (the `interrupt` policy's new message).
        if (turnId === undefined && this.#ownEcho(sessionId)) return;
        this.#renewer.stop(sessionId, turnId, (id) => interruption(id, 'cancelled'));
      }) ?? noop;
    const unwatch = parts.metrics?.watchLeases(() => this.#renewer.size);
    this.#stopListening = () => {
      signal.removeEventListener('abort', onShutdown);
      unsubscribe();
      unwatch?.();
    };
  }

  /** Stops listening for cancels and shutdown. */
  close(): void {
    this.#stopListening();
  }

  /**
   * Runs `body` while holding the session: the lease is renewed (a lost
   * lease stops the turn at once), the turn can be stopped by a cancel, and
   * the lease is released at the end. The release is awaited, since the
   * session's next message may go to another replica that must find it
   * free, except after a store failure: then it is left to the store to
   * send once the store is back, rather than making the client wait twice.
   */
  *holding<T>(
    sessions: SessionStore,
    sessionId: string,
    waitMs: number,
    control: TurnControl,
    body: (lease: SessionLease) => Steps<T>,
    withOpenTurn = false,
  ): Steps<T> {
    const { signal, leaseTtlMs } = this.#parts;
    const options: LeaseOptions = { ttlMs: leaseTtlMs, waitMs, signal };
    if (withOpenTurn) options.withOpenTurn = true;
    // Inline rather than `yield* settled(…)`: one generator fewer on every turn.
    const acquiring = sessions.acquireLease(sessionId, options);
    const lease = isPromiseLike(acquiring) ? ((yield acquiring) as SessionLease) : acquiring;
    const held = this.#renewer.add(lease, control);
    let storeDown = false;
    try {
      return yield* body(lease);
    } catch (error) {
      storeDown = StoreUnavailableError.isInstance(error);
      throw error;
    } finally {
      this.#renewer.delete(held);
      let released: void | Promise<void> | undefined;
      try {
        released = lease.release();
      } catch {
        // The store keeps releases it could not send; the lease expires by itself otherwise.
      }
      if (isPromiseLike(released) && !storeDown) yield released.then(undefined, noop);
    }
  }

  /** Stops the session's running turn wherever it runs: here at once, elsewhere through the store. */
  *stopRunning(
    sessions: SessionStore,
    sessionId: string,
    tenantId: string | undefined,
    turnId: string | undefined,
    why: string,
  ): Steps<void> {
    const storeId = sessionStoreId(sessionId, tenantId);
    this.#renewer.stop(storeId, turnId, (id) => interruption(id, why));
    if (!sessions.publishCancel) return;
    if (turnId !== undefined) {
      yield* settled(sessions.publishCancel(sessionId, turnId));
      return;
    }
    if (this.#ownCancels.size >= MAX_OWN_CANCELS) this.#ownCancels.clear();
    this.#ownCancels.set(storeId, (this.#ownCancels.get(storeId) ?? 0) + 1);
    try {
      yield* settled(sessions.publishCancel(sessionId, turnId));
    } catch (error) {
      // Not published, so it will not come back.
      this.#ownEcho(storeId);
      throw error;
    }
  }

  /** Counts off one of this engine's own cancels of `storeId`; false when none is on its way back. */
  #ownEcho(storeId: string): boolean {
    const count = this.#ownCancels.get(storeId);
    if (count === undefined) return false;
    if (count <= 1) this.#ownCancels.delete(storeId);
    else this.#ownCancels.set(storeId, count - 1);
    return true;
  }
}

/** The error a turn stopped by a cancel (or a new message) ends with. */
export function interruption(turnId: string, reason: string): TurnInterruptedError {
  return new TurnInterruptedError({ turnId, reason });
}
