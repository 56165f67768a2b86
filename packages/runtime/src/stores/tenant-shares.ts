/**
 * What {@link TenantShares} knows of a session: its last turn has ended (or
 * it has none), is running, or waits for approvals.
 */
export type SessionState = 'ended' | 'running' | 'awaiting';

/** One tenant's sessions. */
interface Share {
  /** How many sessions it holds. */
  size: number;
  /** How many of them wait for approvals (never forgotten to make room). */
  awaiting: number;
  /**
   * Once the store has had more than one tenant: its sessions not waiting for
   * approvals, in the order their last turn ended (or they were created), the
   * ones that may be forgotten once their turn is not running (the store
   * checks that when it evicts). Undefined while there is one tenant: the
   * store's own order of writes serves then.
   */
  order: Set<string> | undefined;
}

/** A session as the store holds it, for {@link TenantShares} to order a tenant's sessions. */
export type PlacedSession = readonly [
  sessionId: string,
  tenant: string | null,
  state: SessionState | undefined,
];

/**
 * The in-memory session store's per-tenant bookkeeping (`null` is the tenant
 * of sessions opened without one): how many sessions each tenant holds, how
 * many of them wait for approvals, and which tenant holds the most. Every
 * update is O(1) (tenants sit in buckets by size, and sizes change by one),
 * so a turn's writes never walk the sessions or the tenants.
 *
 * Each tenant's own eviction order (a second order of every session, in
 * sets) is kept only once a second tenant appears: with one tenant (an app
 * without keys, or with one) the store's map, in order of last writes, is
 * that order already. The churn bench measured the sets at about 0.7 µs and
 * 0.1 KiB a session; the store tells the shares only of a session's state
 * changes, and a turn that starts and ends then costs two set operations.
 */
export class TenantShares {
  readonly #shares = new Map<string | null, Share>();
  /** Tenants by how many sessions they hold. */
  readonly #bySize = new Map<number, Set<string | null>>();
  #largest = 0;
  /** Whether each tenant's order is kept (there have been two tenants). */
  #ordered = false;
  readonly #sessionsInOrder: () => Iterable<PlacedSession>;

  /** @param sessionsInOrder - the store's sessions, least recently written first, to order them by tenant once needed. */
  constructor(sessionsInOrder: () => Iterable<PlacedSession>) {
    this.#sessionsInOrder = sessionsInOrder;
  }

  /** How many sessions `tenant` holds. */
  sizeOf(tenant: string | null): number {
    return this.#shares.get(tenant)?.size ?? 0;
  }

  /** How many of `tenant`'s sessions wait for approvals. */
  awaitingOf(tenant: string | null): number {
    return this.#shares.get(tenant)?.awaiting ?? 0;
  }

  /** The tenant holding the most sessions (undefined when none holds any). */
  largest(): string | null | undefined {
    for (const tenant of this.#bySize.get(this.#largest) ?? []) return tenant;
    return undefined;
  }

  /**
   * `tenant`'s sessions that may be forgotten, least recently ended first
   * (running ones included: skip them); undefined while there has been one
   * tenant only: then take the store's own order.
   */
  evictable(tenant: string | null): Iterable<string> | undefined {
    return this.#ordered ? (this.#shares.get(tenant)?.order ?? []) : undefined;
  }

  /**
   * Records that `sessionId` of `tenant` went from `previous` (undefined: the
   * share does not have it yet) to `state`; from `ended` to `ended`, that it
   * was written again (it moves to the end of the order).
   */
  place(tenant: string | null, sessionId: string, state: SessionState, previous?: SessionState): void {
    let share = this.#shares.get(tenant);
    if (!share) {
      share = { size: 0, awaiting: 0, order: undefined };
      this.#shares.set(tenant, share);
      if (!this.#ordered && this.#shares.size > 1) this.#order();
    }
    if (previous === undefined) {
      share.size += 1;
      this.#resize(tenant, share.size - 1, 1);
    } else {
      if (state === 'running' && previous === 'ended') return;
      if (previous === 'awaiting') share.awaiting -= 1;
      else share.order?.delete(sessionId);
    }
    if (state === 'awaiting') share.awaiting += 1;
    else share.order?.add(sessionId);
  }

  /** Forgets `sessionId` of `tenant`, which the share had as `placed` (undefined: it did not have it). */
  remove(tenant: string | null, sessionId: string, placed: SessionState | undefined): void {
    const share = this.#shares.get(tenant);
    if (!share || placed === undefined) return;
    if (placed === 'awaiting') share.awaiting -= 1;
    else share.order?.delete(sessionId);
    share.size -= 1;
    this.#resize(tenant, share.size + 1, -1);
    if (share.size === 0) this.#shares.delete(tenant);
  }

  /** Starts keeping each tenant's order, from the store's order of writes. */
  #order(): void {
    this.#ordered = true;
    for (const share of this.#shares.values()) share.order = new Set();
    for (const [sessionId, tenant, state] of this.#sessionsInOrder()) {
      if (state !== undefined && state !== 'awaiting') this.#shares.get(tenant)?.order?.add(sessionId);
    }
  }

  /** Moves the tenant from the bucket of `from` sessions to the next one up or down. */
  #resize(tenant: string | null, from: number, step: 1 | -1): void {
    const to = from + step;
    const bucket = this.#bySize.get(from);
    if (to > 0 && bucket?.size === 1 && !this.#bySize.has(to)) {
      // Alone in its bucket (one tenant, say), the tenant moves with it: no new set, and the map is added to
      // before it is taken from, so it never empties (an emptied map or set is one V8 reallocates on the next
      // entry; measured on the churn bench: about 150 B a new session).
      this.#bySize.set(to, bucket);
      this.#bySize.delete(from);
    } else {
      if (to > 0) {
        let next = this.#bySize.get(to);
        if (!next) {
          next = new Set();
          this.#bySize.set(to, next);
        }
        next.add(tenant);
      }
      bucket?.delete(tenant);
      if (bucket?.size === 0) this.#bySize.delete(from);
    }
    if (to > this.#largest) this.#largest = to;
    else if (from === this.#largest && !this.#bySize.has(from)) this.#largest = to;
  }
}
