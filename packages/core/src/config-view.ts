/**
 * What a turn sees of the live configuration: the items an operator set
 * through the config API (task types, patterns, step rules, keywords,
 * profiles), fixed for the whole turn. Orchestrators read it through
 * `RequestContext.current().config` and fall back to their constructor
 * options where it has no item.
 *
 * @module
 */

/**
 * The configuration versions a turn ran under: the app-wide one and, for a
 * tenant's turn, the tenant's. Each counts that scope's changes (every put,
 * delete or rollback of one of its items is the next number).
 */
export interface ConfigVersion {
  /** The app-wide items' version (0: none was ever set). */
  app: number;
  /** The tenant's own items' version, for a turn of a tenant (0: none was ever set). */
  tenant?: number;
}

/**
 * The configuration items one turn sees: the tenant's items over the
 * app-wide ones. Immutable: a change makes a new view, so anything derived
 * from a view may be cached by it (a `WeakMap` keyed by the view).
 */
export interface ConfigView {
  readonly version: ConfigVersion;
  /** The value of item `type`/`name` (the tenant's, else the app-wide one), or undefined without one. */
  get(type: string, name: string): unknown;
  /** Every item of `type`, name → value, the tenant's over the app-wide ones. */
  items(type: string): ReadonlyMap<string, unknown>;
}

const NO_ITEMS: ReadonlyMap<string, unknown> = new Map();

/** The view of an app without any configuration item. */
export const EMPTY_CONFIG: ConfigView = Object.freeze({
  version: Object.freeze({ app: 0 }),
  get: () => undefined,
  items: () => NO_ITEMS,
});
