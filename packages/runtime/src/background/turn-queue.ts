/**
 * What a background turn is while it waits, and the contract of the queue
 * that carries it to a replica: in this process ({@link InMemoryTurnQueue})
 * or through BullMQ (`@switchboard/runtime/bullmq`), shared by every
 * replica.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { ConcurrencyPolicy } from '../engine/turn-types.js';

/** A turn asked for with `background: true`: what its job carries until a replica runs it. */
export interface QueuedTurn {
  /** Chosen when it is queued: the job's id, and the turn's once it opens. */
  turnId: string;
  sessionId: string;
  message: string;
  tenantId?: string;
  userId?: string;
  /** The name of the key that queued it (traced; never the key). */
  keyName?: string;
  metadata?: Record<string, unknown>;
  concurrency?: ConcurrencyPolicy;
  /** The request's own `Idempotency-Key`, if it sent one. */
  idempotencyKey?: string;
  /** Where the result is POSTed when the turn ends or pauses for approval. */
  callbackUrl?: string;
  /** Where the request came in (`/v1/chat`, a schedule…): the turn's trace is named after it. */
  entryPoint: string;
  /** When it was queued (ms since the epoch). */
  queuedAt: number;
  /** The schedule whose tick this turn is, if any. */
  scheduleId?: string;
}

/** When a schedule fires: every so many milliseconds, or on a cron pattern in a time zone (default UTC). */
export type ScheduleTiming = { every: number } | { cron: string; timezone?: string };

/** What each tick of a schedule runs: a turn without its own ids yet (each tick gets new ones). */
export type ScheduledTurn = Omit<QueuedTurn, 'turnId' | 'queuedAt' | 'sessionId' | 'scheduleId'> & {
  scheduleId: string;
  /** The session every run continues; without it, each run opens a new session. */
  sessionId?: string;
};

/** The turn one tick of a schedule runs: its ids derived from the schedule and the tick, the same on every replica. */
export function tickTurn(template: ScheduledTurn, tickAt: number): QueuedTurn {
  const { scheduleId, sessionId, ...rest } = template;
  const tick = `${scheduleId}:${tickAt}`;
  return {
    ...rest,
    scheduleId,
    turnId: `turn_${digest(tick)}`,
    sessionId: sessionId ?? `ses_${digest(`session:${tick}`)}`,
    queuedAt: tickAt,
  };
}

function digest(text: string): string {
  return createHash('sha256').update(`switchboard:schedule:${text}`).digest('hex').slice(0, 32);
}

/** What became of a job: `done` (whatever the turn's outcome), or `later`: run it again after `delayMs`. */
export type QueueOutcome = { kind: 'done' } | { kind: 'later'; delayMs: number };

/** Runs one job; never rejects for the turn's own failures (they are the turn's outcome). */
export type QueueWork = (job: QueuedTurn) => Promise<QueueOutcome>;

/**
 * Carries background turns to whichever replica runs them. A job is run at
 * least once: a replica that dies holding one gives it back (BullMQ's
 * stalled-job check), so the work must be safe to run twice (a background
 * turn is: it opens with an idempotency key).
 */
export interface TurnQueue {
  /** True when queued jobs outlive this process (BullMQ); false in memory. */
  readonly durable: boolean;
  /**
   * Queues a job. A job whose `turnId` is already queued is not queued
   * twice. Rejects with `QueueFullError` past the queue's bound.
   */
  add(job: QueuedTurn): Promise<void>;
  /** Forgets a job that no replica has taken yet (best effort: a taken job runs and sees it was cancelled). */
  remove(turnId: string): Promise<void>;
  /** Starts taking jobs, at most the queue's `concurrency` at once on this replica. */
  start(work: QueueWork): void;
  /**
   * Stops taking jobs (a drain): resolves once the jobs this replica took
   * have finished. Jobs not taken stay queued for the other replicas (or
   * this one's next start).
   */
  stop(): Promise<void>;
  /** Stops, then releases the queue's connections. */
  close(): Promise<void>;
  /**
   * Runs `template` on a schedule, once per tick whichever replicas run
   * (replacing a schedule of the same id): each tick is a job like any
   * other, with the ids {@link tickTurn} gives it.
   */
  schedule(id: string, timing: ScheduleTiming, template: ScheduledTurn): Promise<void>;
  /** Stops a schedule (its ticks already queued still run). */
  unschedule(id: string): Promise<void>;
}
