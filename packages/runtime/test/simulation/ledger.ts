import { SessionBusyError, StoreUnavailableError } from '@switchboard/core';
import type { Redis } from 'ioredis';
import type { TurnResult } from '../../src/engine/turn-engine.js';
import { sessionKeys } from '../../src/stores/redis/redis-keys.js';

/** One request of a simulated client: a message or an approval decision, on one replica. */
export interface Operation {
  sessionId: string;
  replica: number;
  startedAt: number;
  /** Another request on the same session was in flight at some time during this one. */
  overlapped: boolean;
}

/** A message a client sent, and the result it was given (once it was). */
export interface SentMessage {
  text: string;
  acknowledged?: TurnResult;
}

/** What the clients asked of one approval, and which decision they were told was taken. */
export interface ApprovalAsks {
  asked: Set<'approve' | 'reject'>;
  acknowledged: Array<'approved' | 'rejected'>;
}

/** Timing the ledger needs: how long a lease lives, and how long after a fault its traces may linger. */
export interface LedgerTiming {
  leaseTtlMs: number;
  /** How long after its last request settled a session must hold no lease. */
  quietProbeMs: number;
  /** How long a lost command or a killed replica may leave a lease behind. */
  faultLingerMs: number;
}

/**
 * What the simulated clients did and were told, per session: requests in
 * flight, faults that touched the session, messages and their results,
 * approval decisions. It checks the two invariants that can only be seen
 * while the simulation runs (a quiet session holds no lease; a quiet session
 * never answers 409 busy) and collects every violation found.
 */
export class Ledger {
  readonly violations: string[] = [];
  readonly sent = new Map<string, SentMessage[]>();
  readonly approvals = new Map<string, ApprovalAsks>();
  /** The tool call ids the approval-gated agent ran. */
  readonly gatedRuns = new Set<string>();
  readonly #inFlight = new Map<string, Set<Operation>>();
  readonly #activity = new Map<string, number>();
  readonly #faults = new Map<string, Array<[number, number]>>();
  readonly #leaked = new Set<string>();
  readonly #probes = new Set<Promise<void>>();
  readonly #traces = new Map<string, string[]>();
  readonly #startedAt = Date.now();

  /** @param tracing - keep each session's last commands and requests, and add them to its violations. */
  constructor(
    readonly admin: Redis,
    readonly prefix: string,
    readonly timing: LedgerTiming,
    readonly tracing = false,
  ) {}

  /** Notes what happened on a session, for the trace of a violation (with `tracing`). */
  note(sessionId: string, what: string): void {
    if (!this.tracing) return;
    const lines = this.#traces.get(sessionId) ?? [];
    lines.push(`${String(Date.now() - this.#startedAt).padStart(5)} ms ${what}`);
    if (lines.length > 30) lines.shift();
    this.#traces.set(sessionId, lines);
  }

  /** Records a violation on a session, with its trace (with `tracing`). */
  violation(sessionId: string, what: string): void {
    const trace = this.#traces.get(sessionId);
    this.violations.push(trace ? `${what}; last events:\n      ${trace.join('\n      ')}` : what);
  }

  /** Records that a request on `sessionId` starts. */
  start(sessionId: string, replica: number): Operation {
    const operation: Operation = { sessionId, replica, startedAt: Date.now(), overlapped: false };
    this.note(sessionId, `r${replica} request starts`);
    const running = this.#running(sessionId);
    for (const other of running) other.overlapped = true;
    operation.overlapped = running.size > 0;
    running.add(operation);
    this.#activity.set(sessionId, (this.#activity.get(sessionId) ?? 0) + 1);
    return operation;
  }

