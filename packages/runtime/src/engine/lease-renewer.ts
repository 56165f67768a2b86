import { SessionBusyError } from '@switchboard/core';
import { isPromiseLike } from '../promise-like.js';
import type { SessionLease } from '../stores/session-store.js';
import type { TurnControl } from './turn-control.js';

/** A lease {@link LeaseRenewer} holds, with the turn holding it; give it back to {@link LeaseRenewer.delete}. */
export interface HeldLease {
  readonly lease: SessionLease;
  readonly control: TurnControl;
  /** Its place in the renewer's list (-1 once deleted). */
  at: number;
}

/**
 * The sessions this process holds, each with the turn that holds it. Renews
 * their leases on one shared timer, rather than a timer per turn: every
 * lease is renewed within `intervalMs` of being taken and then every
 * `intervalMs`, which keeps it alive as long as the interval is well under
 * the lease's time to live. A renewal that finds the lease lost (it expired
 * and another turn took the session) stops its turn at once; a renewal that
 * fails (the store is unreachable) is tried again on the next tick. The
 * timer never keeps the process alive. It is also where a cancel finds the
 * turn to stop (one list for both, not two, on the turn path).
 */
export class LeaseRenewer {
  /**
   * The held leases, in a list each entry knows its place in, removed by moving the last into the gap: a
   * map emptied by each turn's end is one V8 reallocates on the next turn (measured on the churn bench:
   * about 150 B a turn), and a list's storage stays.
   */
  readonly #held: HeldLease[] = [];
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Keeps `lease` renewed until {@link LeaseRenewer.delete}; `control` is stopped if it is lost. */
  add(lease: SessionLease, control: TurnControl): HeldLease {
    const held: HeldLease = { lease, control, at: this.#held.length };
    this.#held.push(held);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#renewAll(), this.#intervalMs);
      this.#timer.unref();
    }
    return held;
  }

  /** How many leases this process holds now. */
  get size(): number {
    return this.#held.length;
  }

  /** Stops renewing a lease; false when it was no longer held. */
  delete(held: HeldLease): boolean {
    const { at } = held;
    if (at < 0) return false;
    held.at = -1;
    const last = this.#held.pop() as HeldLease;
    if (last !== held) {
      last.at = at;
      this.#held[at] = last;
    }
    return true;
  }

  /** Stops the session's running turn here, if it is `turnId` (or any, when omitted); true when one was stopped. */
  stop(sessionId: string, turnId: string | undefined, reason: (turnId: string) => unknown): boolean {
    for (const { lease, control } of this.#held) {
      if (lease.sessionId !== sessionId || (turnId !== undefined && control.turnId !== turnId)) continue;
      control.stop(reason(control.turnId ?? 'unknown'));
      return true;
    }
    return false;
  }

  /** Aborts the agents of every running turn (server shutdown). */
  abortAgents(reason: unknown): void {
    for (const { control } of [...this.#held]) control.abortAgents(reason);
  }

  #renewAll(): void {
    // A copy: a renewal that finds its lease lost at once takes it out of the list.
    for (const held of [...this.#held]) {
      const { lease, control } = held;
      const lost = () => {
        if (this.delete(held)) {
          control.stop(new SessionBusyError({ sessionId: lease.sessionId, leaseLost: true }));
        }
      };
      try {
        const renewed = lease.renew();
        if (isPromiseLike(renewed)) {
          renewed.then(
            (stillHeld) => stillHeld || lost(),
            () => {},
          );
        } else if (!renewed) lost();
      } catch {
        // Unreachable store: the next tick tries again; fencing still guards every write.
      }
    }
  }
}
