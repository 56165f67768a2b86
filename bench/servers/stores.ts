import type { AppOptions } from '@switchboard/runtime';

/** In-memory stores by default; Redis ones with BENCH_STORE=redis (added with the Redis stores). */
export async function benchStores(): Promise<Pick<AppOptions, 'sessionStore' | 'memoryStore'>> {
  return {};
}
