import {
  ApprovalPendingError,
  createId,
  SessionBusyError,
  StoreUnavailableError,
  SwitchboardError,
  ValidationError,
} from '@switchboard/core';
import type { CallbackSender } from '../callbacks/callback-sender.js';
import type { ConcurrencyPolicy, TurnRequest, TurnResult } from '../engine/turn-types.js';
import type { Logger } from '../logging/logger.js';
import type { MemoryStore } from '../stores/memory-store.js';
import type { SessionStore } from '../stores/session-store.js';
import type { BackgroundMetrics } from './background-metrics.js';
import { type BackgroundRecord, BackgroundRecords } from './background-records.js';
import { copyDefined } from './copy-defined.js';
import { type OwnerOptions, ownerOf } from './owner-options.js';
import type { QueuedTurn, QueueOutcome, TurnQueue } from './turn-queue.js';
import {
  type QueuedTurnReceipt,
  requestOf,
  type TurnStatusView,
  turnIdForKey,
  viewOfRecord,
  withQueuedAt,
} from './turn-views.js';

export type { OwnerOptions } from './owner-options.js';
export type { QueuedTurnReceipt, TurnProgress, TurnStatusView } from './turn-views.js';
export { turnIdForKey } from './turn-views.js';

/** Sends a background turn's result to its `callbackUrl`: a {@link CallbackSender}, or your own with its shape. */
export type CallbackDelivery = Pick<CallbackSender, 'validateUrl' | 'send' | 'close'>;

/** What {@link BackgroundTurns} runs on. */
export interface BackgroundParts {
  queue: TurnQueue;
  memory: MemoryStore;
  /** Runs a turn (the app's own, tracked for its close). */
  run(request: TurnRequest): Promise<TurnResult>;
  /** A stored turn's result, undefined when the session holds no such turn. */
  readTurn(sessions: SessionStore, sessionId: string, turnId: string): Promise<TurnResult | undefined>;
  sessionsOf(tenantId: string | undefined, userId?: string): SessionStore;
  /** What a client learns of an error (the routes' policy). */
  publicError(error: SwitchboardError): { code: string; message: string };
  logger: Logger;
  concurrency: ConcurrencyPolicy;
  callbacks?: CallbackDelivery;
  /** Counts what happens to background turns and callbacks (none without a meter provider). */
  metrics?: BackgroundMetrics;
}

/** Options of background turns (the app's `background` option). */
export interface BackgroundOptions {
  /** Carries the turns to a replica (default: an `InMemoryTurnQueue`; BullMQ from `@switchboard/runtime/bullmq`). */
  queue?: TurnQueue;
  /** How long a background turn's own record (queued, cancelled, failed before it opened) is kept (default 86 400 s). */
  retentionSeconds?: number;
  /** How long a queued turn waits for its busy session (retried every `busyRetryMs`) before it fails `session_busy` (default 600 000 ms). */
  maxSessionWaitMs?: number;
  /** How often a queued turn retries a busy session (default 1 000 ms). */
  busyRetryMs?: number;
}

/** Runs and reports background turns (see the module). */
export class BackgroundTurns {
  readonly #parts: BackgroundParts;
  readonly #records: BackgroundRecords;
  readonly #maxSessionWaitMs: number;
  readonly #busyRetryMs: number;

  constructor(
    parts: BackgroundParts,
    { retentionSeconds = 86_400, maxSessionWaitMs = 600_000, busyRetryMs = 1_000 }: BackgroundOptions = {},
  ) {
    this.#parts = parts;
    this.#records = new BackgroundRecords(parts.memory, retentionSeconds);
    this.#maxSessionWaitMs = maxSessionWaitMs;
    this.#busyRetryMs = busyRetryMs;
  }

  /** True when queued turns outlive this process (a BullMQ queue). */
  get durable(): boolean {
    return this.#parts.queue.durable;
  }

  /** True when the app sends callbacks (`background.callbacks`). */
  get callsBack(): boolean {
    return this.#parts.callbacks !== undefined;
  }

  /** Starts taking jobs. */
  start(): void {
    this.#parts.queue.start((job) => this.#work(job));
  }

  /** Stops taking jobs and waits for the ones this replica runs (a drain). */
  stop(): Promise<void> {
    return this.#parts.queue.stop();
  }

  /** Closes the queue, then lets callbacks under way finish within `graceMs`. */
  async close(graceMs = 10_000): Promise<void> {
    await this.#parts.queue.close();
    await this.#parts.callbacks?.close({ graceMs });
  }

