import { Agent, request } from 'node:http';

/** Result of one load run. */
export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Every request's latency in ms, sorted (to merge several runs' percentiles). */
  sortedLatenciesMs: Float64Array;
}

/** Options of {@link runLoad}. */
export interface LoadOptions {
  url: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** How long to send requests. */
  seconds: number;
  /** Hard cap on the number of requests, whatever the time. */
  maxRequests: number;
  /** Builds the JSON body of request number `index`, sent by connection `worker` (0 to `concurrency` - 1). */
  body: (index: number, worker: number) => string;
  /** Extra headers on every request (e.g. `authorization`). */
  headers?: Record<string, string>;
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The `p`th percentile of sorted values (NaN when there are none). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Sends POST requests over keep-alive connections to a loopback URL for a
 * bounded time and count, and measures throughput and latency.
 */
export async function runLoad({
  url,
  concurrency,
  seconds,
  maxRequests,
  body,
  headers = {},
}: LoadOptions): Promise<LoadResult> {
  const target = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname))
    throw new Error(`load tests target loopback only, not ${target.hostname}`);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = new Float64Array(maxRequests);
  let sent = 0;
  let completed = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;

  const one = (index: number, worker: number) =>
    new Promise<void>((resolve) => {
      const payload = body(index, worker);
      const t0 = performance.now();
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => {
            if (res.statusCode !== 200) errors++;
            latencies[completed++] = performance.now() - t0;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(payload);
    });

  const worker = async (_: unknown, number: number) => {
    while (sent < maxRequests && performance.now() < deadline) await one(sent++, number);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.slice(0, completed).sort();
  return {
    requests: completed,
    errors,
    seconds: elapsed,
    requestsPerSecond: completed / elapsed,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    sortedLatenciesMs: sorted,
  };
}
