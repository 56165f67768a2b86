import type { MessageItem } from '@switchboard/core';

/** One routing decision of a turn, as recorded for `GET /v1/sessions/:id` and the chat response. */
export interface RouteStep {
  /** 0 for the first decision of the turn. */
  hop: number;
  /** `call` one agent, `fan-out` to several, `answer` the user, or `error`. */
  kind: 'call' | 'fan-out' | 'answer' | 'error';
  /** The calls made (empty for `error`). */
  calls: Array<{ toolCallId: string; agent: string; thought?: string; reason?: string }>;
  /** The error message for `kind: 'error'`. */
  error?: string;
  /** When the decision was made (ISO 8601). */
  decidedAt: string;
  /** How long the orchestrator took to decide, in milliseconds. */
  durationMs: number;
}

/** How a turn ended. */
export type TurnStatus = 'completed' | 'failed';

/** The summary of one finished turn. */
export interface TurnRecord {
  turnId: string;
  /** The id of the user message that started the turn. */
  userMessageId: string;
  status: TurnStatus;
  startedAt: string;
  endedAt: string;
  steps: RouteStep[];
  /** The OpenTelemetry trace id of the turn, when tracing is on. */
  traceId?: string;
  /** What went wrong, for `status: 'failed'`. */
  error?: { code: string; message: string };
}

/** Options of {@link SessionStore.acquireLease}. */
export interface LeaseOptions {
  /** How long the lease lasts unless renewed; a crashed holder's lease expires after this. */
  ttlMs: number;
  /** How long to wait for a busy session before failing with `SessionBusyError`. */
  waitMs: number;
  /** Stops waiting when aborted. */
  signal?: AbortSignal;
}

/** Exclusive use of a session by one turn. */
export interface SessionLease {
  readonly sessionId: string;
  readonly token: string;
  /** Extends the lease by its ttl; resolves false when the lease was lost (expired and taken). */
  renew(): Promise<boolean>;
  /** Releases the lease if this holder still owns it. Idempotent. */
  release(): Promise<void>;
}

/** Options of {@link SessionStore.append}. */
export interface AppendOptions {
  /** A finished turn's record, stored in the same round trip as the messages. */
  turn?: TurnRecord;
  /**
   * The lease the writer holds. When given, the write happens only while
   * this lease still holds the session (checked atomically with the write);
   * otherwise the store throws `SessionBusyError` with `leaseLost` and stores
   * nothing. This fences off a turn whose lease expired and was taken over.
   */
  lease?: SessionLease;
}

/**
 * Where conversations live: an append-only message log per session, turn
 * records, and a lease per session that serialises turns across replicas.
 *
 * Implementations throw `StoreUnavailableError` when the backend cannot be
 * reached (promptly, never hanging) and `CorruptRecordError` for a record that
 * fails validation. Every write refreshes the session's idle expiry.
 */
export interface SessionStore {
  readonly specificationVersion: 'v1';
  /** Appends messages (and optionally a turn record) to a session, in order. O(1) per message. */
  append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions): Promise<void>;
  /** Reads the last `limit` messages (every message when omitted), oldest first. */
  read(sessionId: string, options?: { limit?: number }): Promise<MessageItem[]>;
  /**
   * Optional: appends messages and reads the last `limit` messages (including
   * the appended ones) in one round trip. Use {@link canAppendAndRead} to check.
   */
  appendAndRead?(
    sessionId: string,
    messages: readonly MessageItem[],
    options: { limit: number; lease?: SessionLease },
  ): Promise<MessageItem[]>;
  /** The session's turn records, oldest first. */
  listTurns(sessionId: string): Promise<TurnRecord[]>;
  /** Whether the session has any message. */
  exists(sessionId: string): Promise<boolean>;
  /** Deletes the session's messages and turns; resolves false if there was nothing to delete. */
  delete(sessionId: string): Promise<boolean>;
  /** Waits for exclusive use of a session; throws `SessionBusyError` after `waitMs`. */
  acquireLease(sessionId: string, options: LeaseOptions): Promise<SessionLease>;
  /** Optional: throws when the backend is not reachable (used by `/readyz`). */
  ping?(): Promise<void>;
  /** Optional: releases connections and timers. */
  close?(): Promise<void>;
  /**
   * Optional, for stores whose backend answers without waiting (process
   * memory, an embedded synchronous database): the turn path's operations
   * without a promise. A turn through such a store, with an orchestrator and
   * agents that answer synchronously, runs start to end without yielding to
   * the event loop. Use {@link canAnswerSynchronously} to check.
   */
  readonly synchronous?: SynchronousSessionAccess;
}

/**
 * The synchronous operations of {@link SessionStore.synchronous}. Each
 * behaves as its asynchronous namesake, throwing where that one rejects.
 */
export interface SynchronousSessionAccess {
  /** As {@link SessionStore.append}. */
  append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions): void;
  /** As {@link SessionStore.appendAndRead}. */
  appendAndRead(
    sessionId: string,
    messages: readonly MessageItem[],
    options: { limit: number; lease?: SessionLease },
  ): MessageItem[];
  /**
   * The session's lease when nobody holds it or waits for it, otherwise
   * undefined: the caller then waits with {@link SessionStore.acquireLease}.
   */
  tryAcquireLease(sessionId: string, options: { ttlMs: number }): SessionLease | undefined;
  /** As {@link SessionLease.release}, for a lease this store gave out. */
  release(lease: SessionLease): void;
}

/** True when the store supports {@link SessionStore.appendAndRead}. */
export function canAppendAndRead(
  store: SessionStore,
): store is SessionStore & Required<Pick<SessionStore, 'appendAndRead'>> {
  return typeof store.appendAndRead === 'function';
}

/** True when the store offers {@link SessionStore.synchronous}. */
export function canAnswerSynchronously(
  store: SessionStore,
): store is SessionStore & { readonly synchronous: SynchronousSessionAccess } {
  return typeof store.synchronous === 'object' && store.synchronous !== null;
}
