import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const sourceRoot = fileURLToPath(new URL('../../src/', import.meta.url));

/** The modules a file loads when it is imported: its value imports and re-exports (type-only ones load nothing). */
function staticImports(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  const specifiers: string[] = [];
  for (const match of code.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)';/gms))
    specifiers.push(match[1]!);
  for (const match of code.matchAll(/^import\s+'([^']+)';/gm)) specifiers.push(match[1]!);
  return specifiers;
}

/** Every package a module loads, following its own relative imports. */
function packagesLoadedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return packages;
}

it('loads the A2A SDK through @switchboard/runtime/a2a only, never through the root entry', () => {
  const root = [...packagesLoadedBy(resolve(sourceRoot, 'index.ts'))];
  expect(root.filter((name) => name.startsWith('@a2a-js/'))).toEqual([]);
  // The check sees packages at all: the root loads hono, the subpath the SDK.
  expect(root).toContain('hono');
  expect([...packagesLoadedBy(resolve(sourceRoot, 'a2a.ts'))]).toContain('@a2a-js/sdk/client');
});
