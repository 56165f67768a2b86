#!/usr/bin/env node
/**
 * Proves that a user can install Switchboard from its tarballs, outside this workspace:
 *
 * 1. builds the packages (`pnpm build`) and packs core, runtime, orchestrators, console and cli with
 *    `pnpm pack` (which applies `publishConfig` and turns `workspace:` ranges into versions);
 * 2. checks each tarball: package.json metadata, README.md and LICENSE, a source map for every
 *    emitted file whose sources are shipped too, no tests and no build info;
 * 3. installs the tarballs with npm into a new project under the OS temp dir, with only the
 *    peers importing the packages needs (zod, @opentelemetry/api) and TypeScript;
 * 4. type-checks, under a strict NodeNext tsconfig, README.md's "A custom orchestrator in 20
 *    lines" (extracted at run time, so the README cannot drift) and each package README's example,
 *    then runs them with plain `node`: the README's server answers one POST /v1/chat and stops on
 *    the signal it handles;
 * 5. runs the installed `switchboard init` in a new directory, installs that starter project
 *    from the tarballs, runs its tests (npm test) and `switchboard eval` on its dataset.
 *
 * Plain Node, no dependencies. `node scripts/pack-install.mjs [--keep]` (`--keep` leaves the temp
 * dir for a look). Exits non-zero with the reason on the first failure.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['core', 'runtime', 'orchestrators', 'console', 'cli'];
/** Packages compiled by tsc: they ship source maps and declaration maps. */
const COMPILED = new Set(['core', 'runtime', 'orchestrators', 'cli']);
/**
 * The peers of the packed packages, read from their manifests: the ones a
 * plain `import` needs (not marked optional in any package), and the optional
 * ones, which npm must not install on its own. The packages' own peers on
 * each other are installed from the tarballs.
 */
async function peersOf() {
  const required = new Set();
  const optional = new Set();
  for (const name of PACKAGES) {
    const manifest = JSON.parse(await readFile(join(root, 'packages', name, 'package.json'), 'utf8'));
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
      if (peer.startsWith('@switchboard/')) continue;
      (manifest.peerDependenciesMeta?.[peer]?.optional ? optional : required).add(peer);
    }
  }
  for (const peer of required) optional.delete(peer);
  // An optional peer of one package that another packed package depends on (yaml, for the CLI) is installed.
  for (const name of PACKAGES) {
    const manifest = JSON.parse(await readFile(join(root, 'packages', name, 'package.json'), 'utf8'));
    for (const dependency of Object.keys(manifest.dependencies ?? {})) optional.delete(dependency);
  }
  return { REQUIRED_PEERS: [...required], OPTIONAL_PEERS: [...optional] };
}
const { REQUIRED_PEERS, OPTIONAL_PEERS } = await peersOf();
const RUN_TIMEOUT_MS = 60_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

class CheckFailure extends Error {}

const fail = (message) => {
  throw new CheckFailure(message);
};

