// `pnpm bench:peers`: the same mock turn through Switchboard, Mastra and LangGraph.js, in one run, each subject
// in its own process (compiled first, so no TypeScript loader sits on the measured path), loopback only.
//   BENCH_PEERS_TURNS (default 30000)     in-process turns per subject, at most
//   BENCH_PEERS_SECONDS (default 5)       in-process time cap and measured HTTP seconds per subject
//   BENCH_PEERS_CONCURRENCY (default 16)  HTTP callers, each with its own sessions
//   BENCH_PEERS_ONLY                      comma list of subject keys to run (default all)
//   BENCH_PEERS_HTTP (default 1)          0: in process only (what `pnpm bench` compares)
//   BENCH_PEERS_JSON                      a file to write the rows to as JSON as well (for `pnpm bench`)

import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { compileServer } from '../../compile.js';
import type { InProcessResult } from './child.js';
import { type PeerLoadResult, runPeerLoad } from './load.js';

interface SubjectSpec {
  key: string;
  label: string;
  child: 'switchboard' | 'mastra' | 'langgraph';
  frameworkMemory: boolean;
}

const SUBJECTS: SubjectSpec[] = [
  { key: 'switchboard', label: 'Switchboard (in-memory store)', child: 'switchboard', frameworkMemory: true },
  { key: 'mastra', label: 'Mastra Agent, history in a Map', child: 'mastra', frameworkMemory: false },
  { key: 'mastra-memory', label: 'Mastra Agent + Memory', child: 'mastra', frameworkMemory: true },
  { key: 'langgraph', label: 'LangGraph.js, history in a Map', child: 'langgraph', frameworkMemory: false },
  {
    key: 'langgraph-saver',
    label: 'LangGraph.js + MemorySaver',
    child: 'langgraph',
    frameworkMemory: true,
  },
];

// Enough for a subject whose turns take tens of µs to be measured past its JIT warm-up (Switchboard: 57 µs a
// turn over its first 5,000 measured turns, 36 µs over 30,000); the seconds bound the slower subjects.
const turns = Number(process.env.BENCH_PEERS_TURNS ?? 30_000);
const seconds = Number(process.env.BENCH_PEERS_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_PEERS_CONCURRENCY ?? 16);
const only = process.env.BENCH_PEERS_ONLY?.split(',');
const withHttp = process.env.BENCH_PEERS_HTTP !== '0';
if (!(turns >= 3 && seconds > 0 && seconds <= 60 && concurrency >= 1 && concurrency <= 256))
  throw new Error('BENCH_PEERS_TURNS ≥ 3, 0 < BENCH_PEERS_SECONDS ≤ 60, 1 ≤ BENCH_PEERS_CONCURRENCY ≤ 256');

const children = new Set<ChildProcess>();
// Self-stopping: whatever happens, the run ends (generous for 5 subjects at the chosen seconds).
const watchdog = setTimeout(
  () => {
    console.error('bench:peers took too long; stopping');
    for (const child of children) child.kill();
    process.exit(1);
  },
  (60 + SUBJECTS.length * (3 * seconds + 30)) * 1000,
);
watchdog.unref();

