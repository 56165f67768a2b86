// `pnpm bench`: measures POST /v1/chat against a bare Hono JSON endpoint in the same run, loopback only,
// bounded in time and count. Each server runs in its own process; the load generator runs here.
//   BENCH_SECONDS (default 5)   measured seconds per variant, after 1 s of warm-up
//   BENCH_CONCURRENCY (default 32)
//   BENCH_ROUNDS (default 3)  rounds of the HTTP variants, each variant once per round (medians reported)
//   BENCH_VARIANTS  comma list of: hono, memory, honochat, logged, redis, traced, auth, nolog, stream, streamnolog,
//                   redisnolog, turn, fanout, churn, history, tracecost, eval, peers, streamrelay, regression
//                   (default all but regression, which needs BENCH_BASE)
//   streamrelay: an llmAgent's streamed turn relayed to SSE clients against a bare Hono relay (bench/streaming-relay.ts)
//   BENCH_TURNS (default 50000)  turns per variant of the in-process turn-overhead measurement
//   BENCH_FANOUT_RUNS (default 9)  turns of each kind of the supervisor fan-out measurement (bench/fan-out.ts)
//   BENCH_CHURN_TURNS (default 45000)  turns a side of the churn variant's in-process CPU measurement (bench/churn.ts)
//   BENCH_CHURN_SESSIONS (default 5000)  idle 3-turn sessions of its heap-per-session measurement
//   BENCH_CHURN_REDIS_SESSIONS (default 500)  3-turn sessions of its Redis-bytes-per-session measurement
//   BENCH_TRACE_TURNS (default 30000)  turns per process of the tracecost variant (bench/tracing-cost.ts): a traced
//     turn's CPU in process (Langfuse processor, OTLP to a loopback receiver) against an untraced one
//   BENCH_HISTORY_MESSAGES (default 10000), BENCH_HISTORY_TURNS (default 4000)  the history variant
//     (bench/history-flatness.ts): a turn on a session of that many messages against a 10-message one
//   BENCH_EVAL_CASES (default 5000), BENCH_EVAL_ROUNDS (default 7)  the eval variant (bench/eval-cost.ts): a
//     routing eval with stubbed agents against as many bare orchestrator.decide() calls
//   the peers variant: Switchboard, Mastra + Memory and LangGraph.js + MemorySaver in process (bench/peers, its
//     own npm install the first time; BENCH_PEERS_TURNS, BENCH_PEERS_SECONDS as for `pnpm bench:peers`)
//   BENCH_BASE  an earlier commit: the regression variant compares this checkout's turn with it (bench/regression.ts)
//   BENCH_NODE_FLAGS  flags for every measured process (space-separated), e.g. --no-allocation-site-pretenuring
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { runChurnBench, runHistoryBench } from './churn-report.js';
import { compileServer } from './compile.js';
import { runEvalBench } from './eval-report.js';
import { type FanOutResult, printFanOut } from './fan-out-report.js';
import { type LoadResult, median, runLoad } from './load.js';
import { runPeers } from './peers-report.js';
import { deleteKeys } from './redis-keys.js';
import { measureRegression, regressionRatio } from './regression.js';
import { measureRoundTrips } from './round-trips.js';
import { nodeFlags, runChild } from './run-child.js';
import { runStreamRelayBench } from './streaming-relay.js';
import { printSummary, recordTarget } from './summary.js';
import type { TracingCost } from './tracing-cost.js';

interface Variant {
  name: string;
  script: string;
  env?: Record<string, string>;
  /** Sent with every request of the variant's load. */
  headers?: Record<string, string>;
  /** Each request streams its turn's events (`stream: true`): a client listening to them. */
  stream?: boolean;
  /** The server's stdout goes nowhere (its request log's lines). */
  quiet?: boolean;
}

