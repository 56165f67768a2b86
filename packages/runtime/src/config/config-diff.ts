/** One difference between two values of an item. */
export interface ConfigDifference {
  /** Where, as a dotted path of object keys (`''` for the whole value). */
  path: string;
  /** The value before (absent when added). */
  before?: unknown;
  /** The value after (absent when removed). */
  after?: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The differences between two JSON values: objects are compared key by
 * key, anything else (arrays included) as a whole.
 *
 * @example
 * ```ts
 * diffValues({ keywords: ['a'] }, { keywords: ['a', 'b'] });
 * // [{ path: 'keywords', before: ['a'], after: ['a', 'b'] }]
 * ```
 */
export function diffValues(before: unknown, after: unknown, path = ''): ConfigDifference[] {
  if (isObject(before) && isObject(after)) {
    const differences: ConfigDifference[] = [];
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const at = path === '' ? key : `${path}.${key}`;
      if (!(key in after)) differences.push({ path: at, before: before[key] });
      else if (!(key in before)) differences.push({ path: at, after: after[key] });
      else differences.push(...diffValues(before[key], after[key], at));
    }
    return differences;
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const difference: ConfigDifference = { path };
  if (before !== undefined) difference.before = before;
  if (after !== undefined) difference.after = after;
  return [difference];
}
