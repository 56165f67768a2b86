import type { ConfigVersion, ConfigView } from '@switchboard/core';
import { isPromiseLike } from '../promise-like.js';
import { deepFreeze } from '../stores/freeze.js';
import { CONFIG_ITEM_SCHEMAS, isConfigItemType } from './config-items.js';
import { type ConfigScope, type ConfigSnapshot, type ConfigStore, configScope } from './config-store.js';

/** How many tenants' items one replica keeps cached, at most (the first cached are dropped first). */
const MAX_CACHED_SCOPES = 10_000;
/**
 * How old a cached scope may get before a turn that uses it also reloads it
 * in the background (the turn itself does not wait): a safety net should a
 * change notification be lost without the subscription dropping.
 */
const DEFAULT_MAX_AGE_MS = 60_000;

type Items = ReadonlyMap<string, ReadonlyMap<string, unknown>>;

/** One scope's items as cached: values validated and frozen, grouped by type. */
interface Loaded {
  version: number;
  items: Items;
  loadedAt: number;
}

interface ScopeState {
  loaded?: Loaded;
  /** The newest version a change notification announced. */
  announced: number;
  /** Set when notifications may have been missed (the subscription came back). */
  stale: boolean;
  loading?: Promise<Loaded>;
  /** The last view made with this scope as its tenant (or app-wide) part, and the parts it was made of. */
  view?: { app: Loaded; tenant: Loaded | undefined; view: ConfigView };
}

const NO_ITEMS: ReadonlyMap<string, unknown> = new Map();

function itemsOf(snapshot: ConfigSnapshot): Items {
  const byType = new Map<string, Map<string, unknown>>();
  for (const entry of snapshot.entries) {
    if (!isConfigItemType(entry.type)) continue;
    // Validated when written; read back through the schema all the same, as every stored record is.
    const parsed = CONFIG_ITEM_SCHEMAS[entry.type].safeParse(entry.value);
    if (!parsed.success) continue;
    let items = byType.get(entry.type);
    if (!items) {
      items = new Map();
      byType.set(entry.type, items);
    }
    items.set(entry.name, deepFreeze(parsed.data));
  }
  return byType;
}

function viewOf(app: Loaded, tenant: Loaded | undefined): ConfigView {
  const version: ConfigVersion = tenant ? { app: app.version, tenant: tenant.version } : { app: app.version };
  const merged = new Map<string, ReadonlyMap<string, unknown>>();
  for (const type of new Set([...app.items.keys(), ...(tenant?.items.keys() ?? [])])) {
    const own = tenant?.items.get(type);
    const defaults = app.items.get(type);
    merged.set(type, own && defaults ? new Map([...defaults, ...own]) : (own ?? defaults ?? NO_ITEMS));
  }
  return Object.freeze({
    version: Object.freeze(version),
    get: (type: string, name: string) => merged.get(type)?.get(name),
    items: (type: string) => merged.get(type) ?? NO_ITEMS,
  });
}

/**
 * One replica's cache of the configuration items: a turn gets its view
 * ({@link viewOf}) without a store round trip while the cache is warm. A
 * change notification (from this process, or pub/sub from another replica)
 * marks its scope as behind and reloads it at once, so the next turn sees
 * the change; a turn that comes before the reload is done waits for it.
 */
export class ConfigCache {
  readonly #store: ConfigStore;
  readonly #scopes = new Map<ConfigScope, ScopeState>();
  readonly #maxAgeMs: number;
  readonly #listeners = new Set<(scope: ConfigScope, version: number) => void>();
  #unsubscribe: Array<() => void> | undefined;

  constructor(store: ConfigStore, { maxAgeMs = DEFAULT_MAX_AGE_MS }: { maxAgeMs?: number } = {}) {
    this.#store = store;
    this.#maxAgeMs = maxAgeMs;
  }

