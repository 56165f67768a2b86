#!/usr/bin/env node
// tsx's loader lets app modules be TypeScript. The CLI itself is imported by its own package name, so that its
// exports decide the file: the built JavaScript once published, the TypeScript sources in the Switchboard
// workspace (the built files there with `--conditions=switchboard-dist`).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('@switchboard/cli');
process.exitCode = await runCli(process.argv.slice(2));
