import type { AppOptions } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';

/** In-memory stores by default; Redis ones with BENCH_STORE=redis, under the key prefix the parent chose. */
export async function benchStores(): Promise<Pick<AppOptions, 'sessionStore' | 'memoryStore' | 'eventLog'>> {
  if (process.env.BENCH_STORE !== 'redis') return {};
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  return createRedisStores(url, { keyPrefix: process.env.BENCH_KEY_PREFIX ?? 'switchboard-bench:' });
}
