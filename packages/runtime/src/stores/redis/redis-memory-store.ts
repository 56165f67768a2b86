import { StoreUnavailableError } from '@switchboard/core';
import type { MemoryStore, MemoryWriteOptions } from '../memory-store.js';
import { copyMemoryDefault, encodeMemoryValue, memoryTtlMs } from '../memory-values.js';
import { execResults } from './exec-results.js';
import { CLEAR_MEMORY, TOUCH_MEMORY, WRITE_MEMORY } from './lua-scripts.js';
import { decodeRecord, MemoryRecordSchema, RECORD_VERSION } from './records.js';
import { RedisConnection, type RedisSource, type RedisStoreOptions } from './redis-connection.js';
import { checkEvictionPolicy } from './redis-eviction.js';
import { memoryKeys } from './redis-keys.js';

/** The most value keys one clear or touch script declares. */
const KEYS_PER_SCRIPT = 500;
/** How many times `clear` reads the index again when values were written while it cleared. */
const MAX_CLEAR_ROUNDS = 10;

/** Options of {@link RedisMemoryStore}. */
export interface RedisMemoryStoreOptions extends RedisStoreOptions {
  /** How many times `update` retries after losing a race to another process (default 100). */
  maxUpdateAttempts?: number;
}

interface ValueKeys {
  value: string;
  index: string;
  renewable: string;
}

/** WRITE_MEMORY's renewable argument: a write with a ttl sets the key's renewability, one without keeps it ('cas') or clears it ('set'). */
function renewableArgument(mode: 'set' | 'cas', options: MemoryWriteOptions | undefined): string {
  if (options?.ttlSeconds === undefined) return mode === 'cas' ? '' : '0';
  return options.renewable ? '1' : '0';
}

/** Wraps a value's JSON as a `{ v: 1, value }` record without serialising it twice. */
function memoryRecord(json: string): string {
  return `{"v":${RECORD_VERSION},"value":${json}}`;
}

/**
 * A {@link MemoryStore} in Redis, shared by every replica.
 *
 * Each value is its own key holding a `{ v: 1, value }` record (validated
 * when read), with its TTL as the key's expiry; a set per namespace indexes
 * the keys so `clear` never scans the keyspace. `update` is an optimistic
 * compare-and-set (a Lua script) retried on conflict, so it is atomic across
 * processes; within one process, updates of the same key queue up instead of
 * racing each other, which keeps conflicts (and retries) rare.
 *
 * Without `ttlSeconds`, `set` stores a value that never expires while
 * `update` keeps the value's current expiry.
 *
 * @example
 * ```ts
 * const memory = new RedisMemoryStore('redis://127.0.0.1:6379', { keyPrefix: 'shop:' });
 * await memory.update('app', 'visits', (n: number) => n + 1, 0);
 * ```
 */
export class RedisMemoryStore implements MemoryStore {
  readonly specificationVersion = 'v1' as const;
  readonly #connection: RedisConnection;
  readonly #keyPrefix: string;
  readonly #allowEviction: boolean;
  readonly #maxUpdateAttempts: number;
  /** The tail of each key's queue of local updates. */
  readonly #updates = new Map<string, Promise<void>>();

  /**
   * @param source - an ioredis client (left open on `close()`), or a URL or ioredis options
   *   from which the store creates its own lazily connecting client (quit on `close()`).
   */
  constructor(
    source: RedisSource,
    {
      keyPrefix = 'switchboard:',
      commandTimeoutMs,
      maxUpdateAttempts = 100,
      allowEviction = false,
    }: RedisMemoryStoreOptions = {},
  ) {
    this.#keyPrefix = keyPrefix;
    this.#allowEviction = allowEviction;
    this.#maxUpdateAttempts = maxUpdateAttempts;
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
  }

  /** The value, or `undefined` when absent or expired. */
  async get(namespace: string, key: string): Promise<unknown> {
    const keys = this.#keys(namespace, key);
    const raw = await this.#connection.run('read memory', (client) => client.get(keys.value));
    return raw === null ? undefined : decodeRecord(keys.value, raw, MemoryRecordSchema).value;
  }

