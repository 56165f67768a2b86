/** Options of {@link MemoryStore.set} and {@link MemoryStore.update}. */
export interface MemoryWriteOptions {
  /** Expire the value after this many seconds. */
  ttlSeconds?: number;
  /**
   * With `ttlSeconds`: the value follows its namespace's lifetime, so
   * {@link MemoryStore.touch} extends it. The runtime writes session memory
   * that sets no `ttlSeconds` of its own this way, so that it lives as long as
   * its session is in use rather than one idle time after its last write.
   */
  renewable?: boolean;
}

/**
 * Key/value storage behind `Memory`. Values are JSON-serialisable; keys live
 * in namespaces such as `session:<id>`, `user:<id>` and `app`, which never
 * see each other's keys.
 *
 * Implementations throw `StoreUnavailableError` when the backend cannot be
 * reached and `CorruptRecordError` for a value that cannot be read.
 */
export interface MemoryStore {
  readonly specificationVersion: 'v1';
  /** The value, or `undefined` when absent or expired. */
  get(namespace: string, key: string): Promise<unknown>;
  set(namespace: string, key: string, value: unknown, options?: MemoryWriteOptions): Promise<void>;
  /** Resolves true when the key existed. */
  delete(namespace: string, key: string): Promise<boolean>;
  /**
   * Atomically replaces the value with `fn(current)` (`defaultValue` when
   * absent) and resolves to the new value; concurrent updates, from this
   * process or others, never lose a write. `fn` may run more than once.
   */
  update<T>(
    namespace: string,
    key: string,
    fn: (current: T) => T,
    defaultValue: T,
    options?: MemoryWriteOptions,
  ): Promise<T>;
  /** Deletes every key of a namespace (used when a session is deleted). */
  clear(namespace: string): Promise<void>;
  /**
   * Optional: makes every renewable value of the namespace (written with
   * `renewable: true`) expire `ttlSeconds` from now. Use {@link canTouch} to check.
   */
  touch?(namespace: string, ttlSeconds: number): Promise<void>;
  /** Optional: throws when the backend is not reachable. */
  ping?(): Promise<void>;
  /**
   * Optional: checks the backend's settings, at the app's start and on
   * `/readyz`. Throws `ConfigurationError` for a setting that would lose
   * data (a Redis that may evict keys); returns warnings for an operator.
   */
  checkConfiguration?(): Promise<readonly string[]>;
  /** Optional: releases connections and timers. */
  close?(): Promise<void>;
}

/** True when the store supports {@link MemoryStore.touch}. */
export function canTouch(store: MemoryStore): store is MemoryStore & Required<Pick<MemoryStore, 'touch'>> {
  return typeof store.touch === 'function';
}
