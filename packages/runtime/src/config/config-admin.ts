import { type ConfigView, NotFoundError, ValidationError } from '@switchboard/core';
import type { ConfigCache } from './config-cache.js';
import { type ConfigNames, itemProblems } from './config-checks.js';
import { type ConfigDifference, diffValues } from './config-diff.js';
import { ConfigVersionConflictError } from './config-errors.js';
import {
  CONFIG_ITEM_SCHEMAS,
  CONFIG_ITEM_TYPES,
  type ConfigItemType,
  ItemNameSchema,
  isConfigItemType,
  MAX_COMMENT_LENGTH,
  MAX_ITEM_BYTES,
  MAX_ITEMS_PER_SCOPE,
  MAX_VERSIONS_KEPT,
} from './config-items.js';
import { type ConfigEntry, type ConfigScope, type ConfigStore, configScope } from './config-store.js';

/** Whose items: a tenant's, or the app-wide ones (the default every tenant inherits) without `tenantId`. */
export interface ConfigTarget {
  tenantId?: string;
}

/** Who changes an item, and on which version the change is based. */
export interface ConfigWriteOptions extends ConfigTarget {
  /** Compare-and-set: refused with 409 unless the item is at this version (0: it must not exist yet). */
  expectedVersion?: number;
  /** Recorded with the version: an API key's name, a person, a deploy job. */
  updatedBy?: string;
  /** Why, recorded with the version (at most 500 characters). */
  comment?: string;
}

/** A scope's items, as listed. */
export interface ConfigListing {
  /** The scope's version: how many changes it has had. */
  version: number;
  items: ConfigEntry[];
}

/** The differences between two versions of an item. */
export interface ConfigDiff {
  type: string;
  name: string;
  from: number;
  to: number;
  differences: ConfigDifference[];
}

const LIMITS = { maxItemsPerScope: MAX_ITEMS_PER_SCOPE, maxVersionsKept: MAX_VERSIONS_KEPT };

