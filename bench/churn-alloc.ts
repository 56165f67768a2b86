// Heap bytes a turn allocates, counted from V8's own GC records (node:v8 GCProfiler): the bytes in use at
// the end, minus at the start, plus what every collection in between freed. Nothing is sampled; short-lived
// garbage that a scavenge reclaims is counted like anything else.
import { GCProfiler, getHeapStatistics } from 'node:v8';

/** Runs `work` and returns the heap bytes it allocated. */
export async function allocatedBytes(work: () => Promise<void>): Promise<number> {
  const profiler = new GCProfiler();
  profiler.start();
  const start = getHeapStatistics().used_heap_size;
  await work();
  const end = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let freed = 0;
  for (const gc of statistics)
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  return end - start + freed;
}
