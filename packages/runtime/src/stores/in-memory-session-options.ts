/**
 * What an `InMemorySessionStore` is made with, and the check of it at
 * construction.
 *
 * @module
 */
import { ConfigurationError } from '@switchboard/core';

/** Options of {@link InMemorySessionStore}. */
export interface InMemorySessionStoreOptions {
  /** A session with no write for this long is forgotten (default 86 400, one day). */
  idleTtlSeconds?: number;
  /**
   * The most sessions kept (default 10 000), shared fairly between tenants:
   * past it, the tenant holding the most sessions (the one over its share of
   * the cap, whoever wrote last) loses its least recently written one, so
   * that one tenant filling the store forgets its own sessions, never
   * another's. A session whose lease is held or whose turn is unfinished
   * (running or awaiting approval) is never forgotten this way, but counts
   * towards its tenant's share. Without auth, all sessions share one tenant.
   */
  maxSessions?: number;
  /**
   * The most sessions of one tenant (or, without auth, of the server) whose
   * turn may wait for approval at once (default 1 000; a turn waiting on
   * several calls counts once). Such a session is kept until its approvals
   * are decided or expire (a day by default), so past this bound a new turn
   * of the tenant is refused with `PendingApprovalsLimitError` (HTTP 429
   * `too_many_pending_approvals`) rather than growing memory without bound.
   */
  maxPendingApprovalsPerTenant?: number;
  /**
   * A session with no write for this many seconds, whose last turn has
   * ended, is kept compacted (default 30, longer than a person usually takes
   * to answer; `false` keeps every session as objects). A compacted session is one string of its history in compact
   * JSON instead of some eighty objects: under half the memory, and nothing
   * for the garbage collector to walk. The next read or turn of the session
   * unpacks it (some 30 µs of CPU for a 3-turn session, and compacting it
   * again about as much: so the default leaves alone a conversation that is
   * still going on). Idle sessions are
   * found by a timer (every 5 s, or half this time when shorter) that walks
   * the sessions in order of their last write and stops at the first recent
   * one. What a
   * compacted session holds reads back as JSON carries it, as from the Redis
   * store (a `Date` in metadata becomes its ISO text); a session holding what
   * JSON cannot (a BigInt, a cycle) is left as it is.
   */
  compactAfterSeconds?: number | false;
}

/** Throws a `ConfigurationError` naming the first option (with its default filled in) that cannot work. */
export function checkInMemorySessionOptions({
  idleTtlSeconds,
  maxSessions,
  maxPendingApprovalsPerTenant,
  compactAfterSeconds,
}: Required<InMemorySessionStoreOptions>): void {
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
  if (!Number.isSafeInteger(maxPendingApprovalsPerTenant) || maxPendingApprovalsPerTenant <= 0) {
    throw new ConfigurationError({
      message: `maxPendingApprovalsPerTenant must be a positive whole number, got ${maxPendingApprovalsPerTenant}`,
    });
  }
  if (
    compactAfterSeconds !== false &&
    (!(compactAfterSeconds > 0) || !Number.isFinite(compactAfterSeconds))
  ) {
    throw new ConfigurationError({
      message: `compactAfterSeconds must be a positive number of seconds or false, got ${compactAfterSeconds}`,
    });
  }
}
