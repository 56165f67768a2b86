import { createId, SessionBusyError, StoreUnavailableError } from '@switchboard/core';
import type { LeaseOptions, SessionLease } from './session-store.js';

/** A lease given out by {@link InMemoryLeases}; it is also the holder record of its session. */
class InMemoryLease implements SessionLease {
  readonly sessionId: string;
  readonly ttlMs: number;
  expiresAt: number;
  readonly #leases: InMemoryLeases;
  #token: string | undefined;

  constructor(leases: InMemoryLeases, sessionId: string, ttlMs: number) {
    this.#leases = leases;
    this.sessionId = sessionId;
    this.ttlMs = ttlMs;
    this.expiresAt = Date.now() + ttlMs;
  }

  /** Made when first read: a turn's writes check the lease itself, so most leases never need one. */
  get token(): string {
    this.#token ??= createId('lease');
    return this.#token;
  }

  renew(): boolean {
    return this.#leases.renew(this);
  }

  release(): void {
    this.#leases.release(this);
  }
}

interface Waiter {
  ttlMs: number;
  grant(holder: InMemoryLease): void;
  fail(error: unknown): void;
}

interface LeaseState {
  holder?: InMemoryLease;
  waiters: Waiter[];
  /** Fires when the holder's lease expires while others wait, so they can take over. */
  expiryTimer?: ReturnType<typeof setTimeout>;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/**
 * Fair (FIFO) per-session mutexes with a time to live, for a single process.
 *
 * A released lease passes straight to the longest waiter; a lease whose
 * holder neither renews nor releases it expires after its ttl and passes on
 * the same way, which is how a stuck turn stops blocking its session.
 */
export class InMemoryLeases {
  readonly #states = new Map<string, LeaseState>();
  /** The session whose idle state is the map's last entry, kept until another session's comes (see `#forgetIfIdle`). */
  #keptIdle: string | undefined;

  /** Waits for the session's lease; throws `SessionBusyError` after `waitMs`, or the signal's reason when aborted. */
  acquire(sessionId: string, { ttlMs, waitMs, signal }: LeaseOptions): Promise<SessionLease> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const state = this.#state(sessionId);
    this.#passOnIfExpired(sessionId, state);
    if (!state.holder && state.waiters.length === 0)
      return Promise.resolve(this.#hold(sessionId, state, ttlMs));
    return new Promise<SessionLease>((resolve, reject) => {
      const startedAt = Date.now();
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = state.waiters.indexOf(waiter);
        if (index >= 0) state.waiters.splice(index, 1);
        this.#schedule(sessionId, state);
      };
      const waiter: Waiter = {
        ttlMs,
        grant: (holder) => {
          settle();
          resolve(holder);
        },
        fail: (error) => {
          settle();
          this.#forgetIfIdle(sessionId, state);
          reject(error);
        },
      };
      const onAbort = () => waiter.fail(abortReason(signal as AbortSignal));
      const timer = setTimeout(
        () => waiter.fail(new SessionBusyError({ sessionId, waitedMs: Date.now() - startedAt })),
        waitMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      state.waiters.push(waiter);
      this.#schedule(sessionId, state);
    });
  }

  /** The session's lease at once when nobody holds it or waits for it, otherwise undefined. */
  tryAcquire(sessionId: string, ttlMs: number): SessionLease | undefined {
    const state = this.#states.get(sessionId);
    if (state === undefined) return this.#hold(sessionId, this.#state(sessionId), ttlMs);
    this.#passOnIfExpired(sessionId, state);
    return state.holder || state.waiters.length > 0 ? undefined : this.#hold(sessionId, state, ttlMs);
  }

  /** Extends `lease` by its ttl; false when it was released or expired and taken over. */
  renew(lease: SessionLease): boolean {
    const state = this.#states.get(lease.sessionId);
    // An expired lease nobody has taken is still ours: renewing it is safe.
    if (state?.holder !== lease) return false;
    state.holder.expiresAt = Date.now() + state.holder.ttlMs;
    this.#schedule(lease.sessionId, state);
    return true;
  }

