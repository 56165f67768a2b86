#!/usr/bin/env node
// Loads app modules written in TypeScript (and, in the Switchboard workspace, the CLI's own sources).
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

register();
const built = new URL('../dist/main.js', import.meta.url);
const { runCli } = await import(
  existsSync(built) ? built.href : new URL('../src/main.ts', import.meta.url).href
);
process.exitCode = await runCli(process.argv.slice(2));
