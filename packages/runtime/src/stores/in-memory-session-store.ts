import { ConfigurationError, type MessageItem, SessionBusyError, type UserMessage } from '@switchboard/core';
import { z } from 'zod';
import { isFinished, keepAliveUntil, type TurnRecord } from '../turns/turn-record.js';
import { freezeMessage } from './freeze.js';
import { historyPageOf } from './history-page.js';
import { InMemoryLeases } from './in-memory-leases.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
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
  SessionSummary,
} from './session-store.js';

/** Options of {@link InMemorySessionStore}. */
export interface InMemorySessionStoreOptions {
  /** A session with no write for this long is forgotten (default 86 400, one day). */
  idleTtlSeconds?: number;
  /**
   * The most sessions kept (default 10 000): past it the least recently
   * written session is forgotten, so that a public demo server cannot be
   * filled. A session whose lease is held or whose turn is unfinished (running
   * or awaiting approval) is never forgotten this way.
   */
  maxSessions?: number;
}

interface SessionData {
  messages: MessageItem[];
  turns: TurnRecord[];
  /** Idempotency keys seen: key → the turn and the request fingerprint. */
  requestKeys?: Map<string, { turnId: string; fingerprint: string }>;
  expiresAt: number;
  /** The tenant it was opened for (`OpenTurnOptions.tenant`; null for none), unset until a turn opens it (unlisted until then). */
  tenant?: string | null;
  /** When it was last written (epoch ms). */
  lastActiveAt: number;
  /** The number of the last write to any session: the order of {@link InMemorySessionStore}'s map, and its list cursors. */
  writeNumber: number;
}

/** A cursor of `listSessions`: the write number of the last session listed. */
const ListCursorSchema = z.number().int().nonnegative();

/** The longest pause between sweeps of idle sessions. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

/**
 * The embedded {@link SessionStore}: sessions live in this process's memory
 * and are forgotten after `idleTtlSeconds` without a write, when more than
 * `maxSessions` are kept (the least recently written first), never while a
 * turn holds the session or waits for an approval; and on restart.
 *
 * It answers every call at once, without a promise. Appends are O(1), reads
 * copy only the requested tail, and the lease is a fair (first come, first
 * served) mutex per session. Appended messages are frozen (with their
 * `metadata`) and kept by reference, so nobody can change history by
 * mutating what they appended or read; turn records are copied when read.
 * Call `close()` to stop the background sweep timer (it never keeps the
 * process alive on its own).
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
  readonly #idleTtlMs: number;
  readonly #maxSessions: number;
  readonly #cancelListeners = new Set<(sessionId: string, turnId: string | undefined) => void>();
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  /** The session of the last write (already last in {@link #sessions}): a turn's writes move nothing. */
  #lastWritten: string | undefined;
  #writes = 0;

  constructor({ idleTtlSeconds = 86_400, maxSessions = 10_000 }: InMemorySessionStoreOptions = {}) {
    if (!(idleTtlSeconds > 0) || !Number.isFinite(idleTtlSeconds)) {
      throw new ConfigurationError({
        message: `idleTtlSeconds must be a positive number of seconds, got ${idleTtlSeconds}`,
      });
    }
    if (!Number.isSafeInteger(maxSessions) || maxSessions <= 0) {
      throw new ConfigurationError({
        message: `maxSessions must be a positive whole number, got ${maxSessions}`,
      });
    }
    this.#idleTtlMs = idleTtlSeconds * 1000;
    this.#maxSessions = maxSessions;
    this.#sweepTimer = setInterval(() => this.#sweep(), Math.min(this.#idleTtlMs, MAX_SWEEP_INTERVAL_MS));
    this.#sweepTimer.unref();
  }

  /** Stores the user message and the turn unless the last turn is unfinished or the key was seen. */
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
    const written = this.#write(sessionId, [userMessage], turn, true, idleTtlMs);
    written.tenant = tenant ?? null;
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
   * moves to the front rather than repeating on a later page.
   */
  listSessions({ limit, cursor, tenant }: ListSessionsOptions): SessionListPage {
    const before =
      cursor === undefined ? Number.POSITIVE_INFINITY : decodePageCursor(cursor, ListCursorSchema);
    const entries = [...this.#sessions];
    const now = Date.now();
    const sessions: SessionSummary[] = [];
    let lastListed = 0;
    for (let index = entries.length - 1; index >= 0; index--) {
      const [sessionId, session] = entries[index] as [string, SessionData];
      if (
        session.writeNumber >= before ||
        session.tenant !== (tenant ?? null) ||
        session.messages.length === 0
      )
        continue;
      if (session.expiresAt <= now && !this.#leases.isHeld(sessionId)) continue;
      if (sessions.length === limit) return { sessions, nextCursor: encodePageCursor(lastListed) };
      sessions.push({ sessionId, lastActiveAt: session.lastActiveAt, messageCount: session.messages.length });
      lastListed = session.writeNumber;
    }
    return { sessions };
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
    return (this.#live(sessionId)?.messages.length ?? 0) > 0;
  }

  /** Forgets the session's messages, turns and request keys; false when there was nothing. */
  delete(sessionId: string): boolean {
    const existed = this.#live(sessionId) !== undefined;
    this.#sessions.delete(sessionId);
    return existed;
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
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
    this.#leases.close();
    this.#cancelListeners.clear();
  }

  #checkLease(sessionId: string, lease: SessionLease | undefined): void {
    if (lease && !this.#leases.holds(sessionId, lease.token)) {
      throw new SessionBusyError({ sessionId, leaseLost: true });
    }
  }

  #write(
    sessionId: string,
    messages: readonly MessageItem[],
    turn: TurnRecord | undefined,
    newTurn: boolean,
    idleTtlMs = this.#idleTtlMs,
  ) {
    let session = this.#live(sessionId);
    if (!session) {
      session = { messages: [], turns: [], expiresAt: 0, lastActiveAt: 0, writeNumber: 0 };
      this.#sessions.set(sessionId, session);
      if (this.#sessions.size > this.#maxSessions) this.#evict(sessionId);
    } else if (this.#lastWritten !== sessionId) {
      // The map's order is the order of last writes: the first entry is the least recently written.
      this.#sessions.delete(sessionId);
      this.#sessions.set(sessionId, session);
    }
    this.#lastWritten = sessionId;
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
    return session;
  }

  /** The session unless it is absent or idle for too long (then it is forgotten). */
  #live(sessionId: string): SessionData | undefined {
    const session = this.#sessions.get(sessionId);
    if (session && session.expiresAt <= Date.now() && !this.#leases.isHeld(sessionId)) {
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

  /**
   * Forgets the least recently written sessions until at most `maxSessions`
   * are kept, skipping `current` (being written), sessions whose lease is held
   * and sessions whose last turn has not finished.
   */
  #evict(current: string): void {
    let excess = this.#sessions.size - this.#maxSessions;
    for (const [sessionId, session] of this.#sessions) {
      if (excess <= 0) return;
      const last = session.turns[session.turns.length - 1];
      if (sessionId === current || this.#leases.isHeld(sessionId) || (last && !isFinished(last.status)))
        continue;
      this.#sessions.delete(sessionId);
      excess -= 1;
    }
  }

  #sweep(): void {
    const now = Date.now();
    for (const [sessionId, session] of this.#sessions) {
      if (session.expiresAt <= now && !this.#leases.isHeld(sessionId)) this.#sessions.delete(sessionId);
    }
  }
}
