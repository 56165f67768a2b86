import type { Awaitable } from './session-store.js';

/**
 * Counts requests per key in fixed windows. The in-memory one counts within
 * one process; `RedisRateLimiter` (from `@switchboard/runtime/redis`) counts
 * across every replica sharing Redis.
 */
export interface RateLimiter {
  /** Counts one request for `key` in the current window of `windowMs`; how many so far, and when the window ends. */
  hit(key: string, windowMs: number): Awaitable<{ count: number; resetAt: number }>;
  close?(): Awaitable<void>;
}

/** Windows kept at most; the oldest are dropped past this (their keys start counting afresh). */
const MAX_KEYS = 100_000;

/** A {@link RateLimiter} for one process. */
export class InMemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();

  hit(key: string, windowMs: number): { count: number; resetAt: number } {
    const now = Date.now();
    let window = this.#windows.get(key);
    if (!window || window.resetAt <= now) {
      this.#windows.delete(key);
      window = { count: 0, resetAt: now + windowMs };
      this.#windows.set(key, window);
      if (this.#windows.size > MAX_KEYS) {
        const oldest = this.#windows.keys().next().value;
        if (oldest !== undefined) this.#windows.delete(oldest);
      }
    }
    window.count += 1;
    return { count: window.count, resetAt: window.resetAt };
  }
}
