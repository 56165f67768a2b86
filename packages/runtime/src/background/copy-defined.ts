/** Copies the `keys` of `source` that are defined onto `target` (no `undefined` properties: stored objects stay small). */
export function copyDefined<Target extends object, Source extends object>(
  target: Target,
  source: Source,
  keys: readonly (keyof Source & keyof Target)[],
): void {
  for (const key of keys) {
    if (source[key] !== undefined) target[key] = source[key] as never;
  }
}