  /** Stores the value; with `ttlSeconds` it expires, otherwise it does not. */
  async set(namespace: string, key: string, value: unknown, options?: MemoryWriteOptions): Promise<void> {
    const record = memoryRecord(encodeMemoryValue(namespace, key, value));
    const ttlMs = memoryTtlMs(options);
    const keys = this.#keys(namespace, key);
    await this.#connection.run(
      'write memory',
      (client) =>
        WRITE_MEMORY.run(
          client,
          [keys.value, keys.index, keys.renewable],
          ['set', '', '1', record, ttlMs ?? '', key, renewableArgument('set', options)],
        ),
      { write: true },
    );
  }

  /** Deletes the value; true when it existed. */
  async delete(namespace: string, key: string): Promise<boolean> {
    const keys = this.#keys(namespace, key);
    const [deleted] = await this.#connection.run('delete memory', (client) =>
      execResults(client.multi().del(keys.value).srem(keys.index, key).srem(keys.renewable, key)),
    );
    return (deleted as number) > 0;
  }

  /** Atomically stores `fn(current)` and resolves to it; `fn` runs again when another process won the race. */
  update<T>(
    namespace: string,
    key: string,
    fn: (current: T) => T,
    defaultValue: T,
    options?: MemoryWriteOptions,
  ): Promise<T> {
    const keys = this.#keys(namespace, key);
    return this.#serialise(keys.value, async () => {
      const ttlMs = memoryTtlMs(options);
      for (let attempt = 1; attempt <= this.#maxUpdateAttempts; attempt += 1) {
        const raw = await this.#connection.run('read memory', (client) => client.get(keys.value));
        const current =
          raw === null
            ? copyMemoryDefault(namespace, key, defaultValue)
            : (decodeRecord(keys.value, raw, MemoryRecordSchema).value as T);
        const json = encodeMemoryValue(namespace, key, fn(current));
        const written = await this.#connection.run(
          'update memory',
          (client) =>
            WRITE_MEMORY.run(
              client,
              [keys.value, keys.index, keys.renewable],
              [
                'cas',
                raw ?? '',
                raw === null ? '0' : '1',
                memoryRecord(json),
                ttlMs ?? '',
                key,
                renewableArgument('cas', options),
              ],
            ),
          { write: true },
        );
        if (written === 1) return JSON.parse(json) as T;
      }
      throw new StoreUnavailableError({
        message: `Gave up updating memory '${namespace}/${key}' after ${this.#maxUpdateAttempts} conflicting concurrent writes; retry later`,
      });
    });
  }

  /**
   * Deletes every value of the namespace: reads its index, then deletes what
   * it lists in one script call (which declares every key), in batches of
   * {@link KEYS_PER_SCRIPT}; values written meanwhile are deleted by another round.
   */
  async clear(namespace: string): Promise<void> {
    const { index, valuePrefix, renewable } = memoryKeys(this.#keyPrefix, namespace);
    for (let round = 0; round < MAX_CLEAR_ROUNDS; round++) {
      const members = await this.#connection.run('clear memory', (client) => client.smembers(index));
      let left = 0;
      for (let start = 0; start === 0 || start < members.length; start += KEYS_PER_SCRIPT) {
        const batch = members.slice(start, start + KEYS_PER_SCRIPT);
        left = Number(
          await this.#connection.run('clear memory', (client) =>
            CLEAR_MEMORY.run(
              client,
              [index, renewable, ...batch.map((member) => valuePrefix + member)],
              batch,
            ),
          ),
        );
      }
      if (left === 0) return;
    }
  }

  /**
   * Makes the namespace's renewable values expire `ttlSeconds` from now: reads
   * the renewable set, then extends what it lists in one script call (which
   * declares every key). Two round trips; the runtime does not wait for them.
   */
  async touch(namespace: string, ttlSeconds: number): Promise<void> {
    const { index, valuePrefix, renewable } = memoryKeys(this.#keyPrefix, namespace);
    const members = await this.#connection.run('extend memory', (client) => client.smembers(renewable));
    const ttlMs = Math.round(ttlSeconds * 1000);
    for (let start = 0; start < members.length; start += KEYS_PER_SCRIPT) {
      const batch = members.slice(start, start + KEYS_PER_SCRIPT);
      await this.#connection.run('extend memory', (client) =>
        TOUCH_MEMORY.run(
          client,
          [index, renewable, ...batch.map((member) => valuePrefix + member)],
          [ttlMs, ...batch],
        ),
      );
    }
  }

  /** Throws `StoreUnavailableError` unless Redis answers and, after it refused a write, takes writes again. */
  ping(): Promise<void> {
    return this.#connection.ping(`${this.#keyPrefix}readiness-probe`);
  }

  /** See `RedisSessionStore.checkConfiguration`: memory values carry expiries, which `volatile-*` policies evict. */
  checkConfiguration(): Promise<readonly string[]> {
    return checkEvictionPolicy(this.#connection, this.#allowEviction);
  }

  /** Quits the client if the store created it. */
  close(): Promise<void> {
    return this.#connection.close();
  }

  #keys(namespace: string, key: string): ValueKeys {
    const { index, valuePrefix, renewable } = memoryKeys(this.#keyPrefix, namespace);
    return { value: valuePrefix + key, index, renewable };
  }

  /** Runs `task` after every earlier local update of the same key has settled. */
  #serialise<T>(valueKey: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#updates.get(valueKey) ?? Promise.resolve();
    const result = previous.then(task);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.#updates.set(valueKey, settled);
    void settled.then(() => {
      if (this.#updates.get(valueKey) === settled) this.#updates.delete(valueKey);
    });
    return result;
  }
}