/** Runs a command; resolves with its output, rejects with it (and the command) when it fails or times out. */
function run(command, args, { cwd = root, env = process.env, timeoutMs = INSTALL_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new CheckFailure(`${command} ${args.join(' ')}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else
        reject(
          new CheckFailure(
            `${command} ${args.join(' ')} (in ${cwd}) ${signal ? `was killed (${signal}, limit ${timeoutMs} ms)` : `exited with ${code}`}:\n${output.trim()}`,
          ),
        );
    });
  });
}

/** The files of a .tgz (a gzipped ustar archive, as npm and pnpm write them), by path without the `package/` prefix. */
function readTarball(buffer) {
  const tar = gunzipSync(buffer);
  const files = new Map();
  const text = (start, length) => tar.toString('utf8', start, start + length).replace(/\0.*$/s, '');
  let paxPath;
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const name = text(offset, 100);
    if (!name) break;
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8);
    const type = text(offset + 156, 1);
    const prefix = text(offset + 345, 155);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    if (type === 'x') paxPath = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1];
    else if (type === '0' || type === '') {
      const path = paxPath ?? (prefix ? `${prefix}/${name}` : name);
      files.set(path.replace(/^package\//, ''), body);
      paxPath = undefined;
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Problems with one tarball's contents, as sentences. */
function tarballProblems(name, files, engines) {
  const problems = [];
  const manifestBytes = files.get('package.json');
  if (!manifestBytes) return ['package.json is missing'];
  const manifest = JSON.parse(manifestBytes.toString('utf8'));
  if (!Array.isArray(manifest.files) || manifest.files.length === 0)
    problems.push('package.json has no `files`');
  if (manifest.license !== 'MIT')
    problems.push(`package.json license is ${JSON.stringify(manifest.license)}, not MIT`);
  if (manifest.engines?.node !== engines)
    problems.push(`package.json engines.node is ${JSON.stringify(manifest.engines?.node)}, not ${engines}`);
  if (!/^\d+\.\d+\.\d+/.test(manifest.version ?? '')) problems.push('package.json has no version');
  const manifestText = manifestBytes.toString('utf8');
  if (manifestText.includes('workspace:')) problems.push('package.json still has a workspace: range');
  if (/"\.\/src\//.test(JSON.stringify(manifest.exports ?? {})))
    problems.push('package.json exports point at ./src (publishConfig was not applied)');
  for (const required of ['README.md', 'LICENSE'])
    if (!files.has(required)) problems.push(`${required} is missing`);
  for (const path of files.keys()) {
    if (/(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?[jt]sx?$/.test(path))
      problems.push(`ships a test: ${path}`);
    if (path.endsWith('.tsbuildinfo')) problems.push(`ships build info: ${path}`);
  }
  if (!COMPILED.has(name)) {
    for (const built of ['dist/index.html', 'dist/app.js', 'dist/app.css'])
      if (!files.has(built)) problems.push(`${built} is missing`);
    return problems;
  }
  const emitted = [...files.keys()].filter((path) => /^dist\/.*\.(js|d\.ts)$/.test(path));
  if (!emitted.some((path) => path === 'dist/index.js')) problems.push('dist/index.js is missing');
  for (const path of emitted) {
    const map = files.get(`${path}.map`);
    if (!map) {
      problems.push(`${path} has no ${posix.basename(path)}.map`);
      continue;
    }
    for (const source of JSON.parse(map.toString('utf8')).sources ?? []) {
      const resolved = posix.normalize(posix.join(posix.dirname(path), source));
      if (!files.has(resolved)) problems.push(`${path}.map points at ${resolved}, which is not shipped`);
    }
  }
  return problems;
}

/** The ```ts blocks of one `## ` section of a Markdown file. */
function codeBlocks(markdown, heading) {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) fail(`README.md has no section "${heading}"`);
  const next = markdown.indexOf('\n## ', start + heading.length + 2);
  const section = markdown.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
}

/** README.md's 20-line orchestrator as files of the temp project, with the few lines a test run needs changed. */
async function readmeOrchestrator() {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const [router, start] = codeBlocks(readme, '## A custom orchestrator in 20 lines');
  if (!router?.includes('class KeywordRouter') || !start?.includes('app.start('))
    fail(
      'README.md "A custom orchestrator in 20 lines" no longer has the KeywordRouter block and the app.start block',
    );
  const listening = start.replace(/\{ port: 3000 \}/, '{ port: 0 }');
  if (listening === start)
    fail('README.md\'s app.start block no longer listens with "{ port: 3000 }": adapt this script');
  const main = `import { App } from '@switchboard/runtime';
import { greeter, reverser } from './agents.js';
import { KeywordRouter } from './keyword-router.js';

${listening}
// Added by scripts/pack-install.mjs: one chat over HTTP, then the stop signal the README handles.
const response = await fetch(\`\${server.url}/v1/chat\`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'Please reverse stressed' }),
});
const body = (await response.json()) as { status?: string; reply?: string };
console.log(JSON.stringify({ http: response.status, status: body.status, reply: body.reply }));
process.kill(process.pid, 'SIGTERM');
`;
  return {
    'keyword-router.ts': router,
    // The agents main.ts imports, as the example the README links defines them.
    'agents.ts': await readFile(join(root, 'examples/custom-orchestrator/src/agents.ts'), 'utf8'),
    'main.ts': main,
  };
}

/** Each package README's first ```ts example. */
async function packageExamples() {
  const examples = [];
  for (const name of PACKAGES) {
    const readme = await readFile(join(root, 'packages', name, 'README.md'), 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    if (!code) fail(`packages/${name}/README.md has no \`\`\`ts example`);
    examples.push({ name, file: `${name}-readme.ts`, code });
  }
  return examples;
}

/** The console README's example, which listens until stopped, made to fetch its page and its script, then stop. */
function consoleServed(code) {
  const listening = code.replace(/\{ port: 3000 \}/, '{ port: 0 }');
  if (listening === code)
    fail('packages/console/README.md\'s example no longer listens with "{ port: 3000 }"');
  return `${listening}
// Added by scripts/pack-install.mjs: the page and its script come from the installed console, then stop.
const page = await fetch(\`\${server.url}/\`);
const script = await fetch(\`\${server.url}/console/app.js\`);
const html = (await page.text()).includes('<html') ? 'html' : 'not html';
console.log(\`page \${page.status} \${html}, app.js \${script.status}\`); // page 200 html, app.js 200
await server.close();
`;
}

/** Runs an emitted example with plain node; resolves with its stdout. */
function runExample(project, file) {
  return run(process.execPath, [join('out', file.replace(/\.ts$/, '.js'))], {
    cwd: project,
    timeoutMs: RUN_TIMEOUT_MS,
  });
}

/**
 * `switchboard init` from the installed CLI, in a new directory: its @switchboard dependencies
 * pointed at the tarballs (the versions are not published), then npm install, its tests, and
 * `switchboard eval` on its dataset.
 */
async function starterProject(project, starter, tarballDir, tarballs, npmEnv, step) {
  const bin = join(project, 'node_modules/@switchboard/cli/bin/switchboard.js');
  await run(process.execPath, [bin, 'init', starter], { cwd: project, timeoutMs: RUN_TIMEOUT_MS });
  const manifestPath = join(starter, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
  // npm finds an unpublished package only in a tarball named by the project: every one is named, the
  // starter's own in place, the ones only they depend on (console, say) as dependencies.
  for (const [name, file] of Object.entries(tarballs)) {
    const field = manifest.devDependencies?.[`@switchboard/${name}`] ? 'devDependencies' : 'dependencies';
    manifest[field][`@switchboard/${name}`] = `file:${join(tarballDir, file)}`;
  }
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: starter,
    env: { ...npmEnv, CI: 'true' },
  });
  const tested = await run('npm', ['test'], {
    cwd: starter,
    env: { ...npmEnv, CI: 'true', NO_COLOR: '1' },
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  const passed = /Tests\s+(\d+) passed/.exec(tested)?.[1];
  if (!passed) fail(`switchboard init's project: npm test printed no passed tests:\n${tested}`);
  step(`switchboard init: the starter project installed from the tarballs, npm test passed ${passed} tests`);
  const evaluated = await run(
    join(starter, 'node_modules/.bin/switchboard'),
    ['eval', 'src/app.ts', 'evals/routing.jsonl', '--stub-agents', '--min-accuracy', '1'],
    {
      cwd: starter,
      timeoutMs: RUN_TIMEOUT_MS,
    },
  );
  const headline = evaluated.split('\n').find((line) => line.startsWith('Accuracy'));
  if (!headline?.startsWith('Accuracy 100.0%'))
    fail(`switchboard eval on the starter's dataset printed:\n${evaluated}`);
  step(`switchboard eval on the starter's dataset: ${headline}`);
}

async function main() {
  const began = performance.now();
  const keep = process.argv.includes('--keep');
  const rootManifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  const runtimeManifest = JSON.parse(await readFile(join(root, 'packages/runtime/package.json'), 'utf8'));
  const engines = rootManifest.engines.node;
  const versionOf = (name) =>
    rootManifest.devDependencies[name] ??
    runtimeManifest.devDependencies[name] ??
    fail(`no pinned version of ${name}`);
  const step = (line) => console.log(`pack-install: ${line}`);

  await run('pnpm', ['build']);
  step('built the packages');

  const temp = await mkdtemp(join(tmpdir(), 'switchboard-pack-'));
  if (!relative(root, temp).startsWith('..')) fail(`the temp dir ${temp} is inside the workspace`);
  try {
    const tarballDir = join(temp, 'tarballs');
    const project = join(temp, 'project');
    await mkdir(tarballDir);
    await mkdir(join(project, 'src'), { recursive: true });

    const tarballs = {};
    for (const name of PACKAGES) {
      const before = new Set(await readdir(tarballDir));
      await run('pnpm', ['pack', '--pack-destination', tarballDir], { cwd: join(root, 'packages', name) });
      const [file] = (await readdir(tarballDir)).filter((entry) => !before.has(entry));
      if (!file) fail(`pnpm pack wrote no tarball for packages/${name}`);
      const bytes = await readFile(join(tarballDir, file));
      const files = readTarball(bytes);
      const problems = tarballProblems(name, files, engines);
      if (problems.length > 0) fail(`${file}:\n  ${problems.join('\n  ')}`);
      tarballs[name] = file;
      step(`${file}: ${files.size} files, ${Math.round(bytes.length / 1024)} KiB, contents ok`);
    }

    const manifest = {
      name: 'switchboard-pack-check',
      private: true,
      type: 'module',
      dependencies: {
        ...Object.fromEntries(
          PACKAGES.map((name) => [`@switchboard/${name}`, `file:../tarballs/${tarballs[name]}`]),
        ),
        ...Object.fromEntries(REQUIRED_PEERS.map((name) => [name, versionOf(name)])),
      },
      devDependencies: { typescript: versionOf('typescript'), '@types/node': versionOf('@types/node') },
    };
    await writeFile(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    // Settings pnpm passes to its children (npm_config_*) are not a user's: npm starts clean.
    const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: project,
      env: { ...npmEnv, CI: 'true' },
    });
    const stray = OPTIONAL_PEERS.filter((name) => existsSync(join(project, 'node_modules', name)));
    if (stray.length > 0) fail(`npm installed optional peers nobody asked for: ${stray.join(', ')}`);
    step(
      `npm installed the ${PACKAGES.length} tarballs with ${REQUIRED_PEERS.join(' and ')} as the only peers`,
    );

    const sources = { ...(await readmeOrchestrator()) };
    const examples = await packageExamples();
    for (const example of examples) sources[example.file] = example.code;
    sources['console-readme.ts'] = consoleServed(sources['console-readme.ts']);
    for (const [file, code] of Object.entries(sources)) await writeFile(join(project, 'src', file), code);
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
        skipLibCheck: false,
        types: ['node'],
        rootDir: 'src',
        outDir: 'out',
      },
      include: ['src'],
    };
    await writeFile(join(project, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
    const typeErrors = await run(join(project, 'node_modules/.bin/tsc'), ['-p', '.'], {
      cwd: project,
      timeoutMs: RUN_TIMEOUT_MS,
    }).then(
      () => [],
      (error) => error.message.split('\n').filter((line) => /error TS\d+/.test(line)),
    );
    // Known: the LLM parts' declarations name `openai` types, so without the optional `openai` peer they
    // only resolve under `skipLibCheck` (tsc --init's default). Anything else in a declaration is a failure.
    const openaiTypes = (line) =>
      /^node_modules\/@switchboard\/[^(]+\(\d+,\d+\): error TS2307: Cannot find module 'openai[/']/.test(
        line,
      );
    const unexpected = typeErrors.filter((line) => !openaiTypes(line));
    if (unexpected.length > 0)
      fail(
        `the README code does not type-check against the installed packages:\n  ${unexpected.join('\n  ')}`,
      );
    step(
      `tsc ${versionOf('typescript')} (strict, NodeNext) accepts ${Object.keys(sources).length} files` +
        ` (skipLibCheck off: ${typeErrors.length} declarations name openai types, the optional peer)`,
    );

    const output = await runExample(project, 'main.ts');
    const answer = JSON.parse(output.trim().split('\n').at(-1) ?? '{}');
    if (answer.http !== 200 || answer.status !== 'completed' || answer.reply !== 'desserts')
      fail(
        `README's custom orchestrator answered ${JSON.stringify(answer)}, expected 200 completed "desserts"`,
      );
    step(
      `README's custom orchestrator: POST /v1/chat "Please reverse stressed" -> 200 "desserts", then stopped`,
    );

    for (const { name, file } of examples) {
      const code = sources[file];
      // What it must print: the comment after its last `console.log(…);`.
      const expected = [...code.matchAll(/console\.log\(.*\);[ \t]*\/\/[ \t]*(.+)$/gm)].at(-1)?.[1]?.trim();
      if (!expected)
        fail(`packages/${name}/README.md's example does not say what it prints (console.log(…); // …)`);
      const printed = (await runExample(project, file)).trim();
      if (!printed.includes(expected))
        fail(`packages/${name}/README.md's example printed ${JSON.stringify(printed)}, expected ${expected}`);
      step(`packages/${name}/README.md example printed "${printed.split('\n').at(-1)}"`);
    }

    await starterProject(project, join(temp, 'starter'), tarballDir, tarballs, npmEnv, step);
  } finally {
    if (keep) console.log(`pack-install: kept ${temp}`);
    else await rm(temp, { recursive: true, force: true });
  }
  console.log(`pack-install: ok in ${((performance.now() - began) / 1000).toFixed(1)} s`);
}

main().catch((error) => {
  console.error(`pack-install: FAILED: ${error instanceof CheckFailure ? error.message : error.stack}`);
  process.exit(1);
});
