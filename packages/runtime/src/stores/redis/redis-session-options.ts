/**
 * What a `RedisSessionStore` is made with, and the check of it at
 * construction.
 *
 * @module
 */
import { ConfigurationError } from '@switchboard/core';
import type { RedisStoreOptions } from './redis-connection.js';

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions extends RedisStoreOptions {
  /** A session with no write for this long expires, in Redis, with all its keys (default 86 400, one day). */
  idleTtlSeconds?: number;
  /**
   * How many characters of stored message text the store keeps in this
   * process, over all sessions, to decode only what is new in the next window
   * of a session (default 8 000 000, which with the decoded messages is some
   * tens of MB at most; 0 turns the cache off).
   */
  windowCacheChars?: number;
  /**
   * Write messages and ended turns in the compact record format (default
   * true): JSON arrays with times as numbers, under half the bytes of the
   * `{ "v": 1, … }` records. This version reads both. Set it to false only
   * while replicas of the previous version share the Redis (a rolling
   * upgrade): they cannot read compact records.
   */
  compactRecords?: boolean;
  /**
   * How long this replica's liveness key lives without a refresh, in ms
   * (default 1 200; refreshed every third of it). Leases name their replica,
   * and a replica waiting for a session whose holder's key is gone takes the
   * lease over: a crashed replica's sessions are served again within about
   * this time plus one refresh interval, rather than the lease ttl. Costs one
   * `SET` per refresh per replica. A replica whose event loop stalls longer
   * than this may lose its sessions to others (its writes are then refused
   * by the lease's token, and its turns stop): raise it where such stalls
   * are expected.
   */
  livenessTtlMs?: number;
}

/** Throws a `ConfigurationError` naming the first option (with its default filled in) that cannot work. */
export function checkRedisSessionOptions({
  livenessTtlMs,
  idleTtlSeconds,
}: Required<Pick<RedisSessionStoreOptions, 'livenessTtlMs' | 'idleTtlSeconds'>>): void {
  if (!(livenessTtlMs >= 30) || !Number.isFinite(livenessTtlMs)) {
    throw new ConfigurationError({
      message: `livenessTtlMs must be a number of milliseconds of at least 30, got ${livenessTtlMs}`,
    });
  }
  if (!(idleTtlSeconds > 0) || !Number.isFinite(idleTtlSeconds)) {
    throw new ConfigurationError({
      message: `idleTtlSeconds must be a positive number of seconds, got ${idleTtlSeconds}`,
    });
  }
}
