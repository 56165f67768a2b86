#!/usr/bin/env node
/**
 * `pnpm check:imports`: checks how the sources (packages/x/src, apps/server/src) import each
 * other with dependency-cruiser, against the rules of .dependency-cruiser.mjs: no import circles,
 * adapters never import the server, the agent contract imports nothing back.
 *
 * It also fails when dependency-cruiser did not see every source file: without a TypeScript
 * parser it skips .ts files and finds no violation in nothing (TypeScript 7 has no JavaScript
 * API; pnpm-workspace.yaml gives dependency-cruiser a TypeScript of its own).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const SOURCES = [...readdirSync('packages').map((name) => `packages/${name}/src`), 'apps/server/src'].filter(
  (directory) => existsSync(directory),
);

/** Every TypeScript source file under `directory`, as a path relative to the repository. */
function typeScriptFiles(directory) {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
const tsConfig = extractTSConfig(options.tsConfig.fileName);
const { output } = await cruise(SOURCES, { ...options, outputType: 'json' }, {}, { tsConfig });
const result = JSON.parse(output);

const cruised = new Set(result.modules.map((module) => module.source));
const missed = SOURCES.flatMap(typeScriptFiles).filter((file) => !cruised.has(file));
if (missed.length > 0) {
  console.error(
    `dependency-cruiser did not read ${missed.length} source files (${missed.slice(0, 3).join(', ')}…): is its TypeScript parser installed? (npx depcruise --info)`,
  );
  process.exit(1);
}

const report = await format(result, { outputType: 'err' });
process.stdout.write(report.output);
process.exitCode = report.exitCode;
