import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// Inside bench/, so that the compiled servers resolve their npm imports from bench/node_modules.
const benchDir = fileURLToPath(new URL('.', import.meta.url));

/**
 * Compiles a bench server to plain JavaScript the way a production build
 * would (our TypeScript sources bundled, npm packages left as imports), so
 * that both sides of a comparison run compiled code and no TypeScript loader
 * or its helpers sit on the measured path.
 */
export function compileServer(script: string): Promise<string> {
  return compileIn(benchDir, script);
}

/**
 * Compiles `script` of the bench folder `dir` (this checkout's, or another checkout's such as the base of
 * bench/regression.ts) into `dir/.build/`, against that checkout's sources and packages.
 */
export async function compileIn(dir: string, script: string): Promise<string> {
  const entry = join(dir, script);
  const outfile = join(dir, '.build', script.replaceAll('/', '-').replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Workspace packages are bundled from source; everything from npm stays an import.
    plugins: [
      {
        name: 'external-npm',
        setup(builder) {
          builder.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@switchboard/') ? undefined : { path: args.path, external: true },
          );
          // A workspace module imported lazily (the A2A endpoint) stays out of the bundle: bundled, its optional
          // peer dependencies (not installed in bench/) would be imported at start-up. No bench loads it.
          builder.onResolve({ filter: /^\./ }, (args) =>
            args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined,
          );
        },
      },
    ],
    logLevel: 'warning',
  });
  return outfile;
}
