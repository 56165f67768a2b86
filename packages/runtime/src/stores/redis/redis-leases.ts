import { SessionBusyError } from '@switchboard/core';
import { InMemoryLeases } from '../in-memory-leases.js';
import type { LeaseOptions, SessionLease } from '../session-store.js';
import { RELEASE_LEASE, RENEW_LEASE } from './lua-scripts.js';
import type { RedisConnection } from './redis-connection.js';

/** The first pause between two attempts on a lease held elsewhere; it doubles up to {@link MAX_POLL_MS}. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;

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
 * @internal Per-session leases across processes: `SET key token NX PX ttl`,
 * renewed and released by compare-and-set scripts on the token, so a crashed
 * holder's lease simply expires.
 *
 * Within one process, waiters first queue in a fair local lease, and only the
 * head of that queue polls Redis (with a short, growing pause). That keeps
 * arrival order inside a replica, hands a released session to the next local
 * waiter without a polling delay, and keeps polling load at one client per
 * session and replica.
 */
export class RedisLeases {
  readonly #local = new InMemoryLeases();
  readonly #connection: RedisConnection;
  readonly #leaseKey: (sessionId: string) => string;

  constructor(connection: RedisConnection, leaseKey: (sessionId: string) => string) {
    this.#connection = connection;
    this.#leaseKey = leaseKey;
  }

  /** Waits for the session's lease; `SessionBusyError` after `waitMs`, `StoreUnavailableError` when Redis is down. */
  async acquire(sessionId: string, { ttlMs, waitMs, signal }: LeaseOptions): Promise<SessionLease> {
    const startedAt = Date.now();
    const local = await this.#local.acquire(sessionId, { ttlMs, waitMs, signal });
    const key = this.#leaseKey(sessionId);
    try {
      for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
        const reply = await this.#connection.run('acquire a session lease', (client) =>
          client.set(key, local.token, 'PX', ttlMs, 'NX'),
        );
        if (reply === 'OK') return this.#lease(local, key, ttlMs);
        const remaining = startedAt + waitMs - Date.now();
        if (remaining <= 0) throw new SessionBusyError({ sessionId, waitedMs: Date.now() - startedAt });
        // Keep our place at the head of the local queue for as long as we poll.
        await local.renew();
        // Jitter keeps replicas polling the same session from moving in lockstep.
        await pause(Math.min(poll * (0.5 + Math.random()), remaining), signal);
      }
    } catch (error) {
      // A SET that timed out may still reach Redis later; queued behind it on the same connection,
      // this compare-and-delete frees the session as soon as it does (and does nothing otherwise).
      RELEASE_LEASE.run(this.#connection.client, [key], [local.token]).catch(() => {});
      await local.release();
      throw error;
    }
  }

  /** Rejects local waiters and stops local timers. */
  close(): void {
    this.#local.close();
  }

  #lease(local: SessionLease, key: string, ttlMs: number): SessionLease {
    const { sessionId, token } = local;
    let released = false;
    return {
      sessionId,
      token,
      renew: async () => {
        if (released) return false;
        const reply = await this.#connection.run('renew a session lease', (client) =>
          RENEW_LEASE.run(client, [key], [token, ttlMs]),
        );
        if (reply !== 1) return false;
        await local.renew();
        return true;
      },
      release: async () => {
        if (released) return;
        released = true;
        try {
          await this.#connection.run('release a session lease', (client) =>
            RELEASE_LEASE.run(client, [key], [token]),
          );
        } finally {
          await local.release();
        }
      },
    };
  }
}
