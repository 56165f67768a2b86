import { InMemoryMemoryStore } from '../stores/in-memory-memory-store.js';
import { canTouch, type MemoryStore } from '../stores/memory-store.js';

const noop = () => {};

/**
 * Keeps a session's memory alive while the session is in use. Session memory
 * written without its own ttl expires one idle time after its last write;
 * each turn extends it again, at most once per tenth of that time per
 * session and process, so a busy session keeps its memory as long as its
 * history. The extension is not awaited: issued in the same tick as the
 * turn's first store call, it shares its round trip with an auto-pipelining
 * Redis client, and a failure only means the memory keeps its current expiry.
 * The embedded store is extended on every turn instead: there a renewal is a
 * map lookup, cheaper than keeping track of when each session was renewed.
 */
export class MemoryRenewal {
  readonly #store: MemoryStore & Required<Pick<MemoryStore, 'touch'>>;
  readonly #ttlSeconds: number;
  readonly #intervalMs: number;
  readonly #maxTracked: number;
  /** When each namespace was last extended, oldest first. */
  readonly #lastRenewed = new Map<string, number>();

  /** A renewal for `store`, or undefined when the store cannot extend values (then there is nothing to do). */
  static for(store: MemoryStore, ttlSeconds: number): MemoryRenewal | undefined {
    return canTouch(store) ? new MemoryRenewal(store, ttlSeconds) : undefined;
  }

  /** The embedded store, extended at once on every turn (see the class's note). */
  readonly #local: InMemoryMemoryStore | undefined;

  private constructor(
    store: MemoryStore & Required<Pick<MemoryStore, 'touch'>>,
    ttlSeconds: number,
    { maxTracked = 10_000 }: { maxTracked?: number } = {},
  ) {
    this.#store = store;
    this.#ttlSeconds = ttlSeconds;
    this.#intervalMs = (ttlSeconds * 1000) / 10;
    this.#maxTracked = maxTracked;
    this.#local = store instanceof InMemoryMemoryStore ? store : undefined;
  }

  /** Extends the namespace's renewable memory unless that was done recently. */
  renew(namespace: string, ttlSeconds = this.#ttlSeconds): void {
    if (this.#local) {
      this.#local.touchNow(namespace, ttlSeconds);
      return;
    }
    const now = Date.now();
    const last = this.#lastRenewed.get(namespace);
    // At most a tenth of the namespace's own time, when it is shorter than the default.
    if (last !== undefined && now - last < Math.min(this.#intervalMs, ttlSeconds * 100)) return;
    this.#lastRenewed.delete(namespace);
    this.#lastRenewed.set(namespace, now);
    if (this.#lastRenewed.size > this.#maxTracked) {
      const oldest = this.#lastRenewed.keys().next().value;
      if (oldest !== undefined) this.#lastRenewed.delete(oldest);
    }
    try {
      this.#store.touch(namespace, ttlSeconds).catch(noop);
    } catch {
      // A custom store that throws at once: the memory keeps its current expiry.
    }
  }
}