  /**
   * Calls back for a turn that went on after its job (an approval resolved,
   * a cancel): its result goes to the `callbackUrl` it was queued with, if
   * any. Not waited for by the caller; errors are logged.
   */
  resumed(result: TurnResult, options?: OwnerOptions): Promise<void>;
  /** @deprecated Pass the tenant as an option: `resumed(result, { tenantId })`; this form is removed in the next minor. */
  resumed(result: TurnResult, tenantId: string | undefined): Promise<void>;
  async resumed(result: TurnResult, options?: OwnerOptions | string): Promise<void> {
    if (!this.#parts.callbacks) return;
    const { tenantId } = ownerOf(options, undefined);
    const record = await this.#records.get(tenantId, result.turnId);
    if (record?.callbackUrl && record.sessionId === result.sessionId)
      await this.#callBack(record.callbackUrl, result);
  }

  /** Throws a `ValidationError` unless callbacks may go to `url`. */
  checkCallback(url: string): void {
    const { callbacks } = this.#parts;
    if (!callbacks) {
      throw new ValidationError({
        message: 'callbackUrl: this server sends no callbacks (its app sets no background.callbacks)',
      });
    }
    callbacks.validateUrl(url);
  }

  /**
   * Queues a turn. A request with an `Idempotency-Key` gets the same turn
   * id every time, so a retried request is queued once. With the
   * `reject` policy a busy session refuses it at once (409).
   */
  async submit(request: TurnRequest, callbackUrl?: string): Promise<QueuedTurnReceipt> {
    const { sessionId, tenantId } = request;
    if (callbackUrl !== undefined) this.checkCallback(callbackUrl);
    const turnId =
      request.turnId ??
      (request.idempotencyKey === undefined
        ? createId('turn')
        : turnIdForKey(request.idempotencyKey, tenantId));
    const receipt: QueuedTurnReceipt = { sessionId, turnId, status: 'queued' };
    if (request.idempotencyKey !== undefined) {
      const known = await this.#records.get(tenantId, turnId);
      // A retry of a request that was queued answers the same; one that could not be queued is queued now.
      if (
        known &&
        !(known.state === 'failed' && known.error?.code !== undefined && REQUEUED.has(known.error.code))
      )
        return receipt;
    }
    if ((request.concurrency ?? this.#parts.concurrency) === 'reject') {
      const last = await this.#parts.sessionsOf(tenantId).lastTurn(sessionId);
      if (last?.status === 'running' || last?.status === 'awaiting_approval')
        throw new SessionBusyError({ sessionId });
    }
    const job: QueuedTurn = {
      turnId,
      sessionId,
      message: request.message,
      entryPoint: request.entryPoint ?? 'background',
      queuedAt: Date.now(),
    };
    copyDefined(job, request, ['tenantId', 'userId', 'keyName', 'metadata', 'concurrency', 'idempotencyKey']);
    if (callbackUrl !== undefined) job.callbackUrl = callbackUrl;
    const record: BackgroundRecord = { turnId, sessionId, state: 'queued', queuedAt: job.queuedAt };
    if (request.userId !== undefined) record.userId = request.userId;
    if (callbackUrl !== undefined) record.callbackUrl = callbackUrl;
    await this.#records.create(tenantId, record);
    try {
      await this.#parts.queue.add(job);
    } catch (error) {
      await this.#fail(job, error).catch(() => {});
      throw error;
    }
    this.#parts.metrics?.turn('queued');
    return receipt;
  }

  /**
   * Where a turn stands: its stored record's result once it opened, else
   * its background record (queued, cancelled, failed before it opened).
   * Undefined when neither exists for this tenant (and user).
   *
   * @example
   * ```ts
   * const turn = await app.background?.status(sessionId, turnId, { tenantId: 'acme' });
   * ```
   */
  status(sessionId: string, turnId: string, options?: OwnerOptions): Promise<TurnStatusView | undefined>;
  /**
   * @deprecated Pass the tenant and user as options: `status(sessionId, turnId, { tenantId, userId })`;
   * this form is removed in the next minor.
   */
  status(
    sessionId: string,
    turnId: string,
    tenantId: string | undefined,
    userId?: string,
  ): Promise<TurnStatusView | undefined>;
  async status(
    sessionId: string,
    turnId: string,
    options?: OwnerOptions | string,
    positionalUserId?: string,
  ): Promise<TurnStatusView | undefined> {
    const { tenantId, userId } = ownerOf(options, positionalUserId);
    const sessions = this.#parts.sessionsOf(tenantId, userId);
    const [stored, record] = await Promise.all([
      this.#parts.readTurn(sessions, sessionId, turnId),
      this.#records.get(tenantId, turnId),
    ]);
    if (stored) return withQueuedAt(stored, record);
    if (!record || record.sessionId !== sessionId || (userId !== undefined && record.userId !== userId))
      return undefined;
    return viewOfRecord(record);
  }

  /** The tenant's latest background turns (a user's own with `userId`), newest first, as {@link status} reports each. */
  list(options?: OwnerOptions): Promise<TurnStatusView[]>;
  /** @deprecated Pass the tenant and user as options: `list({ tenantId, userId })`; this form is removed in the next minor. */
  list(tenantId: string | undefined, userId?: string): Promise<TurnStatusView[]>;
  async list(options?: OwnerOptions | string, positionalUserId?: string): Promise<TurnStatusView[]> {
    const { tenantId, userId } = ownerOf(options, positionalUserId);
    const records = (await this.#records.list(tenantId)).filter(
      (record) => userId === undefined || record.userId === userId,
    );
    const sessions = this.#parts.sessionsOf(tenantId);
    return Promise.all(
      records.map(async (record) => {
        if (record.state !== 'started') return viewOfRecord(record);
        const last = await sessions.lastTurn(record.sessionId);
        // Still under way: its status is all there is to show (no reply yet).
        if (
          last?.turnId === record.turnId &&
          (last.status === 'running' || last.status === 'awaiting_approval')
        )
          return { ...viewOfRecord(record), status: last.status };
        const stored = await this.#parts.readTurn(sessions, record.sessionId, record.turnId);
        return stored ? withQueuedAt(stored, record) : viewOfRecord(record);
      }),
    );
  }

  /**
   * Cancels a turn still queued: it will not run, and reads `interrupted`.
   * Undefined when it is not queued (it runs or ran: cancel it as any turn).
   */
  cancelQueued(
    sessionId: string,
    turnId: string,
    options?: OwnerOptions,
  ): Promise<TurnStatusView | undefined>;
  /**
   * @deprecated Pass the tenant and user as options: `cancelQueued(sessionId, turnId, { tenantId, userId })`;
   * this form is removed in the next minor.
   */
  cancelQueued(
    sessionId: string,
    turnId: string,
    tenantId: string | undefined,
    userId?: string,
  ): Promise<TurnStatusView | undefined>;
  async cancelQueued(
    sessionId: string,
    turnId: string,
    options?: OwnerOptions | string,
    positionalUserId?: string,
  ): Promise<TurnStatusView | undefined> {
    const { tenantId, userId } = ownerOf(options, positionalUserId);
    const mine = (record: BackgroundRecord) =>
      record.sessionId === sessionId && (userId === undefined || record.userId === userId);
    const record = await this.#records.change(tenantId, turnId, (current) =>
      current.state === 'queued' && mine(current) ? { ...current, state: 'cancelled' } : current,
    );
    if (record?.state !== 'cancelled' || !mine(record)) return undefined;
    this.#parts.metrics?.turn('cancelled');
    await this.#parts.queue.remove(turnId).catch(() => {});
    return viewOfRecord(record);
  }

  /** Runs one job: claims it, runs its turn (or finds the turn an earlier run of the job left), calls back. */
  async #work(job: QueuedTurn): Promise<QueueOutcome> {
    // A schedule's tick was queued by no request: its record is made by the run that takes it.
    if (job.scheduleId !== undefined && !(await this.#records.get(job.tenantId, job.turnId))) {
      const record: BackgroundRecord = {
        turnId: job.turnId,
        sessionId: job.sessionId,
        state: 'queued',
        queuedAt: job.queuedAt,
      };
      copyDefined(record, job, ['userId', 'callbackUrl']);
      await this.#records.create(job.tenantId, record);
    }
    // A session busy with another turn is waited for while the turn stays queued (and cancellable).
    const busy = await this.#sessionBusy(job);
    if (busy) return busy;
    const claimed = await this.#records.change(job.tenantId, job.turnId, (record) =>
      record.state === 'queued' || record.state === 'started' ? { ...record, state: 'started' } : record,
    );
    // Cancelled while queued, failed, or expired: nothing to run.
    if (claimed?.state !== 'started') return { kind: 'done' };
    this.#parts.metrics?.turn('started');
    let result: TurnResult;
    try {
      result = await this.#parts.run(requestOf(job));
    } catch (error) {
      if (this.#shouldWait(job, error)) {
        await this.#records.change(job.tenantId, job.turnId, (record) => ({ ...record, state: 'queued' }));
        this.#parts.metrics?.turn('deferred');
        return { kind: 'later', delayMs: this.#busyRetryMs };
      }
      const failed = await this.#fail(job, error);
      if (job.callbackUrl && failed) await this.#callBack(job.callbackUrl, viewOfRecord(failed));
      return { kind: 'done' };
    }
    if (job.callbackUrl) await this.#callBack(job.callbackUrl, result);
    return { kind: 'done' };
  }

  /**
   * Whether the job's session runs another turn now: under `wait`, the job
   * comes back later, still queued (its turn opens only once the session is
   * free; the engine still waits for a session that became busy in
   * between); under `reject` it fails `session_busy`. `interrupt` goes on
   * (it stops the running turn), and a paused turn is left to the engine
   * (its pending approvals decide). Undefined to run now.
   */
  async #sessionBusy(job: QueuedTurn): Promise<QueueOutcome | undefined> {
    const policy = job.concurrency ?? this.#parts.concurrency;
    if (policy === 'interrupt') return undefined;
    const last = await this.#parts.sessionsOf(job.tenantId).lastTurn(job.sessionId);
    if (last?.status !== 'running' || last.turnId === job.turnId) return undefined;
    const busy = new SessionBusyError({ sessionId: job.sessionId });
    if (this.#shouldWait(job, busy)) {
      this.#parts.metrics?.turn('deferred');
      return { kind: 'later', delayMs: this.#busyRetryMs };
    }
    const failed = await this.#fail(job, busy);
    if (job.callbackUrl && failed) await this.#callBack(job.callbackUrl, viewOfRecord(failed));
    return { kind: 'done' };
  }

  /** A busy session (under `wait`) or a store outage is waited out, up to `maxSessionWaitMs` after queueing. */
  #shouldWait(job: QueuedTurn, error: unknown): boolean {
    if (Date.now() - job.queuedAt > this.#maxSessionWaitMs) return false;
    if (StoreUnavailableError.isInstance(error)) return true;
    return SessionBusyError.isInstance(error) && (job.concurrency ?? this.#parts.concurrency) !== 'reject';
  }

  /** Records why a turn failed before it opened (what a client may read of it). */
  async #fail(job: QueuedTurn, error: unknown): Promise<BackgroundRecord | undefined> {
    const known = isSwitchboardError(error) ? error : undefined;
    if (!known || (!ApprovalPendingError.isInstance(error) && known.kind !== 'user'))
      this.#parts.logger.error({ err: error, turnId: job.turnId }, 'background turn failed before it opened');
    const publicError = known
      ? this.#parts.publicError(known)
      : { code: 'internal_error', message: 'Internal server error' };
    this.#parts.metrics?.turn('refused');
    return this.#records.change(job.tenantId, job.turnId, (record) => ({
      ...record,
      state: 'failed',
      error: publicError,
    }));
  }

  async #callBack(url: string, result: TurnResult | TurnStatusView): Promise<void> {
    const { callbacks, logger } = this.#parts;
    if (!callbacks) return;
    const event = `turn.${result.status}`;
    // The same state of the same turn has the same id, however often its job ran: receivers deduplicate on it.
    const deliveryId = `${result.turnId}:${result.status}:${result.steps?.length ?? 0}`;
    try {
      const sent = await callbacks.send({ url, deliveryId, event, body: result });
      this.#parts.metrics?.callback(sent.delivered ? 'delivered' : 'failed');
      if (!sent.delivered)
        logger.warn(
          { turnId: result.turnId, outcome: sent.outcome, attempts: sent.attempts },
          'callback not delivered',
        );
    } catch (error) {
      // Refused at once (its queue full, its URL no longer allowed): the turn's result stays readable.
      this.#parts.metrics?.callback('refused');
      logger.warn({ err: error, turnId: result.turnId }, 'callback not sent');
    }
  }
}

/** Why a turn could not be queued that a retry with the same `Idempotency-Key` may overcome. */
const REQUEUED = new Set(['store_unavailable', 'queue_full']);

function isSwitchboardError(error: unknown): error is SwitchboardError {
  return SwitchboardError.isInstance(error);
}
