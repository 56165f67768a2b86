/**
 * apps/server is what a user deploys: every package its code loads at run
 * time, including the optional peer dependencies of the runtime subpaths it
 * imports (`@switchboard/runtime/otel` needs the OpenTelemetry SDK), must be
 * declared in its own package.json, pinned. The workspace hides a missing one:
 * the runtime's devDependencies install it anyway.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SERVER = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RUNTIME = resolve(SERVER, '../../packages/runtime');

interface PackageJson {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports?: Record<string, { default: string }>;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

/** The modules a file loads at run time (`import type` and `export type` load nothing). */
function runtimeImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers: string[] = [];
  for (const match of source.matchAll(
    /\b(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g,
  )) {
    if (!match[1]) specifiers.push(match[2] as string);
  }
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g))
    specifiers.push(match[1] as string);
  return specifiers;
}

/** A package name from an import specifier (`@scope/name/sub` → `@scope/name`). */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** The packages loaded by `entries` and every file of the same package they import, transitively. */
function packagesLoaded(entries: readonly string[]): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [...entries];
  for (let file = queue.pop(); file; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else if (!specifier.startsWith('node:')) packages.add(specifier);
    }
  }
  return packages;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('apps/server dependencies', () => {
  const server = readJson(join(SERVER, 'package.json'));
  const runtime = readJson(join(RUNTIME, 'package.json'));
  const declared = server.dependencies ?? {};

  it("declares, pinned to the runtime's tested version, every peer of the runtime it loads", () => {
    const ownImports = packagesLoaded(sourceFiles(join(SERVER, 'src')));
    // The runtime entry points the server imports (`@switchboard/runtime`, `/otel`, `/redis`, …).
    const entries = [...ownImports]
      .filter((specifier) => packageOf(specifier) === '@switchboard/runtime')
      .map((specifier) => {
        const subpath = `.${specifier.slice('@switchboard/runtime'.length)}`;
        const target = runtime.exports?.[subpath]?.default;
        expect(target, `${specifier} is exported by the runtime`).toBeDefined();
        return resolve(RUNTIME, target as string);
      });
    const peers = runtime.peerDependencies ?? {};
    const needed = [...packagesLoaded(entries)].map(packageOf).filter((name) => name in peers);
    expect(needed).toContain('@opentelemetry/sdk-trace-node');

    const problems: string[] = [];
    for (const name of new Set(needed)) {
      const tested = runtime.devDependencies?.[name];
      if (!(name in declared)) problems.push(`${name} is not declared`);
      else if (declared[name] !== tested)
        problems.push(`${name} is ${declared[name]}, the runtime tests ${tested}`);
    }
    expect(problems).toEqual([]);
  });

  it('declares every package its own code imports, and each resolves from apps/server', () => {
    const own = new Set([...packagesLoaded(sourceFiles(join(SERVER, 'src')))].map(packageOf));
    for (const name of own) {
      expect(declared, `${name} is declared`).toHaveProperty([name]);
      expect(existsSync(join(SERVER, 'node_modules', name)), `${name} is installed for apps/server`).toBe(
        true,
      );
    }
    for (const [name, version] of Object.entries(declared)) {
      if (!version.startsWith('workspace:')) expect(version, `${name} is pinned`).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });
});
