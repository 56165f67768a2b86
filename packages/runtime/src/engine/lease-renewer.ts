import { SessionBusyError } from '@switchboard/core';
import { isPromiseLike } from '../promise-like.js';
import type { SessionLease } from '../stores/session-store.js';
import type { TurnControl } from './turn-control.js';

/**
 * The sessions this process holds, each with the turn that holds it. Renews
 * their leases on one shared timer, rather than a timer per turn: every
 * lease is renewed within `intervalMs` of being taken and then every
 * `intervalMs`, which keeps it alive as long as the interval is well under
 * the lease's time to live. A renewal that finds the lease lost (it expired
 * and another turn took the session) stops its turn at once; a renewal that
 * fails (the store is unreachable) is tried again on the next tick. The
 * timer never keeps the process alive. It is also where a cancel finds the
 * turn to stop (one map per turn, not two, on the turn path).
 */
export class LeaseRenewer {
  readonly #held = new Map<SessionLease, TurnControl>();
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Keeps `lease` renewed until {@link LeaseRenewer.delete}; `control` is stopped if it is lost. */
  add(lease: SessionLease, control: TurnControl): void {
    this.#held.set(lease, control);
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#renewAll(), this.#intervalMs);
    this.#timer.unref();
  }

  /** How many leases this process holds now. */
  get size(): number {
    return this.#held.size;
  }

  /** Stops renewing `lease`. */
  delete(lease: SessionLease): void {
    this.#held.delete(lease);
  }

  /** Stops the session's running turn here, if it is `turnId` (or any, when omitted); true when one was stopped. */
  stop(sessionId: string, turnId: string | undefined, reason: (turnId: string) => unknown): boolean {
    for (const [lease, control] of this.#held) {
      if (lease.sessionId !== sessionId || (turnId !== undefined && control.turnId !== turnId)) continue;
      control.stop(reason(control.turnId ?? 'unknown'));
      return true;
    }
    return false;
  }

  /** Aborts the agents of every running turn (server shutdown). */
  abortAgents(reason: unknown): void {
    for (const control of this.#held.values()) control.abortAgents(reason);
  }

  #renewAll(): void {
    for (const [lease, control] of this.#held) {
      const lost = () => {
        if (this.#held.delete(lease)) {
          control.stop(new SessionBusyError({ sessionId: lease.sessionId, leaseLost: true }));
        }
      };
      try {
        const renewed = lease.renew();
        if (isPromiseLike(renewed)) {
          renewed.then(
            (held) => held || lost(),
            () => {},
          );
        } else if (!renewed) lost();
      } catch {
        // Unreachable store: the next tick tries again; fencing still guards every write.
      }
    }
  }
}
