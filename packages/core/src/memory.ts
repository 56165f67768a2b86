/** Where a value lives: this session, this user across sessions, or the whole app. */
export type MemoryScope = 'session' | 'user' | 'app';

/** The result of a memory operation: a value, never a throw. */
export type MemoryResult<T> = { success: true; data: T } | { success: false; error: Error };

/** Options of {@link Memory.setContent}. */
export interface SetContentOptions {
  /** Expire the value after this many seconds. */
  ttlSeconds?: number;
}

/**
 * Key/value memory for orchestrators and agents, bound to one scope. Values
 * must be JSON-serialisable. Every method resolves to a {@link MemoryResult}
 * and never rejects, so a store outage is handled like any other result.
 *
 * @example
 * ```ts
 * const memory = RequestContext.current().getMemory();
 * const visits = await memory.updateContent('visits', (n: number) => n + 1, 0);
 * if (visits.success) console.log(visits.data);
 * ```
 */
export interface Memory {
  readonly scope: MemoryScope;
  /** Reads a value; `data` is `defaultValue` (or `undefined`) when the key is absent. */
  getContent<T = unknown>(key: string, defaultValue?: T): Promise<MemoryResult<T | undefined>>;
  /** Writes a value, optionally with a time to live. */
  setContent<T = unknown>(key: string, value: T, options?: SetContentOptions): Promise<MemoryResult<T>>;
  /** Deletes a value; `data` says whether it existed. */
  deleteContent(key: string): Promise<MemoryResult<boolean>>;
  /**
   * Atomically replaces a value with `fn(current)` (`current` is `defaultValue`
   * when the key is absent); concurrent updates never lose a write. `fn` may be
   * called more than once, so keep it pure.
   */
  updateContent<T>(
    key: string,
    fn: (current: T) => T,
    defaultValue: T,
    options?: SetContentOptions,
  ): Promise<MemoryResult<T>>;
}
