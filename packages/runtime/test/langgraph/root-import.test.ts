import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const sourceRoot = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every package a module loads (value imports and re-exports), following its own relative imports. */
function packagesLoadedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    for (const [, specifier] of code.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)';/gms)) {
      if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!.replace(/\.js$/, '.ts')));
      else packages.add(specifier!);
    }
  };
  visit(entry);
  return packages;
}

it('loads LangGraph through @switchboard/runtime/langgraph only, never through the root entry', () => {
  const root = [...packagesLoadedBy(resolve(sourceRoot, 'index.ts'))];
  expect(root.filter((name) => name.startsWith('@langchain/'))).toEqual([]);
  expect(root).toContain('hono');
  expect([...packagesLoadedBy(resolve(sourceRoot, 'langgraph.ts'))]).toEqual(
    expect.arrayContaining([
      '@langchain/langgraph',
      '@langchain/langgraph-checkpoint',
      '@langchain/core/messages',
    ]),
  );
});
