/** Options of {@link DecodedRecordCache}. */
export interface DecodedRecordCacheOptions {
  /** Characters of raw record text one generation holds before it is retired (default 4 000 000). */
  maxChars?: number;
  /** Records longer than this are never cached (default 65 536 characters). */
  maxRecordChars?: number;
}

/**
 * @internal Decoded records by their exact raw text, so that the records a
 * session window reads again and again (each turn re-reads the last 50
 * messages) are parsed and validated once per process instead of once per read.
 *
 * Keyed by the raw text itself, the cache can never serve stale data: a
 * record that changed, was deleted and rewritten, or was written by another
 * replica has different text (or the same text, and then the same decoded
 * value). Only values that passed validation are stored, and callers must
 * store immutable values, since every hit hands out the same object.
 *
 * Memory stays bounded with two generations: new entries go into the
 * current one; when it holds `maxChars` characters of raw text, it becomes
 * the old generation and the previous old one is dropped. A hit in the old
 * generation moves the entry back into the current one, so what is read
 * repeatedly stays cached (an approximation of least-recently-used eviction
 * at the cost of two map lookups).
 */
export class DecodedRecordCache<T> {
  readonly #maxChars: number;
  readonly #maxRecordChars: number;
  #current = new Map<string, T>();
  #previous = new Map<string, T>();
  #currentChars = 0;

  constructor({ maxChars = 4_000_000, maxRecordChars = 65_536 }: DecodedRecordCacheOptions = {}) {
    this.#maxChars = maxChars;
    this.#maxRecordChars = maxRecordChars;
  }

  /** The decoded value of `raw`, or `undefined` when it is not cached. */
  get(raw: string): T | undefined {
    const value = this.#current.get(raw);
    if (value !== undefined) return value;
    const old = this.#previous.get(raw);
    if (old !== undefined) {
      this.#previous.delete(raw);
      this.set(raw, old);
    }
    return old;
  }

  /** Remembers the decoded (and already validated, immutable) value of `raw`. */
  set(raw: string, value: T): void {
    if (raw.length > this.#maxRecordChars) return;
    if (this.#currentChars + raw.length > this.#maxChars) {
      this.#previous = this.#current;
      this.#current = new Map();
      this.#currentChars = 0;
    }
    this.#current.set(raw, value);
    this.#currentChars += raw.length;
  }
}
