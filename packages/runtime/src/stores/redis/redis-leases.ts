import { SessionBusyError } from '@switchboard/core';
import { InMemoryLeases } from '../in-memory-leases.js';
import type { LeaseOptions, SessionLease } from '../session-store.js';
import { RELEASE_LEASE, RENEW_LEASE, SEIZE_LEASE, TAKE_LEASE } from './lua-scripts.js';
import type { RedisConnection } from './redis-connection.js';
import type { SessionKeys } from './redis-keys.js';
import type { ReplicaLiveness } from './redis-liveness.js';

/** The first pause between two attempts on a lease held elsewhere; it doubles up to {@link MAX_POLL_MS}. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;
/** Releases that did not reach Redis, kept for retrying; more are dropped (their leases expire by themselves). */
const MAX_UNRELEASED = 10_000;
/** How often releases that did not reach Redis are sent again while the connection looks up. */
const RETRY_RELEASE_MS = 500;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/** Waits `ms`, rejecting with the signal's reason when it aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * @internal Per-session leases across processes: taken by a script that sets
 * the key to the holder's token only when it is free, renewed and released by
 * compare-and-set scripts on the token, so a crashed holder's lease expires.
 *
 * Within one process, waiters first queue in a fair local lease, and only the
 * head of that queue polls Redis (with a short, growing pause). That keeps
 * arrival order inside a replica, hands a released session to the next local
 * waiter without a polling delay, and keeps polling load at one client per
 * session and replica.
 *
 * A release that does not reach Redis (it is down or restarting) is kept and
 * sent again as soon as the connection is back, so that a session does not
 * stay blocked until its lease's ttl runs out after an outage.
 *
 * Each lease names this replica (see {@link ReplicaLiveness}): a waiter that
 * finds a session held by a replica that is gone takes the lease over with a
 * compare-and-set, so a dead replica's sessions are served again within about
 * the liveness ttl rather than the lease's.
 */
