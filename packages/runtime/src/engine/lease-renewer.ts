import type { SessionLease } from '../stores/session-store.js';

const noop = () => {};

/**
 * Renews the session leases of running turns on one shared timer, rather
 * than a timer per turn: every lease is renewed within `intervalMs` of being
 * taken and then every `intervalMs`, which keeps it alive as long as the
 * interval is well under the lease's time to live. The timer never keeps the
 * process alive.
 */
export class LeaseRenewer {
  readonly #leases = new Set<SessionLease>();
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Keeps `lease` renewed until {@link LeaseRenewer.delete}. */
  add(lease: SessionLease): void {
    this.#leases.add(lease);
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      // A failed renewal is not fatal here: the turn finds out when its lease is gone.
      for (const held of this.#leases) void held.renew().catch(noop);
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops renewing `lease`. */
  delete(lease: SessionLease): void {
    this.#leases.delete(lease);
  }
}
