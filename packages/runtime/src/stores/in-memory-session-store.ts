import {
  type MessageItem,
  PendingApprovalsLimitError,
  SessionBusyError,
  type UserMessage,
} from '@switchboard/core';
import { isFinished, keepAliveUntil, type TurnRecord } from '../turns/turn-record.js';
import { freezeMessage } from './freeze.js';
import { historyPageOf } from './history-page.js';
import { SessionHousekeeping } from './in-memory-housekeeping.js';
import { InMemoryLeases } from './in-memory-leases.js';
import { expand, messageCount, type SessionData, stateOf } from './in-memory-session-data.js';
import { listSessionsOf } from './in-memory-session-list.js';
import {
  checkInMemorySessionOptions,
  type InMemorySessionStoreOptions,
} from './in-memory-session-options.js';
import { SealedPageCursors } from './page-cursor.js';
import type {
  AppendOptions,
  HistoryPage,
  LeaseOptions,
  ListSessionsOptions,
  OpenedTurn,
  OpenTurnOptions,
  ReadPageOptions,
  SessionLease,
  SessionListPage,
  SessionStore,
} from './session-store.js';
import { type PlacedSession, TenantShares } from './tenant-shares.js';

export type { InMemorySessionStoreOptions } from './in-memory-session-options.js';

/**
 * The embedded {@link SessionStore}: sessions live in this process's memory
 * and are forgotten after `idleTtlSeconds` without a write, when more than
 * `maxSessions` are kept (the least recently written of the tenant holding
 * the most first), never while a turn holds the session or waits for an
 * approval; and on restart.
 *
 * It answers every call at once, without a promise. Appends are O(1), reads
 * copy only the requested tail, and the lease is a fair (first come, first
 * served) mutex per session. Appended messages are frozen (with their
 * `metadata`) and kept by reference, so nobody can change history by
 * mutating what they appended or read; turn records are copied when read.
 * A session idle for `compactAfterSeconds` (30 by default) whose turn has
 * ended is kept as one string of compact JSON until it is read or written
 * again: under half the memory, and far less for the garbage collector.
 * Call `close()` to stop the background timers (they never keep the process
 * alive on their own).
 *
 * @example
 * ```ts
 * const sessions = new InMemorySessionStore({ idleTtlSeconds: 3600 });
 * const app = new App({ name: 'support', agents, sessionStore: sessions });
 * ```
 */
export class InMemorySessionStore implements SessionStore {
  readonly specificationVersion = 'v2' as const;
  readonly #sessions = new Map<string, SessionData>();
  readonly #leases = new InMemoryLeases();
  readonly #cursors = new SealedPageCursors();
  readonly #idleTtlMs: number;
  readonly #maxSessions: number;
  readonly #maxPendingApprovals: number;
  /** Per-tenant counts and eviction order. */
  readonly #shares = new TenantShares(() => this.#placedSessions());
  readonly #cancelListeners = new Set<(sessionId: string, turnId: string | undefined) => void>();
  /** The session of the last write (already last in {@link #sessions}): a turn's writes move nothing. */
  #lastWritten: string | undefined;
  #writes = 0;
  /** The timers that forget expired sessions and compact idle ones. */
  readonly #housekeeping: SessionHousekeeping;

