import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type ChatOutcome, chat, type Replica } from './replicas.js';

/** One request of a {@link startLoad} stream. */
export interface Sample extends Partial<ChatOutcome> {
  /** Index of the replica it was sent to. */
  replica: number;
  /** The worker (and so the session) that sent it. */
  worker: number;
  /** The worker's session. */
  sessionId: string;
  startedAt: number;
  endedAt: number;
  /** Set when the request failed at the transport level (reset, or no answer within 10 s). */
  failure?: string;
  /** Whether it was answered before its sentinel settled; unset when it was not raced (see {@link Load.raceFrom}). */
  answeredFirst?: boolean;
}

/** A steady stream of chat requests, see {@link startLoad}. */
export interface Load {
  readonly samples: Sample[];
  /**
   * Races the requests in flight and those sent from now on, each against a
   * sentinel of its own that `sentinel()` starts now (for those in flight) or
   * as the request is sent, until called again; `undefined` stops racing the
   * requests sent later. Each raced sample says whether it was answered first.
   */
  raceFrom(sentinel: (() => Promise<unknown>) | undefined): void;
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/**
 * Starts `workersPerReplica` workers per replica. Each chats on its own
 * session, one message after another, pausing 50 ms after an error, until
 * stopped. Times are `performance.now()` values.
 */
export function startLoad(targets: readonly Replica[], { workersPerReplica = 2 } = {}): Load {
  const samples: Sample[] = [];
  let running = true;
  let sentinel: (() => Promise<unknown>) | undefined;
  /** The requests in flight, each as the function that races it against a sentinel. */
  const inFlight = new Set<(start: () => Promise<unknown>) => void>();
  const run = async (replica: number, worker: number) => {
    const sessionId = `load-${randomBytes(4).toString('hex')}-${worker}`;
    for (let index = 0; running; index += 1) {
      const startedAt = performance.now();
      let sentinelSettled: boolean | undefined;
      const race = (start: () => Promise<unknown>) => {
        if (sentinelSettled !== undefined) return;
        sentinelSettled = false;
        const settled = () => {
          sentinelSettled = true;
        };
        start().then(settled, settled);
      };
      if (sentinel) race(sentinel);
      inFlight.add(race);
      const sample: Sample = await chat(
        targets[replica]!.url,
        { message: `echo ${worker}.${index}`, sessionId },
        { timeoutMs: 10_000 },
      ).then(
        (outcome) => ({ ...outcome, replica, worker, sessionId, startedAt, endedAt: performance.now() }),
        (error: unknown) => ({
          replica,
          worker,
          sessionId,
          startedAt,
          endedAt: performance.now(),
          failure: String(error),
        }),
      );
      inFlight.delete(race);
      if (sentinelSettled !== undefined) sample.answeredFirst = !sentinelSettled;
      samples.push(sample);
      if (sample.status !== 200) await delay(50);
    }
  };
  const workers = targets.flatMap((_, replica) =>
    Array.from({ length: workersPerReplica }, (__, slot) => run(replica, replica * workersPerReplica + slot)),
  );
  return {
    samples,
    raceFrom(next) {
      sentinel = next;
      if (next) for (const race of inFlight) race(next);
    },
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** `GET /readyz`, with how long it took. */
export async function readiness(url: string): Promise<{ status: number; elapsedMs: number; body: unknown }> {
  const startedAt = performance.now();
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, elapsedMs: performance.now() - startedAt, body: await response.json() };
}

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `condition` holds or `timeoutMs` passes; resolves with whether it holds. */
export async function eventually(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!condition() && performance.now() < deadline) await delay(50);
  return condition();
}
