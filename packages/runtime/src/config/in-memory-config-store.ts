import {
  type ConfigChange,
  type ConfigEntry,
  type ConfigScope,
  type ConfigSnapshot,
  type ConfigStore,
  type ConfigStoreLimits,
  type ConfigWriteResult,
  entryOf,
} from './config-store.js';

interface ScopeData {
  version: number;
  /** `type/name` → the item's kept versions, newest first. */
  histories: Map<string, ConfigEntry[]>;
  live: number;
  /** The deleted items, in the order they were deleted: only the latest `maxItemsPerScope` keep their history. */
  deleted: Set<string>;
}

const itemKey = (type: string, name: string) => `${type}/${name}`;

/**
 * The {@link ConfigStore} of one process, the default: items live as long
 * as the app does; the histories of at most `maxItemsPerScope` deleted
 * items are kept per scope (the latest deletions'). Entries are stored as JSON text and parsed when read, so
 * nobody can change a stored value through an object they hold.
 */
export class InMemoryConfigStore implements ConfigStore {
  readonly specificationVersion = 'v1' as const;
  readonly #scopes = new Map<ConfigScope, ScopeData>();
  readonly #listeners = new Set<(scope: ConfigScope, version: number) => void>();
  readonly #texts = new WeakMap<ConfigEntry, string>();

  snapshot(scope: ConfigScope): ConfigSnapshot {
    const data = this.#scopes.get(scope);
    if (!data) return { version: 0, entries: [] };
    const entries: ConfigEntry[] = [];
    for (const history of data.histories.values()) {
      const current = history[0];
      if (current && !current.deleted) entries.push(this.#copy(current));
    }
    return { version: data.version, entries };
  }

  async history(scope: ConfigScope, type: string, name: string): Promise<ConfigEntry[]> {
    const history = this.#scopes.get(scope)?.histories.get(itemKey(type, name)) ?? [];
    return history.map((entry) => this.#copy(entry));
  }

  async write(
    scope: ConfigScope,
    change: ConfigChange,
    limits: ConfigStoreLimits,
  ): Promise<ConfigWriteResult> {
    let data = this.#scopes.get(scope);
    const key = itemKey(change.type, change.name);
    const history = data?.histories.get(key) ?? [];
    const current = history[0];
    const currentVersion = current?.version ?? 0;
    const exists = current !== undefined && !current.deleted;
    if (change.expectedVersion !== undefined) {
      const conflict = change.expectedVersion === 0 ? exists : change.expectedVersion !== currentVersion;
      if (conflict) return { ok: false, refusal: { kind: 'conflict', currentVersion } };
    }
    if (change.value === undefined && !exists) return { ok: false, refusal: { kind: 'not_found' } };
    if (change.value !== undefined && !exists && (data?.live ?? 0) >= limits.maxItemsPerScope) {
      return { ok: false, refusal: { kind: 'too_many_items', limit: limits.maxItemsPerScope } };
    }
    if (!data) {
      data = { version: 0, histories: new Map(), live: 0, deleted: new Set() };
      this.#scopes.set(scope, data);
    }
    data.version += 1;
    const entry = entryOf(change, data.version);
    this.#texts.set(entry, JSON.stringify(entry));
    data.histories.set(key, [entry, ...history].slice(0, limits.maxVersionsKept));
    data.deleted.delete(key);
    if (change.value === undefined) {
      data.live -= 1;
      data.deleted.add(key);
      // Names come and go: the histories of the oldest deletions are forgotten rather than kept forever.
      if (data.deleted.size > limits.maxItemsPerScope) {
        const oldest = data.deleted.values().next().value as string;
        data.deleted.delete(oldest);
        data.histories.delete(oldest);
      }
    } else if (!exists) data.live += 1;
    const { version } = data;
    for (const listener of this.#listeners) listener(scope, version);
    return { ok: true, entry: this.#copy(entry) };
  }

  onChange(listener: (scope: ConfigScope, version: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #copy(entry: ConfigEntry): ConfigEntry {
    return JSON.parse(this.#texts.get(entry) as string) as ConfigEntry;
  }
}
