import { setTimeout as delay } from 'node:timers/promises';
import { StoreUnavailableError } from '@switchboard/core';
import { DelayedError, type Job, Queue, Worker } from 'bullmq';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { QueueFullError } from './background-errors.js';
import {
  type QueuedTurn,
  type QueueWork,
  type ScheduledTurn,
  type ScheduleTiming,
  type TurnQueue,
  tickTurn,
} from './turn-queue.js';

/** Options of {@link bullmqTurnQueue}. */
export interface BullmqTurnQueueOptions {
  /**
   * Where Redis is: a URL, ioredis options, or an ioredis client or
   * `Cluster` (the queue makes connections of its own from it, with the
   * settings BullMQ needs, so closing the queue leaves yours open).
   */
  connection: string | RedisOptions | Redis | Cluster;
  /**
   * BullMQ's key prefix (default `switchboard:bull`). On a Redis Cluster,
   * wrap it in braces (`{switchboard}`) so a queue's keys share a slot.
   */
  prefix?: string;
  /** The queue's name (default `turns`): apps sharing a Redis but not their turns use different names. */
  name?: string;
  /** Background turns this replica runs at once (default 4). */
  concurrency?: number;
  /**
   * How long a replica's hold on a job lasts without renewal (default
   * 30 000 ms; renewed every half of it while the turn runs). A replica that
   * dies gives its jobs back once it has lapsed and a stalled-job check ran:
   * at most `lockDurationMs + stalledIntervalMs` later.
   */
  lockDurationMs?: number;
  /** How often live replicas look for jobs whose holder died (default 15 000 ms). */
  stalledIntervalMs?: number;
  /** How many times a job may be given back before it fails (default 3). */
  maxStalledCount?: number;
  /** Turns waiting at most (waiting and delayed), past which a new one is refused with 503 `queue_full` (default 10 000). */
  maxQueued?: number;
  /** How long finished jobs stay in Redis (default 3 600 s; the turn itself lives in the session store). */
  keepFinishedSeconds?: number;
  /**
   * How long queueing a turn waits for Redis before the request gets 503
   * `store_unavailable` (default 5 000 ms): BullMQ's own connections never
   * give up a command, so an unreachable Redis would otherwise hold it.
   */
  commandTimeoutMs?: number;
}

/**
 * Background turns through BullMQ, on the Redis every replica shares:
 * whichever replica is free takes the next job, and a replica that dies
 * holding one gives it back through BullMQ's stalled-job check, so the turn
 * runs again elsewhere (it opens with an idempotency key, so its effect is
 * stored once, and a turn left running is recovered). Needs `bullmq` (an
 * optional peer dependency). Nothing connects until the app mounts.
 *
 * @example
 * ```ts
 * const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
 * const app = new App({ name: 'desk', agents, ...createRedisStores(url),
 *   background: { queue: bullmqTurnQueue({ connection: url, concurrency: 8 }) } });
 * ```
 */
export function bullmqTurnQueue(options: BullmqTurnQueueOptions): TurnQueue {
  return new BullmqTurnQueue(options);
}

const JOB_NAME = 'turn';
const TICK_NAME = 'tick';

/**
 * `operation`, or a `StoreUnavailableError` once `timeoutMs` passed or when
 * it failed: `not_stored` when nothing can have been written, `unknown` when
 * the write may still land (a retry with the same `Idempotency-Key` queues
 * the same turn, so it is safe).
 */
async function withinTime<T>(
  operation: Promise<T>,
  timeoutMs: number,
  outcome: 'not_stored' | 'unknown',
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StoreUnavailableError({
            message: `Redis did not answer the job queue within ${timeoutMs} ms`,
            outcome,
          }),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([operation, late]);
  } catch (error) {
    if (StoreUnavailableError.isInstance(error)) throw error;
    throw new StoreUnavailableError({ message: 'The job queue failed', cause: error, outcome });
  } finally {
    clearTimeout(timer);
    // The operation may still settle after the timeout: its rejection must not go unhandled.
    operation.catch(() => {});
  }
}

/** When a schedule's tick was due: the end of its job id (`repeat:<scheduler>:<ms>`), the same on every replica. */
function tickTimeOf(job: Job): number {
  const at = Number(job.id?.slice(job.id.lastIndexOf(':') + 1));
  return Number.isSafeInteger(at) ? at : job.timestamp + (job.opts.delay ?? 0);
}

/** What BullMQ's connections need: no command timeout, no giving up, commands resent after a reconnect. */
const BULLMQ_CONNECTION: RedisOptions = {
  maxRetriesPerRequest: null,
  commandTimeout: undefined,
  autoResendUnfulfilledCommands: true,
  enableOfflineQueue: true,
  lazyConnect: false,
};

class BullmqTurnQueue implements TurnQueue {
  readonly durable = true;
  readonly #options: Required<Omit<BullmqTurnQueueOptions, 'connection'>>;
  readonly #connection: string | RedisOptions | Redis | Cluster;
  #queue: Queue<QueuedTurn | ScheduledTurn> | undefined;
  #worker: Worker<QueuedTurn | ScheduledTurn> | undefined;
  readonly #connections: Array<Redis | Cluster> = [];
  #workerConnection: Redis | Cluster | undefined;
  /** The jobs this replica is running (a drain waits for them). */
  readonly #running = new Set<Promise<unknown>>();