function issuesOf(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string[] {
  return error.issues.map((issue) =>
    issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message,
  );
}

/**
 * The app's live configuration (`app.config`): typed items, validated,
 * versioned per tenant (app-wide items are every tenant's defaults), read
 * by the orchestrators on every turn through a per-replica cache. The HTTP
 * API at `/v1/config` is this, behind the `config:read` and `config:write`
 * scopes. Every method refuses a bad item or a stale version without
 * changing anything.
 *
 * @example
 * ```ts
 * await app.config.put('keywords', 'clock', { keywords: ['time', 'date'] }, { comment: 'dates too' });
 * const { version } = await app.config.put('task-type', 'refunds', {
 *   description: 'Money back for an order',
 *   patterns: ['react'],
 * }, { tenantId: 'acme', expectedVersion: 0, updatedBy: 'ops' });
 * await app.config.rollback('task-type', 'refunds', version, { tenantId: 'acme' });
 * ```
 */
export class ConfigAdmin {
  readonly #store: ConfigStore;
  readonly #cache: ConfigCache;
  readonly #names: () => ConfigNames;

  /** @param names - what the app's items may name (read when an item is written). */
  constructor(store: ConfigStore, cache: ConfigCache, names: () => ConfigNames) {
    this.#store = store;
    this.#cache = cache;
    this.#names = names;
  }

  /** The item types, in the order the API lists them. */
  get types(): readonly ConfigItemType[] {
    return CONFIG_ITEM_TYPES;
  }

  /** The scope's live items (a tenant's own, or the app-wide ones), read from the store. */
  async list({ tenantId }: ConfigTarget = {}): Promise<ConfigListing> {
    const { version, entries } = await Promise.resolve(this.#store.snapshot(configScope(tenantId)));
    entries.sort((a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name));
    return { version, items: entries };
  }

  /** The item at its current version, or at `version`. @throws NotFoundError when there is none. */
  async get(type: string, name: string, { tenantId, version }: ConfigTarget & { version?: number } = {}) {
    const history = await this.versions(type, name, { tenantId });
    const entry = version === undefined ? history[0] : history.find((each) => each.version === version);
    if (!entry || (version === undefined && entry.deleted)) throw this.#notFound(type, name, version);
    return entry;
  }

  /** The item's kept versions, newest first (at most {@link MAX_VERSIONS_KEPT}). */
  async versions(type: string, name: string, { tenantId }: ConfigTarget = {}): Promise<ConfigEntry[]> {
    this.#checkKey(type, name);
    return this.#store.history(configScope(tenantId), type, name);
  }

  /**
   * Sets an item to `value`, the scope's next version, once it passed its
   * type's schema and names only what the app has.
   * @throws ValidationError (400) for a bad item; ConfigVersionConflictError (409) for a stale `expectedVersion`.
   */
  async put(
    type: string,
    name: string,
    value: unknown,
    options: ConfigWriteOptions = {},
  ): Promise<ConfigEntry> {
    const parsed = this.#validate(type, name, value);
    return this.#write(type, name, parsed, options);
  }

  /** Deletes an item (a version of its own: its history stays, and a rollback brings it back). */
  async delete(type: string, name: string, options: ConfigWriteOptions = {}): Promise<ConfigEntry> {
    this.#checkKey(type, name);
    return this.#write(type, name, undefined, options);
  }

  /**
   * Makes `version`'s value (or deletion) the item's next version. The old
   * value is validated again, against what the app has now.
   */
  async rollback(type: string, name: string, version: number, options: ConfigWriteOptions = {}) {
    const target = await this.get(type, name, { tenantId: options.tenantId, version });
    const comment = options.comment ?? `rollback to version ${version}`;
    if (target.deleted) return this.delete(type, name, { ...options, comment });
    return this.put(type, name, target.value, { ...options, comment });
  }

  /** The differences from version `from` to version `to` of an item (a deleted version counts as no value). */
  async diff(type: string, name: string, from: number, to: number, { tenantId }: ConfigTarget = {}) {
    const history = await this.versions(type, name, { tenantId });
    const find = (version: number) => {
      const entry = history.find((each) => each.version === version);
      if (!entry) throw this.#notFound(type, name, version);
      return entry.value;
    };
    const result: ConfigDiff = { type, name, from, to, differences: diffValues(find(from), find(to)) };
    return result;
  }

  /** The items a tenant's turn would see now (the tenant's over the app-wide ones), through this replica's cache. */
  view({ tenantId }: ConfigTarget = {}): ConfigView | Promise<ConfigView> {
    return this.#cache.viewOf(tenantId);
  }

  /**
   * Calls `listener` each time this replica has taken up a change of a
   * scope (`app`, or `tenant:<id>`), made here or on another replica.
   * Returns an unsubscribe function.
   */
  onApplied(listener: (scope: ConfigScope, version: number) => void): () => void {
    return this.#cache.onApplied(listener);
  }

  #validate(type: string, name: string, value: unknown): unknown {
    this.#checkKey(type, name);
    const json = JSON.stringify(value);
    if (json === undefined)
      throw new ValidationError({ message: 'Invalid config item', issues: ['a value is required'] });
    if (Buffer.byteLength(json) > MAX_ITEM_BYTES)
      throw new ValidationError({
        message: 'Invalid config item',
        issues: [`the item takes ${Buffer.byteLength(json)} bytes as JSON, more than ${MAX_ITEM_BYTES}`],
      });
    const itemType = type as ConfigItemType;
    const parsed = CONFIG_ITEM_SCHEMAS[itemType].safeParse(value);
    if (!parsed.success)
      throw new ValidationError({ message: `Invalid ${type} item`, issues: issuesOf(parsed.error) });
    const problems = itemProblems(itemType, name, parsed.data as never, this.#names());
    if (problems.length > 0) throw new ValidationError({ message: `Invalid ${type} item`, issues: problems });
    return parsed.data;
  }

  #checkKey(type: string, name: string): void {
    if (!isConfigItemType(type))
      throw new ValidationError({
        message: `Unknown config item type '${String(type).slice(0, 40)}'`,
        issues: [`type must be one of: ${CONFIG_ITEM_TYPES.join(', ')}`],
      });
    const parsed = ItemNameSchema.safeParse(name);
    if (!parsed.success)
      throw new ValidationError({ message: 'Invalid config item name', issues: issuesOf(parsed.error) });
  }

  async #write(
    type: string,
    name: string,
    value: unknown,
    options: ConfigWriteOptions,
  ): Promise<ConfigEntry> {
    const { tenantId, expectedVersion, updatedBy, comment } = options;
    if (expectedVersion !== undefined && (!Number.isInteger(expectedVersion) || expectedVersion < 0))
      throw new ValidationError({ message: 'expectedVersion must be a whole number of at least 0' });
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH))
      throw new ValidationError({
        message: `comment must be a text of at most ${MAX_COMMENT_LENGTH} characters`,
      });
    const written = await this.#store.write(
      configScope(tenantId),
      { type, name, value, expectedVersion, updatedBy, comment, updatedAt: new Date().toISOString() },
      LIMITS,
    );
    if (written.ok) return written.entry;
    const { refusal } = written;
    if (refusal.kind === 'conflict')
      throw new ConfigVersionConflictError({
        type,
        name,
        expected: expectedVersion ?? 0,
        currentVersion: refusal.currentVersion,
      });
    if (refusal.kind === 'not_found') throw this.#notFound(type, name);
    throw new ValidationError({
      message: 'Too many config items',
      issues: [`a scope holds at most ${refusal.limit} items: delete one first`],
    });
  }

  #notFound(type: string, name: string, version?: number): NotFoundError {
    return new NotFoundError({
      resource: 'Config item',
      id: version === undefined ? `${type}/${name}` : `${type}/${name}@${version}`,
    });
  }
}
