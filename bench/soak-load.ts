// The load of `bench/replica-soak.ts`: clients chatting on a few shared sessions, alternating replicas.
import { randomBytes } from 'node:crypto';
import { percentile } from './load.js';

/** Options of {@link runSoakLoad}. */
export interface SoakLoadOptions {
  /** The replicas' base URLs; each client sends its messages to them in turn. */
  urls: readonly string[];
  sessions: number;
  clients: number;
  seconds: number;
}

/** What a {@link runSoakLoad} run answered. */
export interface SoakLoadResult {
  requests: number;
  /** Answers by `<status>` or `<status> <error code>` (`409 session_busy`), and `failed` for no answer. */
  outcomes: Map<string, number>;
  /** Seconds from the first request to the last answer (in-flight requests included). */
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

/** No request waits longer: the server's session wait is 10 s. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * Each of `clients` clients sends `POST /v1/chat` one message after another, each to a random one of
 * `sessions` sessions and to the next replica in turn, for `seconds`; then the requests in flight finish.
 * The messages are sums, which the keyword orchestrator routes to the calculator (a synchronous agent),
 * so a turn is as short as a turn gets and two clients on one session meet often.
 */
export async function runSoakLoad({
  urls,
  sessions,
  clients,
  seconds,
}: SoakLoadOptions): Promise<SoakLoadResult> {
  const run = randomBytes(4).toString('hex');
  const sessionIds = Array.from({ length: sessions }, (_, index) => `soak-${run}-${index}`);
  const outcomes = new Map<string, number>();
  const latencies: number[] = [];
  const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const started = performance.now();
  const deadline = started + seconds * 1000;

  const client = async (number: number) => {
    for (let index = 0; performance.now() < deadline; index += 1) {
      const url = urls[(number + index) % urls.length]!;
      const sessionId = sessionIds[Math.floor(Math.random() * sessionIds.length)]!;
      const sentAt = performance.now();
      try {
        const response = await fetch(`${url}/v1/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sessionId, message: `what is ${number} + ${index}?` }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const body = (await response.json()) as { error?: { code?: string } };
        count(body.error?.code ? `${response.status} ${body.error.code}` : String(response.status));
      } catch {
        count('failed');
      }
      latencies.push(performance.now() - sentAt);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, number) => client(number)));
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    outcomes,
    seconds: (performance.now() - started) / 1000,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
  };
}