  constructor({
    connection,
    prefix = 'switchboard:bull',
    name = 'turns',
    concurrency = 4,
    lockDurationMs = 30_000,
    stalledIntervalMs = 15_000,
    maxStalledCount = 3,
    maxQueued = 10_000,
    keepFinishedSeconds = 3_600,
    commandTimeoutMs = 5_000,
  }: BullmqTurnQueueOptions) {
    this.#connection = connection;
    this.#options = {
      prefix,
      name,
      concurrency,
      lockDurationMs,
      stalledIntervalMs,
      maxStalledCount,
      maxQueued,
      keepFinishedSeconds,
      commandTimeoutMs,
    };
  }

  async add(job: QueuedTurn): Promise<void> {
    const queue = this.#queueOf();
    const { maxQueued, keepFinishedSeconds, commandTimeoutMs } = this.#options;
    // BullMQ's connections never give up a command: a request waits this long at most for Redis.
    const counted = await withinTime(queue.count(), commandTimeoutMs, 'not_stored');
    if (counted >= maxQueued) throw new QueueFullError(maxQueued);
    await withinTime(
      queue.add(JOB_NAME, job, {
        // One job per turn id: a retried request's second add is ignored.
        jobId: job.turnId,
        removeOnComplete: { age: keepFinishedSeconds },
        removeOnFail: { age: keepFinishedSeconds },
      }),
      commandTimeoutMs,
      'unknown',
    );
  }

  async remove(turnId: string): Promise<void> {
    // A job a replica holds is not removed (it runs, and finds its turn cancelled).
    await this.#queueOf().remove(turnId);
  }

  start(work: QueueWork): void {
    if (this.#worker) return;
    const { name, prefix, concurrency, lockDurationMs, stalledIntervalMs, maxStalledCount } = this.#options;
    this.#workerConnection = this.#duplicate();
    this.#worker = new Worker<QueuedTurn | ScheduledTurn>(
      name,
      async (job: Job<QueuedTurn | ScheduledTurn>, token?: string) => {
        // A schedule's tick: BullMQ made one job per tick, whichever replicas run; its ids come from the tick.
        const turn =
          job.name === TICK_NAME
            ? tickTurn(job.data as ScheduledTurn, tickTimeOf(job))
            : (job.data as QueuedTurn);
        const running = work(turn);
        this.#running.add(running);
        let outcome: Awaited<typeof running>;
        try {
          outcome = await running;
        } finally {
          this.#running.delete(running);
        }
        if (outcome.kind === 'later') {
          // Back to waiting without counting an attempt: the session was busy, or the store out.
          await job.moveToDelayed(Date.now() + outcome.delayMs, token);
          throw new DelayedError();
        }
      },
      {
        connection: this.#workerConnection,
        prefix,
        concurrency,
        lockDuration: lockDurationMs,
        stalledInterval: stalledIntervalMs,
        maxStalledCount,
      },
    );
    // A failed Redis call inside the worker is retried by BullMQ; it must not crash the process.
    this.#worker.on('error', () => {});
  }

  async stop(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    // Takes no more jobs and waits for the ones this replica runs; the others stay queued for the rest.
    const graceful = worker.close().then(
      () => true,
      () => true,
    );
    await Promise.allSettled([...this.#running]);
    // With Redis unreachable BullMQ's close waits for it forever (and a forced close then waits on it too):
    // once nothing runs there is nothing to wait for, so the worker's connection is dropped instead.
    const closed = await Promise.race([graceful, delay(this.#options.commandTimeoutMs).then(() => false)]);
    if (!closed) this.#workerConnection?.disconnect();
  }

  async close(): Promise<void> {
    await this.stop();
    await withinTime(
      this.#queue?.close() ?? Promise.resolve(),
      this.#options.commandTimeoutMs,
      'unknown',
    ).catch(() => {});
    for (const connection of this.#connections) connection.disconnect();
  }

  async schedule(id: string, timing: ScheduleTiming, template: ScheduledTurn): Promise<void> {
    const repeat =
      'every' in timing ? { every: timing.every } : { pattern: timing.cron, tz: timing.timezone ?? 'UTC' };
    const { keepFinishedSeconds } = this.#options;
    await this.#queueOf().upsertJobScheduler(id, repeat, {
      name: TICK_NAME,
      data: template,
      opts: { removeOnComplete: { age: keepFinishedSeconds }, removeOnFail: { age: keepFinishedSeconds } },
    });
  }

  async unschedule(id: string): Promise<void> {
    await this.#queueOf().removeJobScheduler(id);
  }

  #queueOf(): Queue<QueuedTurn | ScheduledTurn> {
    this.#queue ??= new Queue<QueuedTurn | ScheduledTurn>(this.#options.name, {
      connection: this.#duplicate(),
      prefix: this.#options.prefix,
      streams: { events: { maxLen: 1_000 } },
    });
    this.#queue.on('error', () => {});
    return this.#queue;
  }

  /**
   * A connection of the queue's own, with the settings BullMQ needs: a
   * worker's commands block, so none may time out or give up (the stores'
   * own client has a command timeout and one retry).
   */
  #duplicate(): Redis | Cluster {
    const source = this.#connection;
    let connection: Redis | Cluster;
    if (source instanceof Cluster) {
      connection = source.duplicate(undefined, {
        redisOptions: { ...source.options.redisOptions, ...BULLMQ_CONNECTION },
      });
    } else if (source instanceof Redis) {
      connection = source.duplicate(BULLMQ_CONNECTION);
    } else {
      connection =
        typeof source === 'string'
          ? new Redis(source, BULLMQ_CONNECTION)
          : new Redis({ ...source, ...BULLMQ_CONNECTION });
    }
    connection.on('error', () => {});
    this.#connections.push(connection);
    return connection;
  }
}
