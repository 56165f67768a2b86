import type { MemoryStore, MemoryWriteOptions } from './memory-store.js';
import { copyMemoryDefault, encodeMemoryValue, memoryTtlMs } from './memory-values.js';

/** Options of {@link InMemoryMemoryStore}. */
export interface InMemoryMemoryStoreOptions {
  /** How often expired values are swept away, in milliseconds (default 60 000). */
  sweepIntervalMs?: number;
}

interface Entry {
  /** The value as JSON: a detached copy, decoded afresh on every read. */
  json: string;
  expiresAt?: number;
  /** Extended by `touch()`. */
  renewable?: boolean;
}

/**
 * The embedded {@link MemoryStore}: values live in this process's memory as
 * JSON copies, so callers can never mutate what is stored, and a value reads
 * back exactly as it would from Redis.
 *
 * `update` is atomic because it reads, applies `fn` and writes synchronously.
 * Without `ttlSeconds`, `set` stores a value that never expires while `update`
 * keeps the value's current expiry. Expired values disappear on access and in
 * a background sweep that `close()` stops (it never keeps the process alive).
 *
 * @example
 * ```ts
 * const memory = new InMemoryMemoryStore();
 * await memory.update('app', 'visits', (n: number) => n + 1, 0); // 1
 * ```
 */
export class InMemoryMemoryStore implements MemoryStore {
  readonly specificationVersion = 'v1' as const;
  readonly #namespaces = new Map<string, Map<string, Entry>>();
  #sweepTimer: ReturnType<typeof setInterval> | undefined;

  constructor({ sweepIntervalMs = 60_000 }: InMemoryMemoryStoreOptions = {}) {
    this.#sweepTimer = setInterval(() => this.#sweep(), sweepIntervalMs);
    this.#sweepTimer.unref();
  }

  /** A fresh copy of the value, or `undefined` when absent or expired. */
  async get(namespace: string, key: string): Promise<unknown> {
    const entry = this.#live(namespace, key);
    return entry === undefined ? undefined : JSON.parse(entry.json);
  }

  /** Stores a copy of the value; with `ttlSeconds` it expires, otherwise it does not. */
  async set(namespace: string, key: string, value: unknown, options?: MemoryWriteOptions): Promise<void> {
    const json = encodeMemoryValue(namespace, key, value);
    const ttlMs = memoryTtlMs(options);
    this.#entries(namespace).set(key, {
      json,
      expiresAt: ttlMs === undefined ? undefined : Date.now() + ttlMs,
      renewable: ttlMs !== undefined && options?.renewable === true,
    });
  }

  /** Deletes the value; true when it existed (and had not expired). */
  async delete(namespace: string, key: string): Promise<boolean> {
    const existed = this.#live(namespace, key) !== undefined;
    this.#namespaces.get(namespace)?.delete(key);
    return existed;
  }

  /** Atomically stores `fn(current)` and resolves to (a copy of) it. Keeps the expiry unless `ttlSeconds` is given. */
  async update<T>(
    namespace: string,
    key: string,
    fn: (current: T) => T,
    defaultValue: T,
    options?: MemoryWriteOptions,
  ): Promise<T> {
    const ttlMs = memoryTtlMs(options);
    const entry = this.#live(namespace, key);
    const current =
      entry === undefined ? copyMemoryDefault(namespace, key, defaultValue) : (JSON.parse(entry.json) as T);
    const json = encodeMemoryValue(namespace, key, fn(current));
    const expiresAt = ttlMs === undefined ? entry?.expiresAt : Date.now() + ttlMs;
    const renewable = ttlMs === undefined ? entry?.renewable : options?.renewable === true;
    this.#entries(namespace).set(key, { json, expiresAt, renewable });
    return JSON.parse(json) as T;
  }

  /** Deletes every value of the namespace. */
  async clear(namespace: string): Promise<void> {
    this.#namespaces.delete(namespace);
  }

  /** Makes the namespace's renewable values expire `ttlSeconds` from now. */
  async touch(namespace: string, ttlSeconds: number): Promise<void> {
    this.touchNow(namespace, ttlSeconds);
  }

  /**
   * {@link InMemoryMemoryStore.touch}, done before it returns and with no
   * promise: the engine extends a session's memory this way on every turn,
   * which for a namespace with no values is one map lookup.
   */
  touchNow(namespace: string, ttlSeconds: number): void {
    const entries = this.#namespaces.get(namespace);
    if (entries === undefined) return;
    const expiresAt = Date.now() + ttlSeconds * 1000;
    for (const [key, entry] of entries) {
      if (entry.renewable && this.#live(namespace, key)) entry.expiresAt = expiresAt;
    }
  }

  /** Always succeeds: memory is always reachable. */
  async ping(): Promise<void> {}

  /** Stops the sweep timer. Stored values stay readable. */
  async close(): Promise<void> {
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
  }

  #entries(namespace: string): Map<string, Entry> {
    let entries = this.#namespaces.get(namespace);
    if (!entries) {
      entries = new Map();
      this.#namespaces.set(namespace, entries);
    }
    return entries;
  }

  #live(namespace: string, key: string): Entry | undefined {
    const entries = this.#namespaces.get(namespace);
    const entry = entries?.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      entries?.delete(key);
      return undefined;
    }
    return entry;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [namespace, entries] of this.#namespaces) {
      for (const [key, entry] of entries) {
        if (entry.expiresAt !== undefined && entry.expiresAt <= now) entries.delete(key);
      }
      if (entries.size === 0) this.#namespaces.delete(namespace);
    }
  }
}
