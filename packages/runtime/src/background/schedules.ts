/**
 * Schedules: a message run as a background turn on a timer (`every`) or a
 * cron pattern in a time zone, once per tick across replicas (BullMQ's job
 * schedulers; timers in process in memory). Each run is an ordinary
 * background turn: traced, streamed, stored, called back. Schedules belong
 * to a tenant (and, with a user-bound key, a user), like sessions, and a
 * tenant holds at most {@link SchedulesOptions.maxPerTenant}.
 *
 * @module
 */
import { createId, ValidationError } from '@switchboard/core';
import { CronExpressionParser } from 'cron-parser';
import type { MemoryStore } from '../stores/memory-store.js';
import { TooManySchedulesError } from './background-errors.js';
import { copyDefined } from './copy-defined.js';
import { type OwnerOptions, ownerOf } from './owner-options.js';
import type { ScheduledTurn, ScheduleTiming, TurnQueue } from './turn-queue.js';

/** What a new schedule runs, when, and for whom. */
export interface ScheduleRequest {
  message: string;
  /** Every so many milliseconds (at least 1 000). Give `every` or `cron`. */
  every?: number;
  /** A cron pattern (five fields, or six with seconds), in `timezone`. */
  cron?: string;
  /** An IANA time zone for `cron` (default `UTC`). */
  timezone?: string;
  /** The session every run continues; without it, each run opens a new session. */
  sessionId?: string;
  tenantId?: string;
  userId?: string;
  keyName?: string;
  metadata?: Record<string, unknown>;
  /** Where each run's result is POSTed (needs the app's `background.callbacks`). */
  callbackUrl?: string;
}

/** A stored schedule, as `GET /v1/schedules` lists it. */
export interface ScheduleView {
  id: string;
  message: string;
  every?: number;
  cron?: string;
  timezone?: string;
  sessionId?: string;
  userId?: string;
  metadata?: Record<string, unknown>;
  callbackUrl?: string;
  /** ISO 8601. */
  createdAt: string;
}

/** Options of {@link Schedules}. */
export interface SchedulesOptions {
  /** Schedules a tenant may hold (default 100); past it, 429 `too_many_schedules`. */
  maxPerTenant?: number;
}

/** The shortest `every`, in milliseconds. */
export const MIN_SCHEDULE_EVERY_MS = 1_000;
const MAX_SCHEDULE_EVERY_MS = 366 * 86_400_000;
const LIST_KEY = '#list';
const namespaceOf = (tenantId: string | undefined) => `${tenantId ? `tenant:${tenantId}:` : ''}schedules`;

/** A tenant's schedules, kept in the memory store; the queue fires their ticks. */
export class Schedules {
  readonly #memory: MemoryStore;
  readonly #queue: TurnQueue;
  readonly #maxPerTenant: number;

  constructor(memory: MemoryStore, queue: TurnQueue, { maxPerTenant = 100 }: SchedulesOptions = {}) {
    this.#memory = memory;
    this.#queue = queue;
    this.#maxPerTenant = maxPerTenant;
  }

  /** Stores a schedule and starts its ticks. */
  async create(request: ScheduleRequest): Promise<ScheduleView> {
    const timing = timingOf(request);
    const namespace = namespaceOf(request.tenantId);
    const id = createId('sch');
    let full = false;
    await this.#memory.update<string[]>(
      namespace,
      LIST_KEY,
      (ids) => {
        full = ids.length >= this.#maxPerTenant;
        return full ? ids : [...ids, id];
      },
      [],
    );
    if (full) throw new TooManySchedulesError(this.#maxPerTenant);
    const view: ScheduleView = { id, message: request.message, createdAt: new Date().toISOString() };
    copyDefined(view, request, [
      'every',
      'cron',
      'timezone',
      'sessionId',
      'userId',
      'metadata',
      'callbackUrl',
    ]);
    const template: ScheduledTurn = { scheduleId: id, message: request.message, entryPoint: 'schedule' };
    copyDefined(template, request, ['sessionId', 'tenantId', 'userId', 'keyName', 'metadata', 'callbackUrl']);
    try {
      await this.#memory.set(namespace, id, view);
      await this.#queue.schedule(queueId(request.tenantId, id), timing, template);
    } catch (error) {
      await this.#forget(request.tenantId, id).catch(() => {});
      throw error;
    }
    return view;
  }