  constructor({
    idleTtlSeconds = 86_400,
    maxSessions = 10_000,
    maxPendingApprovalsPerTenant = 1_000,
    compactAfterSeconds = 30,
  }: InMemorySessionStoreOptions = {}) {
    checkInMemorySessionOptions({
      idleTtlSeconds,
      maxSessions,
      maxPendingApprovalsPerTenant,
      compactAfterSeconds,
    });
    this.#idleTtlMs = idleTtlSeconds * 1000;
    this.#maxSessions = maxSessions;
    this.#maxPendingApprovals = maxPendingApprovalsPerTenant;
    this.#housekeeping = new SessionHousekeeping(
      this.#sessions,
      this.#leases,
      (sessionId, session) => this.#forget(sessionId, session),
      {
        idleTtlMs: this.#idleTtlMs,
        compactAfterMs: compactAfterSeconds === false ? undefined : compactAfterSeconds * 1000,
      },
    );
  }

  /**
   * Stores the user message and the turn unless the last turn is unfinished
   * or the key was seen; refuses it when the tenant has
   * `maxPendingApprovalsPerTenant` sessions waiting for approval.
   */
  openTurn(
    sessionId: string,
    userMessage: UserMessage,
    { turn, limit, lease, requestKey, idleTtlMs, tenant }: OpenTurnOptions,
  ): OpenedTurn {
    this.#checkLease(sessionId, lease);
    const session = this.#live(sessionId);
    if (session) {
      const seen = requestKey && session.requestKeys?.get(requestKey.key);
      if (seen) return { kind: 'duplicate', ...seen };
      const last = session.turns[session.turns.length - 1];
      if (last && !isFinished(last.status)) return { kind: 'unfinished', turn: structuredClone(last) };
    }
    if (this.#shares.awaitingOf(tenant ?? null) >= this.#maxPendingApprovals)
      throw new PendingApprovalsLimitError({ limit: this.#maxPendingApprovals });
    const written = this.#write(sessionId, [userMessage], turn, true, idleTtlMs, tenant ?? null);
    if (requestKey) {
      written.requestKeys ??= new Map();
      written.requestKeys.set(requestKey.key, { turnId: turn.turnId, fingerprint: requestKey.fingerprint });
    }
    return { kind: 'opened', messages: this.#tail(written.messages, limit) };
  }

  /** Appends messages (and replaces the current turn's record) in order; refreshes the idle expiry. */
  append(
    sessionId: string,
    messages: readonly MessageItem[],
    { turn, lease, idleTtlMs }: AppendOptions = {},
  ): void {
    this.#checkLease(sessionId, lease);
    this.#write(sessionId, messages, turn, false, idleTtlMs);
  }

  /** The last `limit` messages (all when omitted), oldest first. */
  read(sessionId: string, { limit }: { limit?: number } = {}): MessageItem[] {
    return this.#tail(this.#live(sessionId)?.messages ?? [], limit);
  }

  /** A page of the session's history (copies of its turns), sliced from what is held. */
  readPage(sessionId: string, options: ReadPageOptions): HistoryPage {
    const session = this.#live(sessionId);
    if (!session) return { messages: [], turns: [] };
    const page = historyPageOf(session.messages, session.turns, options);
    page.turns = structuredClone(page.turns);
    if (page.lastTurn) page.lastTurn = structuredClone(page.lastTurn);
    return page;
  }

  /**
   * The tenant's sessions, most recently written first: the map's own order
   * (least recently written first), walked backwards. The cursor is the
   * write number of the last session listed, so a session written since
   * moves to the front rather than repeating on a later page; sealed for
   * the tenant, as the number counts every tenant's writes.
   */
  listSessions(options: ListSessionsOptions): SessionListPage {
    return listSessionsOf(this.#sessions, this.#leases, this.#cursors, options);
  }

  /** The session's last turn (a copy). */
  lastTurn(sessionId: string): TurnRecord | undefined {
    const turns = this.#live(sessionId)?.turns;
    const last = turns?.[turns.length - 1];
    return last && structuredClone(last);
  }

  /** The session's turn records (copies), oldest first. */
  listTurns(sessionId: string): TurnRecord[] {
    return structuredClone(this.#live(sessionId)?.turns ?? []);
  }

  /** Whether the session has any message (and has not expired). */
  exists(sessionId: string): boolean {
    const session = this.#live(sessionId, false);
    return session !== undefined && messageCount(session) > 0;
  }

  /** Forgets the session's messages, turns and request keys; false when there was nothing. */
  delete(sessionId: string): boolean {
    const session = this.#live(sessionId, false);
    if (session) this.#forget(sessionId, session);
    return session !== undefined;
  }

  /** The lease at once when the session is free; otherwise waits (first come, first served). */
  acquireLease(sessionId: string, options: LeaseOptions): SessionLease | Promise<SessionLease> {
    if (!options.signal?.aborted) {
      const free = this.#leases.tryAcquire(sessionId, options.ttlMs);
      if (free) return free;
    }
    return this.#leases.acquire(sessionId, options);
  }

  /** Calls the listeners of this store (one process: nobody else can hear). */
  publishCancel(sessionId: string, turnId?: string): void {
    for (const listener of this.#cancelListeners) listener(sessionId, turnId);
  }

  /** Listens for {@link InMemorySessionStore.publishCancel}. */
  onCancel(listener: (sessionId: string, turnId: string | undefined) => void): () => void {
    this.#cancelListeners.add(listener);
    return () => this.#cancelListeners.delete(listener);
  }

  /** Always succeeds: memory is always reachable. */
  ping(): void {}

  /** Stops the sweep timer and rejects anyone still waiting for a lease. Stored sessions stay readable. */
  close(): void {
    this.#housekeeping.close();
    this.#leases.close();
    this.#cancelListeners.clear();
  }

  #checkLease(sessionId: string, lease: SessionLease | undefined): void {
    if (lease && !this.#leases.holdsLease(sessionId, lease)) {
      throw new SessionBusyError({ sessionId, leaseLost: true });
    }
  }

  #write(
    sessionId: string,
    messages: readonly MessageItem[],
    turn: TurnRecord | undefined,
    newTurn: boolean,
    idleTtlMs = this.#idleTtlMs,
    tenant?: string | null,
  ) {
    let session = this.#live(sessionId);
    const created = !session;
    if (!session) {
      // Every field from the start: fields added later would cost the object a second block.
      session = {
        messages: [],
        turns: [],
        compacted: undefined,
        compactedTag: undefined,
        compactedMessages: 0,
        requestKeys: undefined,
        tenant,
        expiresAt: 0,
        lastActiveAt: 0,
        writeNumber: 0,
        placed: undefined,
      };
      this.#sessions.set(sessionId, session);
    } else {
      if (tenant !== undefined && tenant !== (session.tenant ?? null)) {
        // First opened by a turn after a bare append: it moves to the turn's tenant.
        this.#shares.remove(session.tenant ?? null, sessionId, session.placed);
        session.placed = undefined;
      }
      if (tenant !== undefined) session.tenant = tenant;
      if (this.#lastWritten !== sessionId) {
        // The map's order is the order of last writes: the first entry is the least recently written.
        this.#sessions.delete(sessionId);
        this.#sessions.set(sessionId, session);
      }
    }
    this.#lastWritten = sessionId;
    session.compactedMessages = 0;
    for (const message of messages) session.messages.push(freezeMessage(message));
    // The record is kept as given (the engine hands over a fresh one per write) and copied on read.
    if (turn) {
      const { turns } = session;
      if (newTurn || turns.length === 0) turns.push(turn);
      else turns[turns.length - 1] = turn;
    }
    const now = Date.now();
    session.lastActiveAt = now;
    this.#writes += 1;
    session.writeNumber = this.#writes;
    const idleExpiry = now + idleTtlMs;
    const kept = turn ? keepAliveUntil(turn) : undefined;
    session.expiresAt = kept === null ? Number.POSITIVE_INFINITY : Math.max(idleExpiry, kept ?? 0);
    const state = stateOf(session);
    // A write that ends (or leaves ended) a session moves it to the end of its tenant's order; the writes of a
    // running turn change nothing there.
    if (state !== session.placed || state === 'ended') {
      this.#shares.place(session.tenant ?? null, sessionId, state, session.placed);
      session.placed = state;
    }
    if (created && this.#sessions.size > this.#maxSessions) this.#evict(sessionId);
    return session;
  }

  /** Forgets a session, and tells its tenant's share. */
  #forget(sessionId: string, session: SessionData): void {
    this.#sessions.delete(sessionId);
    this.#shares.remove(session.tenant ?? null, sessionId, session.placed);
  }

  /**
   * The session unless it is absent or idle for too long (then it is
   * forgotten), unpacked when it was compacted unless `unpack` is false.
   */
  #live(sessionId: string, unpack = true): SessionData | undefined {
    const session = this.#sessions.get(sessionId);
    if (session && session.expiresAt <= Date.now() && !this.#leases.isHeld(sessionId)) {
      this.#forget(sessionId, session);
      return undefined;
    }
    if (unpack && session?.compacted !== undefined) expand(session);
    return session;
  }

  /**
   * Compacts now every session that can be (its last turn has ended and its
   * lease is free), however recently written, as the timer does on its own
   * for sessions idle for `compactAfterSeconds`: before a heap snapshot,
   * say, or in a test. Returns how many sessions it compacted.
   */
  compactSessions(): number {
    return (
      Number.MAX_SAFE_INTEGER -
      this.#housekeeping.compactUntil(Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER)
    );
  }

  /** How many sessions the store keeps, and how many of them are compacted. */
  stats(): { sessions: number; compacted: number } {
    let compacted = 0;
    for (const session of this.#sessions.values()) if (session.compacted !== undefined) compacted += 1;
    return { sessions: this.#sessions.size, compacted };
  }

  #tail(messages: readonly MessageItem[], limit: number | undefined): MessageItem[] {
    if (limit !== undefined && limit <= 0) return [];
    const start = limit === undefined ? 0 : Math.max(0, messages.length - limit);
    return messages.slice(start);
  }

  /**
   * Forgets sessions of the tenant holding the most until at most
   * `maxSessions` are kept: its least recently written whose last turn has
   * ended, skipping `current` (being written) and sessions whose lease is
   * held. When all of them are held, the store stays over the cap until one
   * is free (the held ones are bounded by the turns running, the waiting
   * ones by `maxPendingApprovalsPerTenant`).
   */
  #evict(current: string): void {
    let excess = this.#sessions.size - this.#maxSessions;
    const tenant = this.#shares.largest();
    if (tenant === undefined) return;
    // One tenant so far: the map's own order (of last writes) is its order.
    const order = this.#shares.evictable(tenant);
    for (const sessionId of order ?? this.#sessions.keys()) {
      if (excess <= 0) return;
      const session = this.#sessions.get(sessionId);
      if (!session || sessionId === current || session.placed !== 'ended' || this.#leases.isHeld(sessionId))
        continue;
      if (order === undefined && (session.tenant ?? null) !== tenant) continue;
      this.#forget(sessionId, session);
      excess -= 1;
    }
  }

  /** Every session with its tenant and its state in its tenant's share, least recently written first. */
  *#placedSessions(): Iterable<PlacedSession> {
    for (const [sessionId, session] of this.#sessions)
      yield [sessionId, session.tenant ?? null, session.placed];
  }
}