/** Peers are bundled into bench/peers/.build so that their npm imports resolve from bench/peers/node_modules. */
async function compilePeer(name: 'mastra' | 'langgraph'): Promise<string> {
  const outfile = fileURLToPath(new URL(`../.build/${name}.mjs`, import.meta.url));
  await build({
    entryPoints: [fileURLToPath(new URL(`children/${name}.ts`, import.meta.url))],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

function start(script: string, env: Record<string, string>): ChildProcess {
  const child = fork(script, {
    execArgv: ['--expose-gc'],
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function nextMessage<T>(child: ChildProcess, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${what}: child exited with code ${code}`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as T);
    });
  });
}

async function inProcess(script: string, spec: SubjectSpec): Promise<InProcessResult> {
  const child = start(script, { PEER_MODE: 'in-process', PEER_MEMORY: spec.frameworkMemory ? '1' : '0' });
  const { result } = await nextMessage<{ result: InProcessResult }>(child, `${spec.key} in process`);
  return result;
}

async function overHttp(
  script: string,
  spec: SubjectSpec,
): Promise<PeerLoadResult & { serverCpuMicrosPerRequest: number }> {
  const child = start(script, { PEER_MODE: 'http', PEER_MEMORY: spec.frameworkMemory ? '1' : '0' });
  try {
    const { ready } = await nextMessage<{ ready: string }>(child, `${spec.key} over HTTP`);
    const url = `${ready}/v1/chat`;
    const probe = async () => {
      const reply = nextMessage<{ cpu: NodeJS.CpuUsage }>(child, `${spec.key} CPU probe`);
      child.send('cpu');
      return (await reply).cpu;
    };
    await runPeerLoad({ url, concurrency, seconds: 1, maxRequests: 100_000, sessionPrefix: 'warm' });
    const before = await probe();
    const result = await runPeerLoad({
      url,
      concurrency,
      seconds,
      maxRequests: 1_000_000,
      sessionPrefix: 'run',
    });
    const after = await probe();
    const cpu = after.user - before.user + (after.system - before.system);
    return { ...result, serverCpuMicrosPerRequest: cpu / result.requests };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    child.kill();
  }
}

const scripts = {
  switchboard: await compileServer('peers/src/children/switchboard.ts'),
  mastra: await compilePeer('mastra'),
  langgraph: await compilePeer('langgraph'),
};

interface Row {
  spec: SubjectSpec;
  local: InProcessResult;
  http: PeerLoadResult & { serverCpuMicrosPerRequest: number };
}
/** What a run without HTTP shows in the HTTP columns. */
const NO_HTTP = {
  requests: 0,
  errors: 0,
  requestsPerSecond: Number.NaN,
  p50Ms: Number.NaN,
  p99Ms: Number.NaN,
  serverCpuMicrosPerRequest: Number.NaN,
} as PeerLoadResult & { serverCpuMicrosPerRequest: number };
const rows: Row[] = [];
for (const spec of SUBJECTS.filter((subject) => !only || only.includes(subject.key))) {
  process.stderr.write(`bench:peers: ${spec.label}…\n`);
  const local = await inProcess(scripts[spec.child], spec);
  const http = withHttp ? await overHttp(scripts[spec.child], spec) : NO_HTTP;
  rows.push({ spec, local, http });
}
clearTimeout(watchdog);

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const baseline = rows.find((row) => row.spec.key === 'switchboard');
/** `value` against Switchboard's, as "×N": above 1 means this subject spends more (or serves fewer). */
const times = (value: number, base: number | undefined) =>
  base === undefined || !Number.isFinite(value / base)
    ? ''
    : ` (×${(value / base).toFixed(value / base < 10 ? 1 : 0)})`;

console.log(
  `\nbench:peers — Node ${process.version}, ${turns} turns max / ${seconds} s per subject in process, ` +
    `HTTP ${seconds} s × ${concurrency} callers; a new session every 3 turns. ` +
    `(×N) = this subject's figure over Switchboard's: for turns/s and req/s, Switchboard's over this one's.\n`,
);
console.log(
  '| subject | turns/s | CPU µs/turn | p99 ms | heap/session KiB | HTTP req/s | HTTP p99 ms | server CPU µs/req | errors |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const { spec, local, http } of rows) {
  const base = baseline && spec.key !== 'switchboard' ? baseline : undefined;
  console.log(
    `| ${spec.label} ` +
      `| ${fixed(local.turnsPerSecond)}${times(base?.local.turnsPerSecond ?? Number.NaN, local.turnsPerSecond)} ` +
      `| ${fixed(local.cpuMicrosPerTurn)}${times(local.cpuMicrosPerTurn, base?.local.cpuMicrosPerTurn)} ` +
      `| ${fixed(local.p99Ms, 2)}${times(local.p99Ms, base?.local.p99Ms)} ` +
      `| ${fixed(local.heapBytesPerSession / 1024, 1)}${times(local.heapBytesPerSession, base?.local.heapBytesPerSession)} ` +
      `| ${fixed(http.requestsPerSecond)}${times(base?.http.requestsPerSecond ?? Number.NaN, http.requestsPerSecond)} ` +
      `| ${fixed(http.p99Ms, 1)}${times(http.p99Ms, base?.http.p99Ms)} ` +
      `| ${fixed(http.serverCpuMicrosPerRequest)}${times(http.serverCpuMicrosPerRequest, base?.http.serverCpuMicrosPerRequest)} ` +
      `| ${local.wrongReplies + http.errors} |`,
  );
}
if (process.env.BENCH_PEERS_JSON)
  writeFileSync(
    process.env.BENCH_PEERS_JSON,
    JSON.stringify(rows.map(({ spec, local, http }) => ({ key: spec.key, label: spec.label, local, http }))),
  );
for (const { spec, local } of rows)
  if (local.firstWrong) console.error(`${spec.label}: first wrong reply`, local.firstWrong);
const failed = rows.some((row) => row.local.wrongReplies + row.http.errors > 0);
if (failed) console.error('\nbench:peers: some turns failed or got a wrong reply (errors column).');
process.exitCode = failed ? 1 : 0;
