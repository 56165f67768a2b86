/**
 * What {@link TenantShares} knows of a session: its last turn has ended (or
 * it has none), is running, or waits for approvals.
 */
export type SessionState = 'ended' | 'running' | 'awaiting';

/** One tenant's sessions. */
interface Share {
  /**
   * The sessions not waiting for approvals, in the order their last turn
   * ended (or they were created): the ones that may be forgotten, once their
   * turn is not running (the store checks that when it evicts).
   */
  evictable: Set<string>;
  /** The sessions waiting for approvals: never forgotten to make room. */
  awaiting: Set<string>;
}

/**
 * The in-memory session store's per-tenant bookkeeping (`null` is the tenant
 * of sessions opened without one): how many sessions each tenant holds, how
 * many of them wait for approvals, its sessions that may be forgotten in
 * order of their last turn's end, and which tenant holds the most. Every
 * update is O(1) (tenants sit in buckets by size, and sizes change by one),
 * so a turn's writes never walk the sessions or the tenants. The store tells
 * it only a session's state changes, and a turn that starts and ends costs
 * two set operations (moving the session to the end of its order): the churn
 * bench's profile showed a set operation on every write cost about 1 µs a turn.
 */
export class TenantShares {
  readonly #shares = new Map<string | null, Share>();
  /** Tenants by how many sessions they hold. */
  readonly #bySize = new Map<number, Set<string | null>>();
  #largest = 0;

  /** How many sessions `tenant` holds. */
  sizeOf(tenant: string | null): number {
    const share = this.#shares.get(tenant);
    return share ? share.evictable.size + share.awaiting.size : 0;
  }

  /** How many of `tenant`'s sessions wait for approvals. */
  awaitingOf(tenant: string | null): number {
    return this.#shares.get(tenant)?.awaiting.size ?? 0;
  }

  /** The tenant holding the most sessions (undefined when none holds any). */
  largest(): string | null | undefined {
    for (const tenant of this.#bySize.get(this.#largest) ?? []) return tenant;
    return undefined;
  }

  /** `tenant`'s sessions that may be forgotten, least recently ended first (running ones included: skip them). */
  evictable(tenant: string | null): Iterable<string> {
    return this.#shares.get(tenant)?.evictable ?? [];
  }

  /**
   * Records that `sessionId` of `tenant` went from `previous` (undefined: the
   * share does not have it yet) to `state`; from `ended` to `ended`, that it
   * was written again (it moves to the end of the order).
   */
  place(tenant: string | null, sessionId: string, state: SessionState, previous?: SessionState): void {
    let share = this.#shares.get(tenant);
    if (!share) {
      share = { evictable: new Set(), awaiting: new Set() };
      this.#shares.set(tenant, share);
    }
    if (previous === undefined) {
      (state === 'awaiting' ? share.awaiting : share.evictable).add(sessionId);
      this.#resize(tenant, share.evictable.size + share.awaiting.size - 1, 1);
      return;
    }
    if (state === 'running' && previous === 'ended') return;
    if (previous === 'awaiting') share.awaiting.delete(sessionId);
    else share.evictable.delete(sessionId);
    (state === 'awaiting' ? share.awaiting : share.evictable).add(sessionId);
  }

  /** Forgets `sessionId` of `tenant`. */
  remove(tenant: string | null, sessionId: string): void {
    const share = this.#shares.get(tenant);
    if (!share || !(share.evictable.delete(sessionId) || share.awaiting.delete(sessionId))) return;
    const size = share.evictable.size + share.awaiting.size;
    this.#resize(tenant, size + 1, -1);
    if (size === 0) this.#shares.delete(tenant);
  }

  /** Moves the tenant from the bucket of `from` sessions to the next one up or down. */
  #resize(tenant: string | null, from: number, step: 1 | -1): void {
    const to = from + step;
    const bucket = this.#bySize.get(from);
    bucket?.delete(tenant);
    if (bucket?.size === 0) this.#bySize.delete(from);
    if (to > 0) {
      let next = this.#bySize.get(to);
      if (!next) {
        next = new Set();
        this.#bySize.set(to, next);
      }
      next.add(tenant);
    }
    if (to > this.#largest) this.#largest = to;
    else if (from === this.#largest && !this.#bySize.has(from)) this.#largest = to;
  }
}