/** The API key of the `auth` variant (a throwaway, for loopback only). */
const BENCH_API_KEY = 'sk-bench-0123456789abcdef0123456789abcdef';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `switchboard-bench:${randomBytes(4).toString('hex')}:`;
const sink = fork(await compileServer('servers/otlp-sink.ts'), {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const sinkUrl = await new Promise<string>((resolve) =>
  sink.once('message', (message: { ready: string }) => resolve(message.ready)),
);
const VARIANTS: Variant[] = [
  { name: 'hono', script: 'servers/bare-hono.ts' },
  { name: 'memory', script: 'servers/switchboard.ts' },
  // The same app behind a plain Hono route calling app.chat: the baseline of the server's own route.
  { name: 'honochat', script: 'servers/hono-chat.ts' },
  // The memory variant with the app's default logger (pino at info): one request line per request, to /dev/null.
  { name: 'logged', script: 'servers/switchboard.ts', env: { BENCH_LOGGER: 'default' }, quiet: true },
  {
    name: 'redis',
    script: 'servers/switchboard.ts',
    env: { BENCH_STORE: 'redis', REDIS_URL: redisUrl, BENCH_KEY_PREFIX: keyPrefix },
  },
  { name: 'traced', script: 'servers/switchboard.ts', env: { BENCH_TRACING: '1', BENCH_OTLP_URL: sinkUrl } },
  {
    name: 'auth',
    script: 'servers/switchboard.ts',
    env: { BENCH_API_KEY },
    headers: { authorization: `Bearer ${BENCH_API_KEY}` },
  },
  // The turn event log's cost: the same turns without it, with a listening client, and on Redis.
  { name: 'nolog', script: 'servers/switchboard.ts', env: { BENCH_EVENT_LOG: 'off' } },
  { name: 'stream', script: 'servers/switchboard.ts', stream: true },
  { name: 'streamnolog', script: 'servers/switchboard.ts', env: { BENCH_EVENT_LOG: 'off' }, stream: true },
  {
    name: 'redisnolog',
    script: 'servers/switchboard.ts',
    env: { BENCH_STORE: 'redis', REDIS_URL: redisUrl, BENCH_KEY_PREFIX: keyPrefix, BENCH_EVENT_LOG: 'off' },
  },
];
const wanted = (
  process.env.BENCH_VARIANTS ??
  [
    ...VARIANTS.map((v) => v.name),
    'turn',
    'fanout',
    'churn',
    'history',
    'tracecost',
    'eval',
    'peers',
    'streamrelay',
  ].join(',')
).split(',');

type CpuReport = { cpu: NodeJS.CpuUsage; memory: number };

async function measure(
  variant: Variant,
): Promise<LoadResult & { cpuMicrosPerRequest: number; rssMb: number; clientMicrosPerRequest: number }> {
  const child = fork(await compileServer(variant.script), {
    execArgv: nodeFlags(),
    env: { ...process.env, ...variant.env, NODE_ENV: 'production' },
    stdio: ['ignore', variant.quiet ? 'ignore' : 'inherit', 'inherit', 'ipc'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: { ready?: string }) =>
        message.ready ? resolve(message.ready) : reject(new Error('bad message')),
      );
      child.once('exit', (code) => reject(new Error(`${variant.name} server exited with code ${code}`)));
    });
    const probe = () =>
      new Promise<CpuReport>((resolve) => {
        child.once('message', (message: CpuReport) => resolve(message));
        child.send('cpu');
      });
    const body = (index: number) =>
      JSON.stringify({
        message: `echo request ${index}`,
        sessionId: `bench-${index % 256}`,
        ...(variant.stream ? { stream: true } : {}),
      });
    const { headers } = variant;
    await runLoad({ url: `${url}/v1/chat`, concurrency, seconds: 1, maxRequests: 200_000, body, headers });
    const before = await probe();
    const clientBefore = process.cpuUsage();
    const result = await runLoad({
      url: `${url}/v1/chat`,
      concurrency,
      seconds,
      maxRequests: 2_000_000,
      body,
      headers,
    });
    const client = process.cpuUsage(clientBefore);
    const after = await probe();
    const cpuMicros = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
    return {
      ...result,
      cpuMicrosPerRequest: cpuMicros / result.requests,
      clientMicrosPerRequest: (client.user + client.system) / result.requests,
      rssMb: after.memory / 1e6,
    };
  } finally {
    child.kill('SIGTERM');
  }
}

interface TurnCost {
  name: string;
  cpuMicrosPerTurn: number;
  wallMicrosPerTurn: number;
  retainedBytesPerTurn: number;
}

