/**
 * The contract of where configuration items live: in this process
 * (`InMemoryConfigStore`) or in Redis, shared by every replica
 * (`RedisConfigStore`): types, and the two helpers every store shares.
 * The implementations import this file.
 *
 * @module
 */

/**
 * A scope of items: `app` for the app-wide ones (every tenant's defaults),
 * `tenant:<id>` for a tenant's own (see {@link configScope}).
 */
export type ConfigScope = string;

/** The scope of a tenant's items, or the app-wide scope without a tenant. */
export function configScope(tenantId: string | undefined): ConfigScope {
  return tenantId === undefined ? 'app' : `tenant:${tenantId}`;
}

/** One version of one item, as stored. */
export interface ConfigEntry {
  type: string;
  name: string;
  /** The scope's version this change made (versions count every change of the scope). */
  version: number;
  /** The item's value; absent when this version deleted the item. */
  value?: unknown;
  /** True when this version deleted the item. */
  deleted?: true;
  /** When the change was made (ISO 8601). */
  updatedAt: string;
  /** Who made it: the API key's name, or what `app.config` was told. */
  updatedBy?: string;
  comment?: string;
}

/** The entry a change stores, at `version` (without one: the fields a store stamps the version on). */
export function entryOf(change: ConfigChange): Omit<ConfigEntry, 'version'>;
export function entryOf(change: ConfigChange, version: number): ConfigEntry;
export function entryOf(change: ConfigChange, version?: number): Omit<ConfigEntry, 'version'> {
  const entry: Partial<ConfigEntry> = { type: change.type, name: change.name };
  if (version !== undefined) entry.version = version;
  if (change.value === undefined) entry.deleted = true;
  else entry.value = change.value;
  entry.updatedAt = change.updatedAt;
  if (change.updatedBy !== undefined) entry.updatedBy = change.updatedBy;
  if (change.comment !== undefined) entry.comment = change.comment;
  return entry as Omit<ConfigEntry, 'version'>;
}

/** A change to one item: a new value, or its deletion (`value` undefined). */
export interface ConfigChange {
  type: string;
  name: string;
  /** The new value, already validated; undefined to delete the item. */
  value?: unknown;
  /**
   * Compare-and-set: the item's current version must be this one (0: the
   * item must not exist, or be deleted). Undefined: whatever it is.
   */
  expectedVersion?: number;
  updatedBy?: string;
  comment?: string;
  updatedAt: string;
}

/** Why a store refused a change. */
export type ConfigRefusal =
  | { kind: 'conflict'; currentVersion: number }
  | { kind: 'too_many_items'; limit: number }
  | { kind: 'not_found' };

/** What a {@link ConfigStore.write} did: the entry it stored, or why it stored nothing. */
export type ConfigWriteResult = { ok: true; entry: ConfigEntry } | { ok: false; refusal: ConfigRefusal };

/** A scope's live items and its version. */
export interface ConfigSnapshot {
  version: number;
  /** The items that are not deleted, each at its current version. */
  entries: ConfigEntry[];
}

/** Limits a store applies when it writes (see `config-items.ts` for the defaults). */
export interface ConfigStoreLimits {
  maxItemsPerScope: number;
  maxVersionsKept: number;
}

/**
 * Where configuration items live. Every change of a scope is the scope's
 * next version, kept in the item's history (the latest
 * `maxVersionsKept`); a write compares and sets atomically, across
 * processes for a shared store.
 */
export interface ConfigStore {
  readonly specificationVersion: 'v1';
  /**
   * The scope's live items and version, read at once. A store that can
   * answer at once (the in-memory one) returns the value itself, so that a
   * turn need not wait.
   */
  snapshot(scope: ConfigScope): ConfigSnapshot | Promise<ConfigSnapshot>;
  /** The item's kept versions, newest first (empty for an item never set). */
  history(scope: ConfigScope, type: string, name: string): Promise<ConfigEntry[]>;
  /** Stores a change as the scope's next version, unless refused. */
  write(scope: ConfigScope, change: ConfigChange, limits: ConfigStoreLimits): Promise<ConfigWriteResult>;
  /**
   * Calls `listener` with the scope and its new version after every change
   * made through this store or, for a shared store, by any process sharing
   * it. Returns an unsubscribe function.
   */
  onChange(listener: (scope: ConfigScope, version: number) => void): () => void;
  /** Optional: calls `listener` when changes may have been missed (a shared store's subscription came back). */
  onResync?(listener: () => void): () => void;
  /** Optional: releases connections. */
  close?(): Promise<void>;
}