  /** Releases `lease` if it still holds its session, passing the session to the next waiter. Idempotent. */
  release(lease: SessionLease): void {
    const state = this.#states.get(lease.sessionId);
    if (state?.holder !== lease) return;
    this.#passOn(lease.sessionId, state);
    this.#schedule(lease.sessionId, state);
  }

  /**
   * Whether the lease with `token` still holds the session: it has not been
   * released, and has not expired and passed to a waiter. (An expired lease
   * nobody has taken over still holds, as its renewal would.)
   */
  holds(sessionId: string, token: string): boolean {
    return this.#states.get(sessionId)?.holder?.token === token;
  }

  /** {@link InMemoryLeases.holds} for a lease object: the holder itself, or one with its token. */
  holdsLease(sessionId: string, lease: SessionLease): boolean {
    const holder = this.#states.get(sessionId)?.holder;
    return holder !== undefined && (holder === lease || holder.token === lease.token);
  }

  /** Whether anyone holds the session's lease (and it has not expired). */
  isHeld(sessionId: string): boolean {
    const holder = this.#states.get(sessionId)?.holder;
    return holder !== undefined && holder.expiresAt > Date.now();
  }

  /** Rejects every waiter and stops every timer. */
  close(): void {
    for (const [sessionId, state] of this.#states) {
      clearTimeout(state.expiryTimer);
      for (const waiter of [...state.waiters]) {
        waiter.fail(
          new StoreUnavailableError({
            message: `The session store was closed while waiting for session '${sessionId}'`,
          }),
        );
      }
    }
    this.#states.clear();
    this.#keptIdle = undefined;
  }

  #state(sessionId: string): LeaseState {
    let state = this.#states.get(sessionId);
    if (!state) {
      state = { waiters: [] };
      this.#states.set(sessionId, state);
      this.#dropKeptIdle();
    }
    return state;
  }

  #hold(sessionId: string, state: LeaseState, ttlMs: number): InMemoryLease {
    const holder = new InMemoryLease(this, sessionId, ttlMs);
    state.holder = holder;
    // An expired holder that passed on to nobody took its state out of the map: the new holder puts it back.
    if (this.#states.get(sessionId) !== state) {
      this.#states.set(sessionId, state);
      this.#dropKeptIdle();
    }
    return holder;
  }

  /** Forgets the kept idle state, unless its session was taken again meanwhile. */
  #dropKeptIdle(): void {
    const kept = this.#keptIdle;
    if (kept === undefined) return;
    this.#keptIdle = undefined;
    const state = this.#states.get(kept);
    if (state && !state.holder && state.waiters.length === 0) this.#states.delete(kept);
  }

  /** Hands the lease to the next waiter, or frees it. */
  #passOn(sessionId: string, state: LeaseState): void {
    state.holder = undefined;
    const next = state.waiters[0];
    if (next) next.grant(this.#hold(sessionId, state, next.ttlMs));
    else this.#forgetIfIdle(sessionId, state);
  }

  #passOnIfExpired(sessionId: string, state: LeaseState): void {
    if (state.holder && state.holder.expiresAt <= Date.now()) this.#passOn(sessionId, state);
  }

  /** Keeps a timer on the holder's expiry while anyone waits. */
  #schedule(sessionId: string, state: LeaseState): void {
    clearTimeout(state.expiryTimer);
    state.expiryTimer = undefined;
    const { holder } = state;
    if (!holder || state.waiters.length === 0) return;
    state.expiryTimer = setTimeout(
      () => {
        state.expiryTimer = undefined;
        this.#passOnIfExpired(sessionId, state);
        this.#schedule(sessionId, state);
      },
      Math.max(0, holder.expiresAt - Date.now()) + 1,
    );
  }

  #forgetIfIdle(sessionId: string, state: LeaseState): void {
    if (!state.holder && state.waiters.length === 0 && this.#states.get(sessionId) === state) {
      clearTimeout(state.expiryTimer);
      // The map's last entry stays, idle (as good as none), until another session's comes: a map emptied at
      // every turn's end is one V8 reallocates at the next turn's start (measured on the churn bench: about
      // 150 B a turn of one session at a time).
      if (this.#states.size === 1) this.#keptIdle = sessionId;
      else this.#states.delete(sessionId);
    }
  }
}
