import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { defineConfig, type Plugin } from 'vitest/config';

/**
 * Vite's default TypeScript transform leaves TC39 (stage 3) decorators in
 * place and Node 20 cannot parse them; esbuild lowers them. Only files that
 * contain a decorator are re-transformed.
 */
function standardDecorators(): Plugin {
  return {
    name: 'standard-decorators',
    enforce: 'pre',
    async transform(code, id) {
      if (!/\.[cm]?ts$/.test(id) || !/(^|[\s;{}])@[A-Za-z_$]/.test(code)) return null;
      const result = await transform(code, {
        loader: 'ts',
        target: 'es2022',
        format: 'esm',
        sourcemap: true,
        sourcefile: id,
      });
      return { code: result.code, map: result.map };
    },
  };
}

const root = dirname(fileURLToPath(import.meta.url));
const TEST_DIRS = [
  ...['packages', 'apps', 'examples'].flatMap((top) =>
    readdirSync(join(root, top)).map((name) => join(top, name, 'test')),
  ),
  // The docs site's own test.
  join('docs', 'test'),
];
const include = TEST_DIRS.map((dir) => `${dir}/**/*.test.ts`);

const CHILD_PROCESS_IMPORT = /import\s*\{([^}]*)\}\s*from\s*['"](?:node:)?child_process['"]/g;
/** What starts a process that runs alongside the test (a short synchronous run, such as `spawnSync`, does not). */
const PROCESS_STARTERS = new Set(['spawn', 'fork', 'exec', 'execFile']);
const RELATIVE_IMPORT = /(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Whether a file's own imports start a process: a server, a redis-server, Chromium (through playwright-core). */
function importsProcessStarter(text: string): boolean {
  if (/from ['"]playwright-core['"]/.test(text)) return true;
  return [...text.matchAll(CHILD_PROCESS_IMPORT)].some(([, names]) =>
    (names as string)
      .split(',')
      .some((name) => PROCESS_STARTERS.has(name.trim().split(/\s+as\s+/)[0] as string)),
  );
}

/** Whether a test file, or a test helper it imports (transitively), starts a process. */
function startsProcesses(file: string, seen: Map<string, boolean>): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false);
  const text = readFileSync(file, 'utf8');
  let starts = importsProcessStarter(text);
  for (const [, specifier] of starts ? [] : text.matchAll(RELATIVE_IMPORT)) {
    const imported = resolve(dirname(file), specifier as string).replace(/\.js$/, '.ts');
    // Only test code is followed: the code under test starts nothing by itself.
    if (!imported.includes(`${join('/', 'test', '/')}`) || !existsSync(imported)) continue;
    if (startsProcesses(imported, seen)) {
      starts = true;
      break;
    }
  }
  seen.set(file, starts);
  return starts;
}

/**
 * The test files that start processes (servers as a user runs them, replicas, redis-servers of their own,
 * Chromium), found by what they import: they run one at a time, after the others, so that start-ups and
 * timing-bound checks (a Redis out of memory, a killed replica) never compete with another file for the 2
 * cores. Every other file runs in process, two at a time.
 */
const processFiles = TEST_DIRS.filter((dir) => existsSync(join(root, dir))).flatMap((dir) => {
  const seen = new Map<string, boolean>();
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(root, dir, name))
    .filter((file) => startsProcesses(file, seen))
    .map((file) => relative(root, file));
});

export default defineConfig({
  plugins: [standardDecorators()],
  test: {
    testTimeout: 30_000,
    // A polled condition (a browser showing a reply) may take a while on a loaded 2-core machine: wait up to 10 s.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include,
          exclude: processFiles,
          // Two files at a time (vitest's default on 2 cores is one): most wait on timers, Redis and sockets.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        // One file at a time (vitest runs this group after the other).
        test: { name: 'processes', include: processFiles, maxWorkers: 1 },
      },
    ],
  },
});