/** The in-process turn cost (no HTTP): Switchboard against a hand-written turn, compiled, in a child process. */
async function measureTurnOverhead(): Promise<TurnCost[]> {
  const child = fork(await compileServer('turn-overhead.ts'), {
    execArgv: ['--expose-gc', ...nodeFlags()],
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    return await new Promise<TurnCost[]>((resolve, reject) => {
      child.once('message', (message: { results: TurnCost[] }) => resolve(message.results));
      child.once('exit', (code) => reject(new Error(`turn-overhead exited with code ${code}`)));
    });
  } finally {
    child.kill('SIGTERM');
  }
}

/** The wall time of a supervisor's fan-out against running its branches one after the other, compiled, in a child process. */
async function measureFanOut(): Promise<FanOutResult> {
  const child = fork(await compileServer('fan-out.ts'), {
    execArgv: nodeFlags(),
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    return await new Promise<FanOutResult>((resolve, reject) => {
      child.once('message', (message: { result: FanOutResult }) => resolve(message.result));
      child.once('exit', (code) => reject(new Error(`fan-out exited with code ${code}`)));
    });
  } finally {
    child.kill('SIGTERM');
  }
}

type Measured = Awaited<ReturnType<typeof measure>>;
// Every variant once per round, round after round, so that a noisy stretch of the machine hits one round of
// each rather than all of one variant; a ratio is taken within each round, and the median round reported.
const runs = new Map<string, Measured[]>();
for (let round = 0; round < rounds; round++) {
  for (const variant of VARIANTS.filter((v) => wanted.includes(v.name))) {
    try {
      const measured = await measure(variant);
      runs.set(variant.name, [...(runs.get(variant.name) ?? []), measured]);
    } catch (error) {
      console.error(`[bench] ${variant.name} skipped: ${(error as Error).message}`);
    }
  }
}
/** Each field's median over the rounds. */
const medianRun = (measured: Measured[]): Measured => {
  const of = (field: keyof Measured) => median(measured.map((run) => Number(run[field])));
  return {
    ...(measured[0] as Measured),
    requests: of('requests'),
    requestsPerSecond: of('requestsPerSecond'),
    p50Ms: of('p50Ms'),
    p99Ms: of('p99Ms'),
    errors: measured.reduce((sum, run) => sum + run.errors, 0),
    cpuMicrosPerRequest: of('cpuMicrosPerRequest'),
    rssMb: of('rssMb'),
    clientMicrosPerRequest: of('clientMicrosPerRequest'),
  };
};
const results = new Map([...runs].map(([name, measured]) => [name, medianRun(measured)]));

const turnCosts = wanted.includes('turn') ? await measureTurnOverhead() : [];
const fanOut = wanted.includes('fanout') ? await measureFanOut() : undefined;

await deleteKeys(redisUrl, keyPrefix).catch(() => {});
const roundTripsPerTurn = wanted.includes('redis')
  ? await measureRoundTrips(redisUrl).catch(() => undefined)
  : undefined;
const exportRequests = await new Promise<number>((resolve) => {
  sink.once('message', (message: { count: number }) => resolve(message.count));
  sink.send('count');
});
sink.kill('SIGTERM');

const fmt = (n: number | undefined, digits = 1) =>
  n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits);
console.log(
  `\nPOST /v1/chat, ${concurrency} connections, ${seconds}s per variant (loopback), medians of ${rounds} rounds\n`,
);
console.log('variant   req/s     p50 ms  p99 ms  cpu µs/req  rss MB  errors  client µs/req');
for (const [name, r] of results) {
  console.log(
    `${name.padEnd(9)} ${fmt(r.requestsPerSecond, 0).padStart(7)}  ${fmt(r.p50Ms, 2).padStart(6)}  ${fmt(r.p99Ms, 2).padStart(6)}  ${fmt(r.cpuMicrosPerRequest, 0).padStart(10)}  ${fmt(r.rssMb, 0).padStart(6)}  ${String(r.errors).padStart(6)}  ${fmt(r.clientMicrosPerRequest, 0).padStart(13)}`,
  );
}
// The median of the ratios within each round, with their range.
const roundRatios = (a: string, b: string) => {
  const x = runs.get(a) ?? [];
  const y = runs.get(b) ?? [];
  const count = Math.min(x.length, y.length);
  return Array.from(
    { length: count },
    (_, round) => (x[round] as Measured).requestsPerSecond / (y[round] as Measured).requestsPerSecond,
  );
};
const ratio = (a: string, b: string) => {
  const each = roundRatios(a, b);
  return each.length > 0 ? median(each) : undefined;
};
const spread = (a: string, b: string) => {
  const each = roundRatios(a, b);
  return each.length > 1 ? `, rounds ${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)}` : '';
};
console.log('');
console.log(
  `ratio memory/hono   = ${fmt(ratio('memory', 'hono'), 2)}  (target ≥ 0.60${spread('memory', 'hono')})`,
);
console.log(
  `ratio redis/memory  = ${fmt(ratio('redis', 'memory'), 2)}  (target ≥ 0.50${spread('redis', 'memory')}; Redis round trips per single-hop turn: ${fmt(roundTripsPerTurn, 2)}, target ≤ 2)`,
);
if (wanted.includes('redis')) {
  recordTarget({
    label: 'Redis ÷ memory over HTTP (req/s)',
    value: ratio('redis', 'memory'),
    bound: 0.5,
    kind: 'min',
    note: spread('redis', 'memory').replace(/^, /, ''),
  });
  recordTarget({
    label: 'awaited Redis round trips per single-hop turn',
    value: roundTripsPerTurn,
    // Two; a pipeline the kernel splits across two reads counts twice, hence the 2 %.
    bound: 2.04,
    kind: 'max',
    unit: '',
  });
}
console.log(
  `ratio auth/memory   = ${fmt(ratio('auth', 'memory'), 2)}  (info: requests with an API key against none${spread('auth', 'memory')})`,
);
console.log(
  `ratio logged/memory = ${fmt(ratio('logged', 'memory'), 2)}  (info: the default request log, one pino line per request, against none${spread('logged', 'memory')})`,
);
/** A ratio against its target, PASS or MISS (nothing when a side was not measured). */
const target = (name: string, a: string, b: string, minimum: number, what: string) => {
  const value = ratio(a, b);
  if (value === undefined) return;
  console.log(
    `ratio ${name.padEnd(15)} = ${fmt(value, 2)}  (target ≥ ${minimum.toFixed(2)} ${value >= minimum ? 'PASS' : 'MISS'}: ${what}${spread(a, b)})`,
  );
};
target('memory/honochat', 'memory', 'honochat', 0.9, '/v1/chat against a plain Hono route calling app.chat');
if (wanted.includes('memory') && wanted.includes('honochat'))
  recordTarget({
    label: '/v1/chat ÷ a plain Hono route calling app.chat on the same app (req/s)',
    value: ratio('memory', 'honochat'),
    bound: 0.9,
    kind: 'min',
    note: spread('memory', 'honochat').replace(/^, /, ''),
  });
target('log/nolog', 'memory', 'nolog', 0.95, 'the in-memory turn event log, no client listening');
target('stream/nolog', 'stream', 'streamnolog', 0.95, 'the in-memory log, with a client listening (SSE)');
target('redis/nolog', 'redis', 'redisnolog', 0.9, 'the Redis event log (one script call per batch)');
console.log(
  `ratio traced/memory = ${fmt(ratio('traced', 'memory'), 2)}  (target ≥ 0.60${spread('traced', 'memory')}; ${exportRequests} OTLP export requests received)`,
);

if (turnCosts.length > 0) {
  const baseline = turnCosts[0]!;
  console.log('\nOne turn in-process (no HTTP), 256 sessions, history kept in memory\n');
  console.log('variant               cpu µs/turn  wall µs/turn  retained B/turn  cpu vs hand-written');
  for (const cost of turnCosts) {
    console.log(
      `${cost.name.padEnd(21)} ${fmt(cost.cpuMicrosPerTurn).padStart(11)}  ${fmt(cost.wallMicrosPerTurn).padStart(12)}  ${fmt(cost.retainedBytesPerTurn, 0).padStart(15)}  ${fmt(cost.cpuMicrosPerTurn / baseline.cpuMicrosPerTurn, 2).padStart(18)}×`,
    );
  }
}

if (fanOut && !printFanOut(fanOut)) process.exitCode = 1;
if (wanted.includes('churn')) await runChurnBench({ seconds, concurrency });
if (wanted.includes('history')) await runHistoryBench();
if (wanted.includes('tracecost')) {
  console.log(
    '\nTracing cost in process: churn turns traced (Langfuse processor, OTLP to a loopback receiver) vs untraced\n',
  );
  const sinkScript = await compileServer('servers/otlp-sink.ts');
  // Each side in a process of its own, one that traces and one that does not, as in production (turns traced
  // and untraced in one process leave their shared functions compiled for both, which neither kind of process
  // runs); five rounds, each running every configuration once, and the median of each: from one process to
  // the next the same configuration varies by up to half on this kind of machine.
  // spans-only: recording the spans, no Langfuse processor; dropped: the Langfuse processor and its batching
  // too, the batches then dropped (what tracing costs before the export, a floor for the two exports); the
  // last, the default export with a tenth of the turns sampled (LANGFUSE_SAMPLE_RATE=0.1).
  const runs = [
    { label: 'spans-only', protocol: 'spans-only' },
    { label: 'dropped', protocol: 'dropped' },
    { label: 'http/json', protocol: 'http/json' },
    { label: 'http/protobuf', protocol: 'http/protobuf' },
    { label: 'protobuf, 10%', protocol: 'http/protobuf', sampleRate: '0.1' },
  ];
  const measured = runs.map(() => ({ cpu: [] as number[], exportRequests: [] as number[] }));
  const untraced: number[] = [];
  const side = (only: 'traced' | 'untraced', protocol: string, sampleRate?: string) =>
    runChild<TracingCost>('tracing-cost.ts', 'result', {
      env: {
        BENCH_TRACE_ONLY: only,
        BENCH_TRACE_PROTOCOL: protocol,
        BENCH_OTLP_SINK_SCRIPT: sinkScript,
        ...(sampleRate ? { BENCH_TRACE_SAMPLE_RATE: sampleRate } : {}),
      },
    });
  for (let round = 0; round < 5; round++) {
    untraced.push((await side('untraced', 'dropped')).cpuMicrosPerTurn.untraced);
    for (const [index, { protocol, sampleRate }] of runs.entries()) {
      const cost = await side('traced', protocol, sampleRate);
      measured[index]?.cpu.push(cost.cpuMicrosPerTurn.traced);
      measured[index]?.exportRequests.push(cost.exportRequests);
    }
  }
  const base = median(untraced);
  console.log(
    `untraced turn: ${base.toFixed(1)} µs (median of ${untraced.map((value) => value.toFixed(1)).join(', ')})`,
  );
  for (const [index, { label, protocol, sampleRate }] of runs.entries()) {
    const { cpu, exportRequests } = measured[index] as { cpu: number[]; exportRequests: number[] };
    const traced = median(cpu);
    const ratio = traced / base;
    // The default export (protobuf) is the target; JSON, the floors and sampling are there to read it by.
    const target = protocol === 'http/protobuf' && !sampleRate;
    const verdict = target ? (ratio <= 3.5 ? 'PASS' : 'MISS') : 'info';
    console.log(
      `${verdict}  traced ÷ untraced cpu per turn, ${label.padEnd(13)} ${ratio.toFixed(2)}  (${target ? 'target ≤ 3.5; ' : ''}${traced.toFixed(1)} µs, runs ${cpu.map((value) => value.toFixed(1)).join(', ')}; ${median(exportRequests)} export requests)`,
    );
    if (target)
      recordTarget({
        label: 'traced with a protobuf export ÷ untraced, in process (CPU per turn)',
        value: ratio,
        bound: 3.5,
        kind: 'max',
        note: `${traced.toFixed(1)} ÷ ${base.toFixed(1)} µs, medians of 5 processes each`,
      });
  }
}
if (wanted.includes('eval') && !(await runEvalBench())) process.exitCode = 1;
if (wanted.includes('peers')) await runPeers();
if (wanted.includes('streamrelay') && !(await runStreamRelayBench({ seconds, rounds }))) process.exitCode = 1;
const base = process.env.BENCH_BASE;
if (wanted.includes('regression') || base) {
  if (!base) console.log('\nregression: set BENCH_BASE to an earlier commit to compare against it');
  else {
    const regression = await measureRegression(base);
    const rounds = (values: number[]) => values.map((value) => value.toFixed(1)).join(', ');
    console.log(
      `\nThis checkout against ${regression.base}, CPU µs per churn turn in process (fresh processes)\n`,
    );
    for (const kind of ['untraced', 'traced'] as const) {
      const sides = regression[kind];
      console.log(`${kind.padEnd(9)} old ${rounds(sides.old)}  new ${rounds(sides.new)}`);
      recordTarget({
        label: `${kind} turn, this checkout ÷ ${regression.base} (CPU, in process)`,
        value: regressionRatio(sides),
        bound: 1.05,
        kind: 'max',
        note: 'no regression, with 5 % for noise',
      });
    }
  }
}
printSummary();