  /**
   * The view of a tenant's turn (the app-wide items alone without a
   * tenant): at once when cached and current, else once loaded.
   */
  viewOf(tenantId: string | undefined): ConfigView | Promise<ConfigView> {
    if (!this.#unsubscribe) this.#listen();
    const app = this.#scope('app');
    const tenantScope = tenantId === undefined ? undefined : configScope(tenantId);
    const tenant = tenantScope === undefined ? undefined : this.#scope(tenantScope);
    if (isPromiseLike(app) || isPromiseLike(tenant)) {
      return Promise.all([app, tenant]).then(([appLoaded, tenantLoaded]) =>
        this.#view(tenantScope, appLoaded, tenantLoaded),
      );
    }
    return this.#view(tenantScope, app, tenant);
  }

  /** Calls `listener` once this replica has loaded a scope's new version (after a change here or elsewhere). */
  onApplied(listener: (scope: ConfigScope, version: number) => void): () => void {
    if (!this.#unsubscribe) this.#listen();
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops listening for changes. */
  close(): void {
    for (const unsubscribe of this.#unsubscribe ?? []) unsubscribe();
    this.#unsubscribe = [];
  }

  /** Subscribes to the store's changes, on first use: a store shared by replicas then opens its subscriber connection. */
  #listen(): void {
    const store = this.#store;
    this.#unsubscribe = [store.onChange((scope, version) => this.#announce(scope, version))];
    if (store.onResync) this.#unsubscribe.push(store.onResync(() => this.#resync()));
  }

  #view(tenantScope: ConfigScope | undefined, app: Loaded, tenant: Loaded | undefined): ConfigView {
    const state = this.#scopes.get(tenantScope ?? 'app');
    const cached = state?.view;
    if (cached && cached.app === app && cached.tenant === tenant) return cached.view;
    const view = viewOf(app, tenant);
    if (state) state.view = { app, tenant, view };
    return view;
  }

  #scope(scope: ConfigScope): Loaded | Promise<Loaded> {
    let state = this.#scopes.get(scope);
    if (!state) {
      state = { announced: 0, stale: false };
      this.#scopes.set(scope, state);
      if (this.#scopes.size > MAX_CACHED_SCOPES) {
        const oldest = this.#scopes.keys().next().value;
        if (oldest !== undefined && oldest !== 'app') this.#scopes.delete(oldest);
      }
    }
    const { loaded } = state;
    if (loaded && !state.stale && loaded.version >= state.announced) {
      if (Date.now() - loaded.loadedAt > this.#maxAgeMs) this.#reload(scope, state);
      return loaded;
    }
    const first = this.#load(scope, state);
    if (!isPromiseLike(first)) return first;
    // A load already under way may have started before the latest change: then once more.
    const loading = first.then((done) => (done.version >= state.announced ? done : this.#load(scope, state)));
    // Behind, but the store cannot be read: the items known are better than failing the turn.
    return loaded ? loading.catch(() => loaded) : loading;
  }

  /** Loads in the background; a failure leaves the cache as it was. */
  #reload(scope: ConfigScope, state: ScopeState): void {
    const loading = this.#load(scope, state);
    if (isPromiseLike(loading)) loading.catch(() => {});
  }

  /** Loads the scope: at once from a store that answers at once (the in-memory one), else once it answered. */
  #load(scope: ConfigScope, state: ScopeState): Loaded | Promise<Loaded> {
    if (state.loading) return state.loading;
    const stale = state.stale;
    state.stale = false;
    const snapshot = this.#store.snapshot(scope);
    if (!isPromiseLike(snapshot)) return this.#apply(scope, state, snapshot);
    const loading = Promise.resolve(snapshot).then(
      (answered) => {
        state.loading = undefined;
        return this.#apply(scope, state, answered);
      },
      (error: unknown) => {
        state.loading = undefined;
        state.stale ||= stale;
        throw error;
      },
    );
    state.loading = loading;
    return loading;
  }

  #apply(scope: ConfigScope, state: ScopeState, snapshot: ConfigSnapshot): Loaded {
    const loaded: Loaded = { version: snapshot.version, items: itemsOf(snapshot), loadedAt: Date.now() };
    const previous = state.loaded?.version;
    if (state.loaded === undefined || loaded.version >= state.loaded.version) state.loaded = loaded;
    if (previous !== undefined && loaded.version > previous) {
      for (const listener of this.#listeners) listener(scope, loaded.version);
    }
    return state.loaded;
  }

  #announce(scope: ConfigScope, version: number): void {
    const state = this.#scopes.get(scope);
    // A scope nobody asked for yet is loaded when first needed.
    if (!state) return;
    if (version <= state.announced) return;
    state.announced = version;
    if (state.loaded && state.loaded.version >= version) return;
    // Reloaded now, so that the next turn usually finds it ready; one loaded meanwhile may be older: reload after.
    const reload = (): void => {
      if ((state.loaded?.version ?? 0) >= state.announced) return;
      const loading = this.#load(scope, state);
      if (isPromiseLike(loading)) loading.then(reload, () => {});
    };
    if (state.loading) state.loading.then(reload, () => {});
    else reload();
  }

  #resync(): void {
    for (const [scope, state] of this.#scopes) {
      state.stale = true;
      this.#reload(scope, state);
    }
  }
}
