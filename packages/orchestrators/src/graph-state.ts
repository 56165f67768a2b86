import type { z } from 'zod';
import { GraphCompileError } from './graph-errors.js';
import type { GraphState, Reducer, ReducerSpec } from './graph-types.js';

const replace: Reducer = (_current, update) => update;

const append: Reducer = (current, update) => {
  const items = Array.isArray(update) ? update : [update];
  return Array.isArray(current) ? [...current, ...items] : items;
};

const merge: Reducer = (current, update) => {
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(update)) return update;
  return isObject(current) ? { ...(current as object), ...(update as object) } : update;
};

const BUILT_IN: Record<string, Reducer> = { replace, append, merge };

/** What a node's update may be: an object of the state's keys. */
type Update = Record<string, unknown>;

/** A checked state, or the schema's issues (or what else was wrong), one line each. */
export type StateCheck = { ok: true; state: GraphState } | { ok: false; issues: string[] };

/**
 * A graph's state rules: its zod schema, a reducer per key, and its size
 * bound. Applies a node's update and checks the result.
 */
export class StateRules {
  readonly #schema: z.ZodType<GraphState>;
  readonly #keys: ReadonlySet<string>;
  readonly #reducers: ReadonlyMap<string, Reducer>;
  readonly #maxStateBytes: number;

  constructor(
    graph: string,
    schema: z.ZodType<GraphState>,
    reducers: Readonly<Record<string, ReducerSpec>>,
    maxStateBytes: number,
  ) {
    const shape = (schema as { shape?: Record<string, unknown> }).shape;
    if (typeof schema?.safeParse !== 'function' || typeof shape !== 'object' || shape === null) {
      throw new GraphCompileError({
        graph,
        problem: 'its state must be a zod object schema (z.object({ … }))',
      });
    }
    this.#schema = schema;
    this.#keys = new Set(Object.keys(shape));
    const byKey = new Map<string, Reducer>();
    for (const [key, spec] of Object.entries(reducers)) {
      if (!this.#keys.has(key)) {
        throw new GraphCompileError({
          graph,
          problem: `a reducer is given for '${key}', which the state does not have (keys: ${[...this.#keys].join(', ')})`,
        });
      }
      const reducer = typeof spec === 'function' ? spec : BUILT_IN[spec];
      if (!reducer) {
        throw new GraphCompileError({
          graph,
          problem: `the reducer of '${key}' must be 'replace', 'append', 'merge' or a function`,
        });
      }
      byKey.set(key, reducer);
    }
    this.#reducers = byKey;
    this.#maxStateBytes = maxStateBytes;
  }

  /** The reducer of `key` ('replace' unless one was given). */
  reducerOf(key: string): Reducer {
    return this.#reducers.get(key) ?? replace;
  }

  /**
   * The state after `update` (through each key's reducer), checked against
   * the schema and the size bound; or what is wrong. `undefined` and `{}`
   * change nothing.
   */
  apply(state: GraphState, update: unknown): StateCheck {
    if (update === undefined || update === null) return this.check(state);
    if (typeof update !== 'object' || Array.isArray(update)) {
      return {
        ok: false,
        issues: [
          `a node must return an object of state keys, not ${Array.isArray(update) ? 'an array' : typeof update}`,
        ],
      };
    }
    const unknown = Object.keys(update).filter((key) => !this.#keys.has(key));
    if (unknown.length > 0) {
      return { ok: false, issues: unknown.map((key) => `${key}: not a key of the state`) };
    }
    const next: GraphState = { ...state };
    for (const [key, value] of Object.entries(update as Update)) {
      if (value === undefined) continue;
      next[key] = this.reducerOf(key)(state[key], value);
    }
    return this.check(next);
  }

  /** The state as the schema parses it (defaults applied), or its issues. */
  check(state: GraphState): StateCheck {
    const parsed = this.#schema.safeParse(state);
    if (!parsed.success) {
      return {
        ok: false,
        issues: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'state'}: ${issue.message}`),
      };
    }
    let size: number;
    try {
      size = JSON.stringify(parsed.data).length;
    } catch (error) {
      return {
        ok: false,
        issues: [`state: not JSON (${error instanceof Error ? error.message : String(error)})`],
      };
    }
    if (size > this.#maxStateBytes) {
      return {
        ok: false,
        issues: [`state: ${size} bytes as JSON, over the graph's maxStateBytes of ${this.#maxStateBytes}`],
      };
    }
    return { ok: true, state: parsed.data };
  }
}
