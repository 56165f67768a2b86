/**
 * Builds the console into dist/: index.html, app.js (every module bundled,
 * nothing loaded from elsewhere at run time) and app.css.
 */
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// Built beside dist/ and swapped in, so that a server started meanwhile (`pnpm start` while tests run) never
// finds dist/ missing or half written.
const next = join(root, `dist.next-${process.pid}`);
const old = join(root, `dist.old-${process.pid}`);

await rm(next, { recursive: true, force: true });
await mkdir(next, { recursive: true });
await build({
  entryPoints: [join(root, 'src/main.ts')],
  outfile: join(next, 'app.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
await copyFile(join(root, 'src/app.css'), join(next, 'app.css'));
await copyFile(join(root, 'src/index.html'), join(next, 'index.html'));
await rename(dist, old).catch((error) => {
  if (error.code !== 'ENOENT') throw error;
});
await rename(next, dist);
await rm(old, { recursive: true, force: true });
console.log(`console built in ${dist}`);
