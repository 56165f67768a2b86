import type { MessageItem, UserMessage } from '@switchboard/core';
import type { TurnRecord } from '../turns/turn-record.js';

export type {
  ApprovalRecord,
  ApprovalRisk,
  ApprovalStatus,
  FinishedTurnStatus,
  RouteStep,
  StepCall,
  TracePart,
  TurnRecord,
  TurnStatus,
} from '../turns/turn-record.js';

/** A value, or a promise of it: stores that answer at once (in memory) return values, others promises. */
export type Awaitable<T> = T | Promise<T>;

/** Options of {@link SessionStore.acquireLease}. */
export interface LeaseOptions {
  /** How long the lease lasts unless renewed; a crashed holder's lease expires after this. */
  ttlMs: number;
  /** How long to wait for a busy session before failing with `SessionBusyError` (0: fail at once). */
  waitMs: number;
  /** Stops waiting when aborted. */
  signal?: AbortSignal;
  /**
   * The caller's next call on this session is {@link SessionStore.openTurn}
   * with this lease, and it makes no other call before: a store may then
   * take the lease in the same round trip as the turn's opening (waiting as
   * usual if the session turns out to be busy) rather than in one of its own.
   */
  withOpenTurn?: boolean;
}

/** Exclusive use of a session by one turn. */
export interface SessionLease {
  readonly sessionId: string;
  readonly token: string;
  /** Extends the lease by its ttl; false when the lease was lost (expired and taken). */
  renew(): Awaitable<boolean>;
  /**
   * Releases the lease if this holder still owns it. Idempotent. Never
   * rejects: a release the backend did not receive is retried by the store
   * once the backend is back, so the session does not wait out the ttl.
   */
  release(): Awaitable<void>;
}

/** Options of {@link SessionStore.append}. */
export interface AppendOptions {
  /**
   * The current turn's record, replacing the one stored by
   * {@link SessionStore.openTurn} (the session's last turn), in the same
   * atomic write as the messages.
   */
  turn?: TurnRecord;
  /**
   * The lease the writer holds. When given, the write happens only while
   * this lease still holds the session (checked atomically with the write);
   * otherwise the store throws `SessionBusyError` with `leaseLost` and stores
   * nothing. This fences off a turn whose lease expired and was taken over.
   */
  lease?: SessionLease;
  /** How long the session lives after this write without another (default: the store's idle time). */
  idleTtlMs?: number;
  /**
   * This is the lease holder's last write: a store may release the lease in
   * the same round trip (the lease's own `release()` then has nothing left
   * to do). Only with `lease`.
   */
  releaseLease?: boolean;
}

/** An `Idempotency-Key` sent with a message, and a fingerprint of the request it came with. */
export interface RequestKey {
  key: string;
  fingerprint: string;
}

/** Options of {@link SessionStore.openTurn}. */
export interface OpenTurnOptions {
  /** The new turn's record, in state `running`. */
  turn: TurnRecord;
  /** How many messages to return (the window, ending with the user message). */
  limit: number;
  lease?: SessionLease;
  /** Remember this key for the turn, or report the turn that already used it. */
  requestKey?: RequestKey;
  /** How long the session lives after this write without another (default: the store's idle time). */
  idleTtlMs?: number;
  /**
   * The tenant the session belongs to, for {@link SessionStore.listSessions}
   * (set by the tenant's view of the store; absent without auth).
   */
  tenant?: string;
}

/** What {@link SessionStore.openTurn} found. */
export type OpenedTurn =
  /** The user message and the turn were stored; `messages` is the window ending with the user message. */
  | { kind: 'opened'; messages: MessageItem[] }
  /** Nothing was stored: the session's last turn has not ended (it is running or awaiting approval). */
  | { kind: 'unfinished'; turn: TurnRecord }
  /** Nothing was stored: the request key was used before, for turn `turnId`. */
  | { kind: 'duplicate'; turnId: string; fingerprint: string };

