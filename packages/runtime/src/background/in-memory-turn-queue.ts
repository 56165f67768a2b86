import { CronExpressionParser } from 'cron-parser';
import { QueueFullError } from './background-errors.js';
import {
  type QueuedTurn,
  type QueueOutcome,
  type QueueWork,
  type ScheduledTurn,
  type ScheduleTiming,
  type TurnQueue,
  tickTurn,
} from './turn-queue.js';

/** Options of {@link InMemoryTurnQueue}. */
export interface InMemoryTurnQueueOptions {
  /** Turns run at once (default 4). */
  concurrency?: number;
  /** Turns waiting at most, past which `add` rejects with `QueueFullError` (default 10 000). */
  maxQueued?: number;
}

/**
 * The embedded default: background turns queued in this process, run at
 * most `concurrency` at once, in the order they came. They do not outlive
 * the process (a restart loses what was queued): use BullMQ
 * (`@switchboard/runtime/bullmq`) when that matters or with several replicas.
 */
export class InMemoryTurnQueue implements TurnQueue {
  readonly durable = false;
  readonly #concurrency: number;
  readonly #maxQueued: number;
  /** Waiting jobs in order; `#head` is the next one (a FIFO without shifting the array). */
  #waiting: (QueuedTurn | undefined)[] = [];
  #head = 0;
  readonly #known = new Set<string>();
  readonly #delayed = new Map<string, NodeJS.Timeout>();
  readonly #running = new Set<Promise<void>>();
  readonly #schedules = new Map<string, NodeJS.Timeout>();
  #work: QueueWork | undefined;
  #stopped = false;

  constructor({ concurrency = 4, maxQueued = 10_000 }: InMemoryTurnQueueOptions = {}) {
    this.#concurrency = concurrency;
    this.#maxQueued = maxQueued;
  }

  async add(job: QueuedTurn): Promise<void> {
    if (this.#known.has(job.turnId)) return;
    if (this.#known.size >= this.#maxQueued) throw new QueueFullError(this.#maxQueued);
    this.#known.add(job.turnId);
    this.#waiting.push(job);
    this.#pump();
  }

  async remove(turnId: string): Promise<void> {
    if (!this.#known.delete(turnId)) return;
    const timer = this.#delayed.get(turnId);
    if (timer) {
      clearTimeout(timer);
      this.#delayed.delete(turnId);
      return;
    }
    for (let index = this.#head; index < this.#waiting.length; index += 1) {
      if (this.#waiting[index]?.turnId === turnId) this.#waiting[index] = undefined;
    }
  }

  start(work: QueueWork): void {
    this.#work = work;
    this.#stopped = false;
    this.#pump();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.allSettled([...this.#running]);
  }

  async close(): Promise<void> {
    for (const timer of this.#schedules.values()) clearTimeout(timer);
    this.#schedules.clear();
    await this.stop();
    for (const timer of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
  }

  async schedule(id: string, timing: ScheduleTiming, template: ScheduledTurn): Promise<void> {
    await this.unschedule(id);
    const next = (after: number) =>
      'every' in timing
        ? after + timing.every
        : CronExpressionParser.parse(timing.cron, { currentDate: after, tz: timing.timezone ?? 'UTC' })
            .next()
            .getTime();
    const arm = (at: number) => {
      const timer = setTimeout(
        () => {
          if (this.#schedules.get(id) !== timer) return;
          // A tick past the queue's bound is skipped, as a schedule's next tick comes anyway.
          this.add(tickTurn(template, at)).catch(() => {});
          arm(next(Math.max(at, Date.now())));
        },
        Math.max(0, at - Date.now()),
      );
      timer.unref();
      this.#schedules.set(id, timer);
    };
    arm(next(Date.now()));
  }

  async unschedule(id: string): Promise<void> {
    clearTimeout(this.#schedules.get(id));
    this.#schedules.delete(id);
  }

  /** Starts waiting jobs while slots are free. */
  #pump(): void {
    const work = this.#work;
    if (!work || this.#stopped) return;
    while (this.#running.size < this.#concurrency && this.#head < this.#waiting.length) {
      const job = this.#waiting[this.#head];
      this.#waiting[this.#head] = undefined;
      this.#head += 1;
      if (job) this.#run(work, job);
    }
    // Compact once the consumed prefix dominates, so the array does not grow with every job ever queued.
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
  }

  #run(work: QueueWork, job: QueuedTurn): void {
    const running = work(job).then(
      (outcome) => this.#settle(job, outcome),
      () => this.#settle(job, { kind: 'done' }),
    );
    this.#running.add(running);
    void running.finally(() => {
      this.#running.delete(running);
      this.#pump();
    });
  }

  #settle(job: QueuedTurn, outcome: QueueOutcome): void {
    if (outcome.kind === 'done' || !this.#known.has(job.turnId)) {
      this.#known.delete(job.turnId);
      return;
    }
    const timer = setTimeout(() => {
      this.#delayed.delete(job.turnId);
      this.#waiting.push(job);
      this.#pump();
    }, outcome.delayMs);
    timer.unref();
    this.#delayed.set(job.turnId, timer);
  }
}
