/**
 * Redis-backed stores (`@switchboard/runtime/redis`): pass them to `App` so
 * that any number of replicas share sessions, leases and memory. Requires the
 * `ioredis` peer dependency. Nothing connects on import; a store created from
 * a URL connects on its first command.
 * @module
 */
import { Redis, type RedisOptions } from 'ioredis';
import {
  createRedisClient,
  type RedisStoreOptions,
  shareOwnership,
} from './stores/redis/redis-connection.js';
import { RedisMemoryStore, type RedisMemoryStoreOptions } from './stores/redis/redis-memory-store.js';
import { RedisSessionStore, type RedisSessionStoreOptions } from './stores/redis/redis-session-store.js';

export {
  createRedisClient,
  type RedisSource,
  type RedisStoreOptions,
} from './stores/redis/redis-connection.js';
export { RedisMemoryStore, type RedisMemoryStoreOptions } from './stores/redis/redis-memory-store.js';
export { RedisSessionStore, type RedisSessionStoreOptions } from './stores/redis/redis-session-store.js';

/** Options of {@link createRedisStores}. */
export interface RedisStoresOptions extends RedisStoreOptions {
  /** Idle expiry of sessions (default 86 400 seconds). */
  idleTtlSeconds?: RedisSessionStoreOptions['idleTtlSeconds'];
  /** See {@link RedisSessionStoreOptions.windowCacheChars}. */
  windowCacheChars?: RedisSessionStoreOptions['windowCacheChars'];
  /** See {@link RedisMemoryStoreOptions.maxUpdateAttempts}. */
  maxUpdateAttempts?: RedisMemoryStoreOptions['maxUpdateAttempts'];
}

/** A session store and a memory store sharing one connection. */
export interface RedisStores {
  sessionStore: RedisSessionStore;
  memoryStore: RedisMemoryStore;
}

/**
 * Creates both Redis stores over one connection. From a URL or options, the
 * stores share a new client that the second `close()` quits; a client you
 * pass stays yours to quit.
 *
 * @example
 * ```ts
 * const stores = createRedisStores(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: 'support:' });
 * const app = new App({ name: 'support', agents, ...stores });
 * ```
 */
export function createRedisStores(
  source: Redis | string | RedisOptions,
  {
    keyPrefix,
    commandTimeoutMs,
    idleTtlSeconds,
    windowCacheChars,
    maxUpdateAttempts,
  }: RedisStoresOptions = {},
): RedisStores {
  let shared: Redis;
  if (source instanceof Redis) {
    shared = source;
  } else {
    shared = createRedisClient(source, { commandTimeoutMs });
    shareOwnership(shared, 2);
  }
  return {
    sessionStore: new RedisSessionStore(shared, {
      keyPrefix,
      commandTimeoutMs,
      idleTtlSeconds,
      windowCacheChars,
    }),
    memoryStore: new RedisMemoryStore(shared, { keyPrefix, commandTimeoutMs, maxUpdateAttempts }),
  };
}