/**
 * Where conversations live: an append-only message log per session, the
 * session's turn records, and a lease per session that serialises turns
 * across replicas.
 *
 * Methods return a value or a promise ({@link Awaitable}): the in-memory
 * store answers at once, so a turn through it (with an orchestrator and
 * agents that answer at once too) runs without waiting on the event loop;
 * `await` works for both.
 *
 * A turn writes through {@link openTurn} (the user message and the turn's
 * record, in one atomic step that first checks the previous turn has ended)
 * and {@link append} (agent replies, the answer, and the updated record).
 * The turn's record is always the session's last, so it is replaced in place.
 *
 * Implementations throw `StoreUnavailableError` when the backend cannot be
 * reached (promptly, never hanging) and `CorruptRecordError` for a record
 * that fails validation. Every write refreshes the session's idle expiry; a
 * session whose last turn awaits approval lives at least until its approvals
 * expire (see `keepAliveUntil`), and a session whose lease is held is never
 * evicted.
 */
export interface SessionStore {
  readonly specificationVersion: 'v2';
  /**
   * Starts a turn: unless the session's last turn has not ended or the
   * request key was seen before, appends `userMessage` and `turn` and returns
   * the last `limit` messages (ending with `userMessage`). Atomic, and
   * fenced by the lease like {@link append}.
   */
  openTurn(sessionId: string, userMessage: UserMessage, options: OpenTurnOptions): Awaitable<OpenedTurn>;
  /** Appends messages (and replaces the current turn's record), in order. O(1) per message. */
  append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions): Awaitable<void>;
  /** Reads the last `limit` messages (every message when omitted), oldest first. */
  read(sessionId: string, options?: { limit?: number }): Awaitable<MessageItem[]>;
  /** The session's last turn, or undefined when it has none. */
  lastTurn(sessionId: string): Awaitable<TurnRecord | undefined>;
  /** The session's turn records, oldest first. */
  listTurns(sessionId: string): Awaitable<TurnRecord[]>;
  /** Whether the session has any message. */
  exists(sessionId: string): Awaitable<boolean>;
  /**
   * Deletes the session's messages, turns and request keys; false if there
   * was nothing to delete. `tenant` (as given to `openTurn`) lets the store
   * drop the session from {@link listSessions} at once.
   */
  delete(sessionId: string, options?: { tenant?: string }): Awaitable<boolean>;
  /**
   * Exclusive use of a session: the lease at once when the session is free,
   * else waits; throws `SessionBusyError` after `waitMs`.
   */
  acquireLease(sessionId: string, options: LeaseOptions): Awaitable<SessionLease>;
  /** Optional: throws when the backend is not reachable (used by `/readyz`). */
  ping?(): Awaitable<void>;
  /**
   * Optional: checks the backend's settings, at the app's start and on
   * `/readyz`. Throws `ConfigurationError` for a setting that would lose
   * data (a Redis that may evict keys); returns warnings for an operator.
   */
  checkConfiguration?(): Awaitable<readonly string[]>;
  /** Optional: releases connections and timers. */
  close?(): Awaitable<void>;
  /**
   * Optional: tells every process sharing this store to stop the session's
   * running turn (`turnId`, or whichever is running when omitted). Stores
   * shared by several replicas implement it with
   * {@link SessionStore.onCancel}; without it only this process hears.
   */
  publishCancel?(sessionId: string, turnId?: string): Awaitable<void>;
  /** Optional: calls `listener` for every cancel published by any process; returns an unsubscribe function. */
  onCancel?(listener: (sessionId: string, turnId: string | undefined) => void): () => void;
  /**
   * Optional: one page of a session's history, newest page first, read
   * without reading the rest of the session (see {@link HistoryPage}).
   * Without it, `GET /v1/sessions/:id` reads the whole session and pages it
   * in memory.
   */
  readPage?(sessionId: string, options: ReadPageOptions): Awaitable<HistoryPage>;
  /**
   * Optional: the tenant's sessions (those opened with `tenant`, or without
   * one when `tenant` is absent), most recently active first. Used by
   * `GET /v1/sessions`, which answers 501 without it.
   */
  listSessions?(options: ListSessionsOptions): Awaitable<SessionListPage>;
  /**
   * Optional, for stores shared by replicas: the sessions (store ids:
   * `<tenant>/<session>` with a tenant) whose last turn was written
   * `running` more than `olderThanMs` ago, oldest first, at most `limit`:
   * the candidates of the app's sweeper, which recovers the turns a stopped
   * replica left running. A candidate's lease says whether it is alive.
   */
  runningSessions?(olderThanMs: number, limit: number): Awaitable<string[]>;
  /** Optional, with {@link SessionStore.runningSessions}: a session found not running is no candidate any more. */
  forgetRunning?(storeId: string): Awaitable<void>;
  /** Optional, with {@link SessionStore.runningSessions}: takes the sweep for `ttlMs` unless another replica has it. */
  takeSweep?(owner: string, ttlMs: number): Awaitable<boolean>;
}

