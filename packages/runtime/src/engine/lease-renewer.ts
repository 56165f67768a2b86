import { isPromiseLike } from '../promise-like.js';
import type { SessionLease } from '../stores/session-store.js';

/**
 * Renews the session leases of running turns on one shared timer, rather
 * than a timer per turn: every lease is renewed within `intervalMs` of being
 * taken and then every `intervalMs`, which keeps it alive as long as the
 * interval is well under the lease's time to live. A renewal that finds the
 * lease lost (it expired and another turn took the session) calls the
 * lease's `onLost`, so that its turn stops at once; a renewal that fails
 * (the store is unreachable) is tried again on the next tick. The timer never
 * keeps the process alive.
 */
export class LeaseRenewer {
  readonly #leases = new Map<SessionLease, () => void>();
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Keeps `lease` renewed until {@link LeaseRenewer.delete}; `onLost` runs once if it is lost. */
  add(lease: SessionLease, onLost: () => void): void {
    this.#leases.set(lease, onLost);
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#renewAll(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops renewing `lease`. */
  delete(lease: SessionLease): void {
    this.#leases.delete(lease);
  }

  #renewAll(): void {
    for (const [lease, onLost] of this.#leases) {
      const lost = () => {
        if (this.#leases.delete(lease)) onLost();
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
