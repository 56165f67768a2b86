/**
 * `pnpm --filter @switchboard/docs generate` (run by `pnpm docs:build`): writes
 * the generated reference pages into docs/reference/, which git ignores —
 * the HTTP API, the configuration variables and the TypeScript API, each
 * from the sources, so none can go stale. The error codes page is committed
 * (`pnpm docs:errors` writes it; a test fails when it is stale).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configReferenceMarkdown } from './config-reference.js';
import { httpReferenceMarkdown, readOpenApiDocument } from './http-reference.js';
import { writeTypeScriptReference } from './typescript-reference.js';

const REFERENCE = fileURLToPath(new URL('../reference/', import.meta.url));

const started = performance.now();
rmSync(`${REFERENCE}typescript`, { recursive: true, force: true });
mkdirSync(REFERENCE, { recursive: true });
writeFileSync(`${REFERENCE}http-api.md`, httpReferenceMarkdown(await readOpenApiDocument()));
writeFileSync(`${REFERENCE}configuration.md`, configReferenceMarkdown());
const modules = await writeTypeScriptReference(`${REFERENCE}typescript`);
console.log(
  `reference pages written to docs/reference/ (${modules.length} entry points) in ${Math.round(performance.now() - started)} ms`,
);
