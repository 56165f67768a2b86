import { ConfigurationError, type MessageItem, SessionBusyError } from '@switchboard/core';
import { freezeMessage } from './freeze.js';
import { InMemoryLeases } from './in-memory-leases.js';
import type {
  AppendOptions,
  LeaseOptions,
  SessionLease,
  SessionStore,
  SynchronousSessionAccess,
  TurnRecord,
} from './session-store.js';

/** Options of {@link InMemorySessionStore}. */
export interface InMemorySessionStoreOptions {
  /** A session with no write for this long is forgotten (default 86 400, one day). */
  idleTtlSeconds?: number;
}

interface SessionData {
  messages: MessageItem[];
  turns: TurnRecord[];
  expiresAt: number;
}

/** The longest pause between sweeps of idle sessions. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

/**
 * The embedded {@link SessionStore}: sessions live in this process's memory
 * and are forgotten after `idleTtlSeconds` without a write, or on restart.
 *
 * Appends are O(1), reads copy only the requested tail, and the lease is a
 * fair (first come, first served) mutex per session. Appended messages are
 * frozen (with their `metadata`) and kept by reference, so nobody
 * can change history by mutating what they appended or read. Call `close()` to stop the
 * background sweep timer (it never keeps the process alive on its own).
 *
 * @example
 * ```ts
 * const sessions = new InMemorySessionStore({ idleTtlSeconds: 3600 });
 * const lease = await sessions.acquireLease('s1', { ttlMs: 30_000, waitMs: 5_000 });
 * try {
 *   const window = await sessions.appendAndRead('s1', [message], { limit: 50 });
 * } finally {
 *   await lease.release();
 * }
 * ```
 */
export class InMemorySessionStore implements SessionStore {
  readonly specificationVersion = 'v1' as const;
  readonly #sessions = new Map<string, SessionData>();
  readonly #leases = new InMemoryLeases();
  readonly #idleTtlMs: number;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;

  readonly #synchronous: SynchronousSessionAccess = {
    append: (sessionId, messages, { turn, lease } = {}) => {
      this.#checkLease(sessionId, lease);
      this.#write(sessionId, messages, turn);
    },
    appendAndRead: (sessionId, messages, { limit, lease }) => {
      this.#checkLease(sessionId, lease);
      return this.#tail(this.#write(sessionId, messages).messages, limit);
    },
    tryAcquireLease: (sessionId, { ttlMs }) => this.#leases.tryAcquire(sessionId, ttlMs),
    release: (lease) => this.#leases.release(lease),
  };

  /**
   * The turn path without promises: everything here is in memory, so nothing
   * needs to wait. Undefined in a subclass that overrides `append`,
   * `appendAndRead` or `acquireLease`, so that turns go through the override.
   */
  get synchronous(): SynchronousSessionAccess | undefined {
    const base = InMemorySessionStore.prototype;
    return this.append === base.append &&
      this.appendAndRead === base.appendAndRead &&
      this.acquireLease === base.acquireLease
      ? this.#synchronous
      : undefined;
  }

  constructor({ idleTtlSeconds = 86_400 }: InMemorySessionStoreOptions = {}) {
    if (!(idleTtlSeconds > 0) || !Number.isFinite(idleTtlSeconds)) {
      throw new ConfigurationError({
        message: `idleTtlSeconds must be a positive number of seconds, got ${idleTtlSeconds}`,
      });
    }
    this.#idleTtlMs = idleTtlSeconds * 1000;
    this.#sweepTimer = setInterval(() => this.#sweep(), Math.min(this.#idleTtlMs, MAX_SWEEP_INTERVAL_MS));
    this.#sweepTimer.unref();
  }

  /** Appends messages (and a turn record) in order; refreshes the session's idle expiry. */
  async append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions): Promise<void> {
    this.#synchronous.append(sessionId, messages, options);
  }

  /** The last `limit` messages (all when omitted), oldest first. */
  async read(sessionId: string, { limit }: { limit?: number } = {}): Promise<MessageItem[]> {
    return this.#tail(this.#live(sessionId)?.messages ?? [], limit);
  }

  /** Appends, then reads the last `limit` messages including the appended ones. */
  async appendAndRead(
    sessionId: string,
    messages: readonly MessageItem[],
    { limit, lease }: { limit: number; lease?: SessionLease },
  ): Promise<MessageItem[]> {
    return this.#synchronous.appendAndRead(sessionId, messages, { limit, lease });
  }

  /** The session's turn records, oldest first. */
  async listTurns(sessionId: string): Promise<TurnRecord[]> {
    return structuredClone(this.#live(sessionId)?.turns ?? []);
  }

  /** Whether the session has any message (and has not expired). */
  async exists(sessionId: string): Promise<boolean> {
    return (this.#live(sessionId)?.messages.length ?? 0) > 0;
  }

  /** Forgets the session's messages and turns; false when there was nothing. */
  async delete(sessionId: string): Promise<boolean> {
    const existed = this.#live(sessionId) !== undefined;
    this.#sessions.delete(sessionId);
    return existed;
  }

  /** Waits (first come, first served) for exclusive use of the session. */
  acquireLease(sessionId: string, options: LeaseOptions): Promise<SessionLease> {
    return this.#leases.acquire(sessionId, options);
  }

  /** Always succeeds: memory is always reachable. */
  async ping(): Promise<void> {}

  /** Stops the sweep timer and rejects anyone still waiting for a lease. Stored sessions stay readable. */
  async close(): Promise<void> {
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
    this.#leases.close();
  }

  #checkLease(sessionId: string, lease: SessionLease | undefined): void {
    if (lease && !this.#leases.holds(sessionId, lease.token)) {
      throw new SessionBusyError({ sessionId, leaseLost: true });
    }
  }

  #write(sessionId: string, messages: readonly MessageItem[], turn?: TurnRecord): SessionData {
    let session = this.#live(sessionId);
    if (!session) {
      session = { messages: [], turns: [], expiresAt: 0 };
      this.#sessions.set(sessionId, session);
    }
    for (const message of messages) session.messages.push(freezeMessage(message));
    // Turn records are read rarely (GET /v1/sessions/:id), so they are copied on read, not on write.
    if (turn) session.turns.push(turn);
    session.expiresAt = Date.now() + this.#idleTtlMs;
    return session;
  }

  /** The session unless it is absent or idle for too long (then it is forgotten). */
  #live(sessionId: string): SessionData | undefined {
    const session = this.#sessions.get(sessionId);
    if (session && session.expiresAt <= Date.now()) {
      this.#sessions.delete(sessionId);
      return undefined;
    }
    return session;
  }

  #tail(messages: readonly MessageItem[], limit: number | undefined): MessageItem[] {
    if (limit !== undefined && limit <= 0) return [];
    const start = limit === undefined ? 0 : Math.max(0, messages.length - limit);
    return messages.slice(start);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [sessionId, session] of this.#sessions) {
      if (session.expiresAt <= now) this.#sessions.delete(sessionId);
    }
  }
}