/**
 * Where an older page of history ends: the position of the first message of
 * the newer page, and the index of the turn the message before it belongs
 * to. Servers send it to clients as an opaque cursor.
 */
export interface HistoryPosition {
  /** The newer page's first message, counted from the session's first (0). */
  message: number;
  /** The turn (counted from the session's first, 0) that message `message - 1` belongs to. */
  turn: number;
}

/** Options of {@link SessionStore.readPage}. */
export interface ReadPageOptions {
  /** How many messages, at most (at least 1). */
  limit: number;
  /** Read the page that ends just before this position; the newest page without it. */
  before?: HistoryPosition;
}

/** One page of a session's history, as {@link SessionStore.readPage} returns it. */
export interface HistoryPage {
  /** The page's messages, oldest first (empty when the session does not exist). */
  messages: MessageItem[];
  /** The turns these messages belong to (and no other), oldest first. */
  turns: TurnRecord[];
  /** The session's last turn, whatever the page: its state and pending approvals. */
  lastTurn?: TurnRecord;
  /** Where the next older page ends; absent on the oldest page. */
  before?: HistoryPosition;
}

/** Options of {@link SessionStore.listSessions}. */
export interface ListSessionsOptions {
  /** How many sessions, at most (at least 1). */
  limit: number;
  /** The `nextCursor` of the previous page; the most recent sessions without it. */
  cursor?: string;
  /** Whose sessions (see {@link OpenTurnOptions.tenant}). */
  tenant?: string;
}

/** One session in {@link SessionListPage}. */
export interface SessionSummary {
  sessionId: string;
  /** When the session was last active (epoch milliseconds). */
  lastActiveAt: number;
  /** How many messages it holds. */
  messageCount: number;
}

/** What {@link SessionStore.listSessions} returns. */
export interface SessionListPage {
  /** Most recently active first; may hold fewer than `limit` even when more follow. */
  sessions: SessionSummary[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** True when the store relays cancels between processes ({@link SessionStore.publishCancel}). */
export function canRelayCancels(
  store: SessionStore,
): store is SessionStore & Required<Pick<SessionStore, 'publishCancel' | 'onCancel'>> {
  return typeof store.publishCancel === 'function' && typeof store.onCancel === 'function';
}

/** True when the store reads a page of history without reading the whole session ({@link SessionStore.readPage}). */
export function canReadPages(
  store: SessionStore,
): store is SessionStore & Required<Pick<SessionStore, 'readPage'>> {
  return typeof store.readPage === 'function';
}

/** True when the store can tell which turns a stopped replica may have left running ({@link SessionStore.runningSessions}). */
export function canSweep(
  store: SessionStore,
): store is SessionStore & Required<Pick<SessionStore, 'runningSessions' | 'forgetRunning' | 'takeSweep'>> {
  return (
    typeof store.runningSessions === 'function' &&
    typeof store.forgetRunning === 'function' &&
    typeof store.takeSweep === 'function'
  );
}

/** True when the store lists a tenant's recent sessions ({@link SessionStore.listSessions}). */
export function canListSessions(
  store: SessionStore,
): store is SessionStore & Required<Pick<SessionStore, 'listSessions'>> {
  return typeof store.listSessions === 'function';
}
