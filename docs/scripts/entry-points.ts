/** The public entry points of the packages the TypeScript reference documents, read from their package.json. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['core', 'runtime', 'orchestrators'] as const;

/** Each package's entry points (its `exports`), as source files and the import path a user writes. */
export function entryPoints(): { file: string; specifier: string }[] {
  return PACKAGES.flatMap((name) => {
    const manifest = JSON.parse(readFileSync(`${ROOT}packages/${name}/package.json`, 'utf8')) as {
      exports: Record<string, { types: string }>;
    };
    // `/internal` is what the packages share with each other, not API: it stays out of the reference.
    return Object.entries(manifest.exports)
      .filter(([subpath]) => subpath !== './internal')
      .map(([subpath, target]) => ({
        file: `${ROOT}packages/${name}/${target.types.replace(/^\.\//, '')}`,
        specifier: `@switchboard/${name}${subpath.slice(1)}`,
      }));
  });
}
