import { Agent, request } from 'node:http';
import { expectedReply, sessionOf, userMessage } from './workload.js';

/** Result of one load run. */
export interface PeerLoadResult {
  requests: number;
  /** Non-200 answers, failed requests and wrong replies. */
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * POSTs turns to a loopback /v1/chat over keep-alive connections for a bounded time and count. Each of the
 * `concurrency` callers sends its turns one after another and opens a new session every 3 turns, so that the
 * turns of one session never overlap. Every reply is checked against the expected one.
 */
export async function runPeerLoad({
  url,
  concurrency,
  seconds,
  maxRequests,
  sessionPrefix,
}: {
  url: string;
  /** Distinguishes this run's sessions from an earlier run's against the same server. */
  sessionPrefix: string;
  concurrency: number;
  seconds: number;
  maxRequests: number;
}): Promise<PeerLoadResult> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1')
    throw new Error(`load tests target loopback only, not ${target.hostname}`);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = new Float64Array(maxRequests);
  let sent = 0;
  let completed = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;

  const one = (caller: number, index: number) =>
    new Promise<void>((resolve) => {
      const payload = JSON.stringify({
        message: userMessage(index),
        sessionId: sessionOf(index, `${sessionPrefix}${caller}`),
      });
      const requestStarted = performance.now();
      const outgoing = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: '/v1/chat',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            latencies[completed++] = performance.now() - requestStarted;
            let reply: unknown;
            try {
              reply = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { reply?: unknown }).reply;
            } catch {}
            if (response.statusCode !== 200 || reply !== expectedReply(index)) errors++;
            resolve();
          });
        },
      );
      outgoing.on('error', () => {
        errors++;
        resolve();
      });
      outgoing.end(payload);
    });

  const caller = async (id: number) => {
    // Whole sessions only, so that every session a caller opens gets its 3 turns.
    for (let index = 0; sent < maxRequests && performance.now() < deadline; ) {
      for (let step = 0; step < 3; step++, index++) {
        sent++;
        await one(id, index);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => caller(id)));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.slice(0, completed).sort();
  return {
    requests: completed,
    errors,
    requestsPerSecond: completed / elapsed,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
  };
}
