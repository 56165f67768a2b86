/**
 * Builds the console into dist/: index.html, app.js (every module bundled,
 * nothing loaded from elsewhere at run time) and app.css.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
await build({
  entryPoints: [join(root, 'src/main.ts')],
  outfile: join(dist, 'app.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
await copyFile(join(root, 'src/app.css'), join(dist, 'app.css'));
await copyFile(join(root, 'src/index.html'), join(dist, 'index.html'));
console.log(`console built in ${dist}`);
