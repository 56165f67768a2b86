import type { Shutdownable } from '@switchboard/runtime';

/** Tracing off by default; BENCH_TRACING=1 exports to a loopback sink (added with tracing). */
export async function benchTracing(): Promise<Shutdownable | undefined> {
  return undefined;
}
