import { createRequire } from 'node:module';

/**
 * A `require` that resolves modules as the installed package `name` does:
 * for a module that package depends on, which Switchboard does not declare
 * (so a strict package manager would not let it resolve the module itself),
 * in the very version that package uses.
 * @throws when `name` is not installed.
 */
export function requireAsDependencyOf(name: string): NodeJS.Require {
  return createRequire(createRequire(import.meta.url).resolve(name));
}
