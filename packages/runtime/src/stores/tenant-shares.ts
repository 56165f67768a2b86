/**
 * What {@link TenantShares} knows of a session: its last turn has ended (or
 * it has none), is running, or waits for approvals.
 */
export type SessionState = 'ended' | 'running' | 'awaiting';

/** One tenant's sessions. */
interface Share {
  /** The sessions whose last turn has ended, least recently written first: the ones that may be forgotten. */
  ended: Set<string>;
  /** The sessions whose last turn is unfinished (never forgotten to make room) → true when it waits for approvals. */
  unfinished: Map<string, boolean>;
  /** How many of `unfinished` wait for approvals. */
  awaiting: number;
}

/**
 * The in-memory session store's per-tenant bookkeeping (`null` is the tenant
 * of sessions opened without one): how many sessions each tenant holds, how
 * many of them wait for approvals, its sessions that may be forgotten in
 * order of their last write, and which tenant holds the most. Every update
 * is O(1) (tenants sit in buckets by size, and sizes change by one), so a
 * turn's writes never walk the sessions or the tenants.
 */
export class TenantShares {
  readonly #shares = new Map<string | null, Share>();
  /** Tenants by how many sessions they hold. */
  readonly #bySize = new Map<number, Set<string | null>>();
  #largest = 0;

  /** How many sessions `tenant` holds. */
  sizeOf(tenant: string | null): number {
    const share = this.#shares.get(tenant);
    return share ? share.ended.size + share.unfinished.size : 0;
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

  /** `tenant`'s sessions whose last turn has ended, least recently written first (safe to forget while walking). */
  ended(tenant: string | null): Iterable<string> {
    return this.#shares.get(tenant)?.ended ?? [];
  }

  /** Records a write of the session in `state`: it becomes the tenant's most recently written. */
  place(tenant: string | null, sessionId: string, state: SessionState): void {
    let share = this.#shares.get(tenant);
    if (!share) {
      share = { ended: new Set(), unfinished: new Map(), awaiting: 0 };
      this.#shares.set(tenant, share);
    }
    const known = this.#take(share, sessionId);
    if (state === 'ended') share.ended.add(sessionId);
    else {
      share.unfinished.set(sessionId, state === 'awaiting');
      if (state === 'awaiting') share.awaiting += 1;
    }
    if (!known) this.#resize(tenant, share.ended.size + share.unfinished.size - 1, 1);
  }

  /** Forgets the session. */
  remove(tenant: string | null, sessionId: string): void {
    const share = this.#shares.get(tenant);
    if (!share || !this.#take(share, sessionId)) return;
    const size = share.ended.size + share.unfinished.size;
    this.#resize(tenant, size + 1, -1);
    if (size === 0) this.#shares.delete(tenant);
  }

  /** Takes the session out of its tenant's sets; true when it was there. */
  #take(share: Share, sessionId: string): boolean {
    if (share.ended.delete(sessionId)) return true;
    const awaiting = share.unfinished.get(sessionId);
    if (awaiting === undefined) return false;
    share.unfinished.delete(sessionId);
    if (awaiting) share.awaiting -= 1;
    return true;
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