  /** Records that a request settled (with `error` when it failed); a 409 busy on a quiet session is a violation. */
  end(operation: Operation, error?: unknown): void {
    const { sessionId, startedAt } = operation;
    const running = this.#running(sessionId);
    running.delete(operation);
    const now = Date.now();
    this.note(
      sessionId,
      `r${operation.replica} request ends${error ? ` with ${(error as Error).name}` : ''}`,
    );
    // No answer in time (a stall longer than the command timeout): what it sent may still run, like a lost reply.
    if (StoreUnavailableError.isInstance(error)) this.fault(sessionId);
    if (
      SessionBusyError.isInstance(error) &&
      !/taken over/.test((error as Error).message) &&
      !operation.overlapped &&
      !this.#faulted(sessionId, startedAt, now)
    ) {
      this.violation(
        sessionId,
        `a request on session ${sessionId} was refused as busy after ${now - startedAt} ms, with no other request on the session and no fault near it`,
      );
    }
    if (running.size === 0) this.#probe(sessionId);
  }

  /**
   * Records a fault (a lost command or reply, a killed replica, a request that timed out) that may leave the
   * session's lease behind.
   */
  fault(sessionId: string): void {
    const now = Date.now();
    const faults = this.#faults.get(sessionId) ?? [];
    faults.push([now, now + this.timing.faultLingerMs]);
    this.#faults.set(sessionId, faults);
  }

  /** The sessions with a request in flight on `replica`. */
  sessionsOn(replica: number): string[] {
    return [...this.#inFlight]
      .filter(([, ops]) => [...ops].some((op) => op.replica === replica))
      .map(([id]) => id);
  }

  /** Records a message sent; returns its entry, for its result. */
  send(sessionId: string, text: string): SentMessage {
    const entry: SentMessage = { text };
    const list = this.sent.get(sessionId) ?? [];
    list.push(entry);
    this.sent.set(sessionId, list);
    return entry;
  }

  /** The asks of an approval. */
  approval(approvalId: string): ApprovalAsks {
    let asks = this.approvals.get(approvalId);
    if (!asks) {
      asks = { asked: new Set(), acknowledged: [] };
      this.approvals.set(approvalId, asks);
    }
    return asks;
  }

  /** Waits for the lease probes still running, then checks that no quiet session holds a lease. */
  async finish(sessionIds: readonly string[]): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.timing.quietProbeMs));
    await Promise.all(this.#probes);
    await Promise.all(sessionIds.map((sessionId) => this.#checkLease(sessionId, Date.now())));
  }

  #running(sessionId: string): Set<Operation> {
    let running = this.#inFlight.get(sessionId);
    if (!running) {
      running = new Set();
      this.#inFlight.set(sessionId, running);
    }
    return running;
  }

  #faulted(sessionId: string, from: number, to: number): boolean {
    return (this.#faults.get(sessionId) ?? []).some(([start, end]) => start <= to && end >= from);
  }

  /** Once the session has been quiet for `quietProbeMs`, no lease may be left on it. */
  #probe(sessionId: string): void {
    const activity = this.#activity.get(sessionId);
    const quietSince = Date.now();
    const probe = (async () => {
      await new Promise((resolve) => setTimeout(resolve, this.timing.quietProbeMs));
      if (this.#activity.get(sessionId) !== activity) return;
      await this.#checkLease(sessionId, quietSince, activity);
    })();
    this.#probes.add(probe);
    void probe.finally(() => this.#probes.delete(probe));
  }

  async #checkLease(sessionId: string, quietSince: number, activity = this.#activity.get(sessionId)) {
    if (this.#leaked.has(sessionId)) return;
    const key = sessionKeys(this.prefix, sessionId).lease;
    const ttl = await this.admin.pttl(key);
    const now = Date.now();
    // A request that started meanwhile may hold it; a fault may have left it (it expires by itself).
    if (ttl < 0 || this.#activity.get(sessionId) !== activity || this.#faulted(sessionId, quietSince, now))
      return;
    this.#leaked.add(sessionId);
    this.violation(
      sessionId,
      `session ${sessionId} still had a lease (expiring in ${ttl} ms) ${now - quietSince} ms after its last request settled, with no fault near it`,
    );
  }
}
