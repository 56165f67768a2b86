/**
 * What is known of a background turn before (and besides) its turn record:
 * queued, taken by a replica, cancelled while queued, or failed before it
 * could open. Kept in the app's memory store (Redis across replicas), per
 * tenant, for the retention the app sets; each tenant's latest turns are
 * listed for the console.
 *
 * @module
 */
import type { MemoryStore } from '../stores/memory-store.js';

/** Where a background turn stands before its turn record says more. */
export type BackgroundState = 'queued' | 'started' | 'cancelled' | 'failed';

/** A background turn's own record (see the module). */
export interface BackgroundRecord {
  turnId: string;
  sessionId: string;
  /** The user who queued it (a user-bound key sees its own only). */
  userId?: string;
  state: BackgroundState;
  /** When it was queued (ms since the epoch). */
  queuedAt: number;
  /** Why it failed before it opened (a busy session under `reject`, an approval pending…): the public error. */
  error?: { code: string; message: string };
  /** Where the result is POSTed. */
  callbackUrl?: string;
}

/** How many background turns a tenant's list holds, newest first. */
export const MAX_LISTED_BACKGROUND_TURNS = 200;

const namespaceOf = (tenantId: string | undefined) => `${tenantId ? `tenant:${tenantId}:` : ''}background`;
const LIST_KEY = '#list';

/** The background records of every tenant, in the memory store. */
export class BackgroundRecords {
  readonly #memory: MemoryStore;
  readonly #ttlSeconds: number;

  constructor(memory: MemoryStore, ttlSeconds: number) {
    this.#memory = memory;
    this.#ttlSeconds = ttlSeconds;
  }

  /** Stores a new record and lists it first (in parallel: two writes, one round trip's wait). */
  async create(tenantId: string | undefined, record: BackgroundRecord): Promise<void> {
    const namespace = namespaceOf(tenantId);
    const options = { ttlSeconds: this.#ttlSeconds };
    const list = (ids: string[]) => [
      record.turnId,
      ...ids.filter((id) => id !== record.turnId).slice(0, MAX_LISTED_BACKGROUND_TURNS - 1),
    ];
    await Promise.all([
      this.#memory.set(namespace, record.turnId, record, options),
      this.#memory.update(namespace, LIST_KEY, list, [], options),
    ]);
  }

  async get(tenantId: string | undefined, turnId: string): Promise<BackgroundRecord | undefined> {
    return (await this.#memory.get(namespaceOf(tenantId), turnId)) as BackgroundRecord | undefined;
  }

  /**
   * Changes a record atomically: `change` gets the current one and returns
   * the next (or the same to leave it). Resolves to what is stored after.
   */
  async change(
    tenantId: string | undefined,
    turnId: string,
    change: (record: BackgroundRecord) => BackgroundRecord,
  ): Promise<BackgroundRecord | undefined> {
    // An unknown id writes nothing (an update of an absent key would store its default).
    if (!(await this.get(tenantId, turnId))) return undefined;
    const next = await this.#memory.update<BackgroundRecord | null>(
      namespaceOf(tenantId),
      turnId,
      (record) => (record ? change(record) : null),
      null,
      { ttlSeconds: this.#ttlSeconds },
    );
    return next ?? undefined;
  }

  /** The tenant's latest background turns, newest first (at most {@link MAX_LISTED_BACKGROUND_TURNS}). */
  async list(tenantId: string | undefined): Promise<BackgroundRecord[]> {
    const namespace = namespaceOf(tenantId);
    const ids = ((await this.#memory.get(namespace, LIST_KEY)) as string[] | undefined) ?? [];
    const records = await Promise.all(ids.map((id) => this.#memory.get(namespace, id)));
    return records.filter((record): record is BackgroundRecord => record !== undefined && record !== null);
  }
}
