/**
 * Redis-backed stores (`@switchboard/runtime/redis`): pass them to `App` so
 * that any number of replicas share sessions, leases and memory. Requires the
 * `ioredis` peer dependency. Nothing connects on import; a store created from
 * a URL connects on its first command.
 * @module
 */
import type { Cluster, Redis } from 'ioredis';
import { RedisBudgetCounters } from './budgets/redis-budget-counters.js';
import { RedisConfigStore } from './stores/redis/redis-config-store.js';
import {
  createRedisClient,
  existingClient,
  type RedisSource,
  type RedisStoreOptions,
  shareOwnership,
} from './stores/redis/redis-connection.js';
import { RedisMemoryStore, type RedisMemoryStoreOptions } from './stores/redis/redis-memory-store.js';
import { RedisRateLimiter } from './stores/redis/redis-rate-limiter.js';
import { RedisSessionStore, type RedisSessionStoreOptions } from './stores/redis/redis-session-store.js';
import { RedisTurnEventLog, type RedisTurnEventLogOptions } from './stores/redis/redis-turn-event-log.js';

export { RedisBudgetCounters } from './budgets/redis-budget-counters.js';
export {
  type MigrateSessionMemoryOptions,
  type MigrateSessionMemoryResult,
  migrateSessionMemory,
} from './stores/redis/migrate-session-memory.js';
export { RedisConfigStore } from './stores/redis/redis-config-store.js';
export {
  createRedisClient,
  type RedisSource,
  type RedisStoreOptions,
} from './stores/redis/redis-connection.js';
export { RedisMemoryStore, type RedisMemoryStoreOptions } from './stores/redis/redis-memory-store.js';
export { RedisRateLimiter } from './stores/redis/redis-rate-limiter.js';
export { RedisSessionStore, type RedisSessionStoreOptions } from './stores/redis/redis-session-store.js';
export { RedisTurnEventLog, type RedisTurnEventLogOptions } from './stores/redis/redis-turn-event-log.js';

/** Options of {@link createRedisStores}. */
export interface RedisStoresOptions extends RedisStoreOptions {
  /** Idle expiry of sessions (default 86 400 seconds). */
  idleTtlSeconds?: RedisSessionStoreOptions['idleTtlSeconds'];
  /** See {@link RedisSessionStoreOptions.windowCacheChars}. */
  windowCacheChars?: RedisSessionStoreOptions['windowCacheChars'];
  /** See {@link RedisSessionStoreOptions.compactRecords}. */
  compactRecords?: RedisSessionStoreOptions['compactRecords'];
  /** See {@link RedisSessionStoreOptions.livenessTtlMs}. */
  livenessTtlMs?: RedisSessionStoreOptions['livenessTtlMs'];
  /** See {@link RedisMemoryStoreOptions.maxUpdateAttempts}. */
  maxUpdateAttempts?: RedisMemoryStoreOptions['maxUpdateAttempts'];
  /** How much of each turn's events the event log keeps (see {@link RedisTurnEventLog}). */
  events?: Pick<RedisTurnEventLogOptions, 'maxEventsPerTurn' | 'retentionMs'>;
}

/** A session store, a memory store, a rate limiter, an event log and a config store sharing one connection. */
export interface RedisStores {
  sessionStore: RedisSessionStore;
  memoryStore: RedisMemoryStore;
  /** Counts requests per API key across replicas (used with the app's `rateLimit`). */
  rateLimiter: RedisRateLimiter;
  /** Keeps each turn's events, so that a client can rejoin its stream from any replica. */
  eventLog: RedisTurnEventLog;
  /** Counts model spending per session and tenant across replicas (used with the app's `budgets`). */
  budgetCounters: RedisBudgetCounters;
  /** Keeps the live configuration items, and tells every replica of each change (see `docs/guides/configuration.md`). */
  configStore: RedisConfigStore;
}

/**
 * Creates the Redis stores (sessions, memory, rate limits, turn events, configuration) over one
 * connection. From a URL, options or a Redis Cluster's nodes, they share a
 * new client that the last `close()` quits; a client or `Cluster` you pass
 * stays yours to quit. On a Cluster every script touches the keys of one
 * session (one hash tag, so one slot). Redis must run with
 * `maxmemory-policy noeviction`: `app.start()` and `/readyz` fail otherwise,
 * unless `allowEviction` (see {@link RedisStoreOptions.allowEviction}).
 *
 * @example
 * ```ts
 * const stores = createRedisStores(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: 'support:' });
 * const app = new App({ name: 'support', agents, ...stores });
 * // Redis Cluster: any of its nodes (or an ioredis `Cluster` you made).
 * createRedisStores(['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379'], { keyPrefix: 'support:' });
 * ```
 */
export function createRedisStores(
  source: RedisSource,
  {
    keyPrefix,
    commandTimeoutMs,
    idleTtlSeconds,
    windowCacheChars,
    compactRecords,
    livenessTtlMs,
    maxUpdateAttempts,
    allowEviction,
    events,
  }: RedisStoresOptions = {},
): RedisStores {
  let shared = existingClient(source);
  if (!shared) {
    shared = createRedisClient(source as Exclude<RedisSource, Redis | Cluster>, { commandTimeoutMs });
    shareOwnership(shared, 6);
  }
  return {
    sessionStore: new RedisSessionStore(shared, {
      keyPrefix,
      commandTimeoutMs,
      idleTtlSeconds,
      windowCacheChars,
      compactRecords,
      livenessTtlMs,
      allowEviction,
    }),
    memoryStore: new RedisMemoryStore(shared, {
      keyPrefix,
      commandTimeoutMs,
      maxUpdateAttempts,
      allowEviction,
    }),
    rateLimiter: new RedisRateLimiter(shared, { keyPrefix, commandTimeoutMs }),
    eventLog: new RedisTurnEventLog(shared, { keyPrefix, commandTimeoutMs, ...events }),
    budgetCounters: new RedisBudgetCounters(shared, { keyPrefix, commandTimeoutMs }),
    configStore: new RedisConfigStore(shared, { keyPrefix, commandTimeoutMs }),
  };
}