export class RedisLeases {
  readonly #local = new InMemoryLeases();
  readonly #connection: RedisConnection;
  readonly #keys: (sessionId: string) => SessionKeys;
  readonly #idleTtlMs: number;
  readonly #liveness: ReplicaLiveness;
  /**
   * Releases to send again, by lease key and token (a session may have several: the lease of a turn cut
   * short and a later request's failed attempt), with until when each could still hold.
   */
  readonly #unreleased = new Map<string, { key: string; token: string; until: number }>();
  readonly #stopRetrying: () => void;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    connection: RedisConnection,
    keys: (sessionId: string) => SessionKeys,
    idleTtlMs: number,
    liveness: ReplicaLiveness,
  ) {
    this.#connection = connection;
    this.#keys = keys;
    this.#idleTtlMs = idleTtlMs;
    this.#liveness = liveness;
    this.#stopRetrying = connection.onReady(() => this.#retryReleases());
  }

  /**
   * Waits for the session's lease; `SessionBusyError` after `waitMs`,
   * `StoreUnavailableError` when Redis is down. With `withOpenTurn`, only the
   * local queue is waited for: the lease is taken in Redis by the turn's
   * opening script (see {@link RedisLeases.taking}), which saves a round trip.
   */
  async acquire(sessionId: string, options: LeaseOptions): Promise<SessionLease> {
    const startedAt = Date.now();
    // Before any command of this replica's first lease, on the same connection.
    this.#liveness.start();
    const local = await this.#local.acquire(sessionId, options);
    const lease = new RedisLease(
      this,
      local,
      this.#liveness.token(local.token),
      this.#keys(sessionId),
      options,
      startedAt,
    );
    if (!options.withOpenTurn) await this.#take(lease);
    return lease;
  }

  /** The lease ttl for a script to take `lease` with (it is not taken yet), or '' when it is held already. */
  taking(lease: SessionLease | undefined): string {
    return lease instanceof RedisLease && lease.state === 'pending' ? String(lease.ttlMs) : '';
  }

  /**
   * Records that a script taking `lease` is on its way (`opening`: a release
   * then goes out, in case it ran), or that it took it (`held`).
   */
  took(lease: SessionLease | undefined, state: 'opening' | 'held'): void {
    if (lease instanceof RedisLease && (lease.state === 'pending' || lease.state === 'opening'))
      lease.state = state;
  }

  /**
   * Takes `lease` the usual way (polling until the session is free), after
   * a script found it busy (`retaking`: the lease was counted as taken while
   * the script ran, and it was not).
   */
  async wait(
    lease: SessionLease | undefined,
    { retaking = false }: { retaking?: boolean } = {},
  ): Promise<void> {
    if (!(lease instanceof RedisLease)) return;
    if (retaking && lease.state === 'opening') lease.state = 'pending';
    if (lease.state === 'pending') await this.#take(lease);
  }

  /**
   * Records that the holder's last write, which releases `lease` in Redis, is
   * on its way: from now on the lease is not renewed (a renewal that reached
   * Redis after the release would find nothing to extend).
   */
  releasing(lease: SessionLease | undefined): void {
    if (lease instanceof RedisLease && lease.state === 'held') lease.state = 'closing';
  }

  /** Records that a script released `lease` in Redis (with the holder's last write). */
  released(lease: SessionLease | undefined): void {
    if (lease instanceof RedisLease && lease.state !== 'released' && lease.state !== 'finished') {
      lease.state = 'finished';
      lease.local.release();
    }
  }

  /**
   * Rejects local waiters and stops local timers; the promise settles (never
   * rejecting) once this replica's liveness key is deleted.
   */
  close(): Promise<void> {
    this.#stopRetrying();
    clearTimeout(this.#retryTimer);
    this.#unreleased.clear();
    this.#local.close();
    return this.#liveness.close();
  }

  /** Renews a held lease in Redis, and the session's keys' expiry with it. */
  async renew(lease: RedisLease): Promise<boolean> {
    const { keys, token, ttlMs } = lease;
    const renewKeys = [keys.lease, keys.messages, keys.turns, keys.requests];
    const reply = await this.#connection.run('renew a session lease', (client) =>
      RENEW_LEASE.run(client, renewKeys, [token, ttlMs, this.#idleTtlMs]),
    );
    // The turn ended (or began ending) while this renewal was on its way: nothing was lost, and since a
    // renewal only extends the holder's own token, nothing was taken again either.
    if (lease.state !== 'held') return true;
    if (reply !== 1) return false;
    lease.local.renew();
    return true;
  }

  /** Releases a held lease in Redis (remembered for later when Redis is down). */
  async release(lease: RedisLease): Promise<void> {
    const { keys, token, ttlMs } = lease;
    try {
      await this.#connection.run('release a session lease', (client) =>
        RELEASE_LEASE.run(client, [keys.lease], [token]),
      );
    } catch {
      this.#remember(keys.lease, token, ttlMs);
    }
  }

  /**
   * Polls until the lease is taken (free, or held by a replica that is gone)
   * or its wait runs out.
   */
  async #take(lease: RedisLease): Promise<void> {
    const { keys, local, token, ttlMs, waitMs, signal, startedAt } = lease;
    try {
      for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
        const holder = await this.#connection.run('acquire a session lease', (client) =>
          TAKE_LEASE.run(client, [keys.lease], [token, ttlMs]),
        );
        if (holder === '' || (await this.#seize(lease, String(holder)))) {
          lease.state = 'held';
          return;
        }
        const remaining = startedAt + waitMs - Date.now();
        if (remaining <= 0)
          throw new SessionBusyError({ sessionId: local.sessionId, waitedMs: Date.now() - startedAt });
        // Keep our place at the head of the local queue for as long as we poll.
        local.renew();
        // Jitter keeps replicas polling the same session from moving in lockstep.
        await pause(Math.min(poll * (0.5 + Math.random()), remaining), signal);
      }
    } catch (error) {
      // A command that timed out may still reach Redis later; queued behind it on the same connection,
      // this compare-and-delete frees the session as soon as it does (and does nothing otherwise).
      RELEASE_LEASE.run(this.#connection.client, [keys.lease], [token]).catch(() => {
        this.#remember(keys.lease, token, ttlMs);
      });
      lease.state = 'released';
      local.release();
      throw error;
    }
  }

  /** Takes the lease from `holder` when its replica is gone; true when taken. */
  async #seize(lease: RedisLease, holder: string): Promise<boolean> {
    if (!(await this.#liveness.abandoned(holder))) return false;
    const { keys, token, ttlMs } = lease;
    const taken = await this.#connection.run('take over a session lease', (client) =>
      SEIZE_LEASE.run(client, [keys.lease], [holder, token, ttlMs]),
    );
    return taken === 1;
  }

  #remember(key: string, token: string, ttlMs: number): void {
    if (this.#unreleased.size >= MAX_UNRELEASED) return;
    this.#unreleased.set(`${key}\n${token}`, { key, token, until: Date.now() + ttlMs });
    // Also on a timer: a hung server that comes back (SIGCONT) never reconnects, so no 'ready' follows.
    this.#retryTimer ??= setTimeout(() => {
      this.#retryTimer = undefined;
      this.#retryReleases();
    }, RETRY_RELEASE_MS);
    this.#retryTimer.unref();
  }

  #retryReleases(): void {
    if (this.#unreleased.size === 0) return;
    const now = Date.now();
    for (const [entry, { key, token, until }] of this.#unreleased) {
      this.#unreleased.delete(entry);
      if (until <= now) continue;
      this.#connection
        .run('release a session lease', (client) => RELEASE_LEASE.run(client, [key], [token]))
        .catch(() => this.#remember(key, token, until - Date.now()));
    }
  }
}

/**
 * A session lease in Redis: `pending` until a script or `SET NX` takes it
 * (with `withOpenTurn`, the turn's opening script does), `held`, `closing`
 * while the holder's last write (which releases it) is on its way, then
 * `finished` once that write released it, or `released` by `release()`.
 */
class RedisLease implements SessionLease {
  state: 'pending' | 'opening' | 'held' | 'closing' | 'finished' | 'released' = 'pending';
  readonly sessionId: string;
  readonly ttlMs: number;
  readonly waitMs: number;
  readonly signal: AbortSignal | undefined;

  constructor(
    readonly leases: RedisLeases,
    readonly local: SessionLease,
    readonly token: string,
    readonly keys: SessionKeys,
    { ttlMs, waitMs, signal }: LeaseOptions,
    readonly startedAt: number,
  ) {
    this.sessionId = local.sessionId;
    this.ttlMs = ttlMs;
    this.waitMs = waitMs;
    this.signal = signal;
  }

  renew(): boolean | Promise<boolean> {
    if (this.state === 'released') return false;
    // Not taken yet (or the script taking it is on its way), or being released by the holder's last write
    // (the turn is ending): nothing to extend, nothing lost.
    if (this.state !== 'held') return true;
    return this.leases.renew(this);
  }

  release(): void | Promise<void> {
    const { state } = this;
    if (state === 'released' || state === 'finished') {
      this.state = 'released';
      return;
    }
    this.state = 'released';
    // The next local waiter may go at once: its SET follows this release on the same connection.
    this.local.release();
    // `opening`: the script taking it may have run (its reply lost); `closing`: the last write releasing it
    // may not have. The compare-and-delete is harmless either way.
    if (state === 'held' || state === 'opening' || state === 'closing') return this.leases.release(this);
  }
}