  /** The tenant's schedules (a user's own with `userId`), oldest first. */
  list(options?: OwnerOptions): Promise<ScheduleView[]>;
  /** @deprecated Pass the tenant and user as options: `list({ tenantId, userId })`; this form is removed in the next minor. */
  list(tenantId: string | undefined, userId?: string): Promise<ScheduleView[]>;
  async list(options?: OwnerOptions | string, positionalUserId?: string): Promise<ScheduleView[]> {
    const { tenantId, userId } = ownerOf(options, positionalUserId);
    const namespace = namespaceOf(tenantId);
    const ids = ((await this.#memory.get(namespace, LIST_KEY)) as string[] | undefined) ?? [];
    const views = await Promise.all(ids.map((id) => this.#memory.get(namespace, id)));
    return (views as (ScheduleView | undefined)[]).filter(
      (view): view is ScheduleView => view !== undefined && (userId === undefined || view.userId === userId),
    );
  }

  /** Stops and forgets a schedule; false when the tenant (or user) has none of that id. */
  delete(id: string, options?: OwnerOptions): Promise<boolean>;
  /**
   * @deprecated Pass the tenant and user as options: `delete(id, { tenantId, userId })`; this form is removed
   * in the next minor.
   */
  delete(id: string, tenantId: string | undefined, userId?: string): Promise<boolean>;
  async delete(id: string, options?: OwnerOptions | string, positionalUserId?: string): Promise<boolean> {
    const { tenantId, userId } = ownerOf(options, positionalUserId);
    const view = (await this.#memory.get(namespaceOf(tenantId), id)) as ScheduleView | undefined;
    if (!view || (userId !== undefined && view.userId !== userId)) return false;
    await this.#queue.unschedule(queueId(tenantId, id));
    await this.#forget(tenantId, id);
    return true;
  }

  async #forget(tenantId: string | undefined, id: string): Promise<void> {
    const namespace = namespaceOf(tenantId);
    await this.#memory.delete(namespace, id);
    await this.#memory.update<string[]>(
      namespace,
      LIST_KEY,
      (ids) => ids.filter((known) => known !== id),
      [],
    );
  }
}

/** The queue's id of a schedule: tenants never share one. */
function queueId(tenantId: string | undefined, id: string): string {
  return tenantId ? `${tenantId}:${id}` : id;
}

/** The timing a request asks for, checked: exactly one of `every` and `cron`, a pattern and zone that parse. */
function timingOf({ every, cron, timezone }: ScheduleRequest): ScheduleTiming {
  if ((every === undefined) === (cron === undefined))
    throw new ValidationError({ message: 'A schedule needs exactly one of every and cron' });
  if (every !== undefined) {
    if (timezone !== undefined) throw new ValidationError({ message: 'timezone goes with cron, not every' });
    if (!Number.isInteger(every) || every < MIN_SCHEDULE_EVERY_MS || every > MAX_SCHEDULE_EVERY_MS) {
      throw new ValidationError({
        message: `every must be a whole number of milliseconds from ${MIN_SCHEDULE_EVERY_MS} to ${MAX_SCHEDULE_EVERY_MS}`,
      });
    }
    return { every };
  }
  const zone = timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    throw new ValidationError({ message: `timezone '${zone}' is not an IANA time zone` });
  }
  try {
    CronExpressionParser.parse(cron as string, { tz: zone, strict: false }).next();
  } catch {
    throw new ValidationError({ message: `cron '${cron}' is not a cron pattern (such as '0 9 * * 1-5')` });
  }
  return timezone === undefined ? { cron: cron as string } : { cron: cron as string, timezone };
}
