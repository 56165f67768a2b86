import type { ChurnResult } from './churn.js';
import { type ChurnHttpResult, measureChurnHttp } from './churn-http.js';
import type { FlatnessResult } from './history-flatness.js';
import { median } from './load.js';
import { runChild } from './run-child.js';
import { recordTarget } from './summary.js';

const fmt = (n: number | undefined, digits = 1) =>
  n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits);

/** Prints one target line; returns whether it was met. */
function target(
  label: string,
  measured: number | undefined,
  bound: number,
  atMost: boolean,
  note = '',
): void {
  const met = measured !== undefined && (atMost ? measured <= bound : measured >= bound);
  const verdict = measured === undefined ? 'n/a ' : met ? 'PASS' : 'MISS';
  console.log(
    `${verdict}  ${label.padEnd(46)} ${fmt(measured, 2).padStart(8)}  (target ${atMost ? '≤' : '≥'} ${bound})${note}`,
  );
}

/** The churn variant: in process (CPU, heap, Redis bytes) then over HTTP, printed with its targets. */
export async function runChurnBench({ seconds, concurrency }: { seconds: number; concurrency: number }) {
  const inProcess = await runChild<ChurnResult>('churn.ts', 'result', { execArgv: ['--expose-gc'] });
  const fresh = await freshProcessRatio();
  const http = await measureChurnHttp({ seconds, concurrency });
  printChurn(inProcess, http, { seconds, concurrency });
  console.log(
    `info  cpu per turn, each side in fresh processes: switchboard ${fresh.switchboard.map((v) => fmt(v)).join(', ')} µs, minimal ${fresh.minimal.map((v) => fmt(v, 2)).join(', ')} µs`,
  );
  recordTarget({
    label: 'CPU per turn in process ÷ a minimal hand-written turn (each in fresh processes)',
    value: fresh.ratio,
    bound: 8,
    kind: 'max',
    note: `medians of ${fresh.switchboard.length} processes a side`,
  });
}

function printChurn(
  result: ChurnResult,
  http: ChurnHttpResult[],
  { seconds, concurrency }: { seconds: number; concurrency: number },
): void {
  const { cpuMicrosPerTurn: cpu, heapBytesPerSession: heap, redis } = result;
  console.log(
    `\nChurn: a new session every 3 turns, three async agents, keyword routing (${result.turns} turns a side)\n`,
  );
  console.log('                            switchboard  hand-written  ratio');
  const row = (label: string, a: number | undefined, b: number | undefined, digits = 1) =>
    console.log(
      `${label.padEnd(27)} ${fmt(a, digits).padStart(11)}  ${fmt(b, digits).padStart(12)}  ${fmt(a !== undefined && b !== undefined ? a / b : undefined, 2).padStart(5)}×`,
    );
  row('cpu µs/turn (in process)', cpu?.switchboard, cpu?.baseline);
  row('  … against the minimal turn', cpu?.switchboard, cpu?.minimal);
  if (cpu?.agents !== undefined) {
    const agents = cpu.agents;
    console.log(`  of which the agents alone: ${fmt(agents)} µs/turn`);
    row('  cpu µs/turn beyond agents', cpu.switchboard - agents, cpu.baseline - agents);
  }
  const allocated = result.allocatedBytesPerTurn;
  row('heap B allocated/turn', allocated?.switchboard, allocated?.baseline, 0);
  row('  … against the minimal turn', allocated?.switchboard, allocated?.minimal, 0);
  row(`heap B/idle session (${heap?.sessions ?? '-'})`, heap?.switchboard, heap?.baseline, 0);
  if (heap) {
    console.log(
      `  switchboard right after the last turn, before compaction: ${fmt(heap.switchboardBusy, 0)} B`,
    );
    console.log(
      `  switchboard without the turn event log: ${fmt(heap.switchboardNoLog, 0)} B idle, ${fmt(heap.switchboardNoLogBusy, 0)} B right after the last turn`,
    );
  }
  row(
    `redis B/session (${redis?.switchboard.sessions ?? '-'})`,
    redis?.switchboard.bytesPerSession,
    redis?.baseline.bytesPerSession,
    0,
  );
  if (redis) {
    const kinds = Object.entries(redis.switchboard.byKind).map(([kind, bytes]) => `${kind} ${fmt(bytes, 0)}`);
    console.log(
      `  switchboard redis bytes by key: ${kinds.join(', ')}; keys/session ${fmt(redis.switchboard.keysPerSession, 2)}`,
    );
    console.log(
      `  session data ${fmt(redis.switchboard.sessionBytes, 0)} B + turn event log ${fmt(redis.switchboard.eventLogBytes, 0)} B (${fmt(redis.switchboard.eventLogBytes / 3, 0)} B a turn)`,
    );
  }
  if (result.redisError) console.log(`  redis skipped: ${result.redisError}`);
  console.log(`\nPOST /v1/chat under churn, ${concurrency} connections, ${seconds}s per server (loopback)\n`);
  console.log('server        req/s     p50 ms  p99 ms  p99/p50  cpu µs/req  rss MB  errors');
  for (const r of http) {
    console.log(
      `${r.name.padEnd(11)} ${fmt(r.requestsPerSecond, 0).padStart(7)}  ${fmt(r.p50Ms, 2).padStart(7)}  ${fmt(r.p99Ms, 2).padStart(6)}  ${fmt(r.p99Ms / r.p50Ms, 1).padStart(7)}  ${fmt(r.cpuMicrosPerRequest, 0).padStart(10)}  ${fmt(r.rssMb, 0).padStart(6)}  ${String(r.errors).padStart(6)}`,
    );
  }
  const byName = new Map(http.map((r) => [r.name, r]));
  const hono = byName.get('hono');
  const switchboard = byName.get('switchboard');
  const baseline = byName.get('baseline');
  console.log('');
  target('cpu per turn, switchboard ÷ hand-written', cpu && cpu.switchboard / cpu.baseline, 5, true);
  target(
    'cpu per turn, switchboard ÷ minimal turn',
    cpu?.minimal === undefined ? undefined : cpu.switchboard / cpu.minimal,
    8,
    true,
    `  (minimal ${fmt(cpu?.minimal, 2)} µs/turn)`,
  );
  target(
    'heap per idle 3-turn session, KiB',
    heap && heap.switchboard / 1024,
    1.5,
    true,
    `  (hand-written ${fmt(heap && heap.baseline / 1024, 2)} KiB)`,
  );
  target(
    'redis per 3-turn session, KB',
    redis && redis.switchboard.bytesPerSession / 1000,
    2,
    true,
    `  (hand-written ${fmt(redis && redis.baseline.bytesPerSession / 1000, 2)} KB; the event log's turns included)`,
  );
  // The two parts apart: the session's data lives for its idle time (24 h), the event log an hour after each turn.
  target(
    '  of which the session data, KB',
    redis && redis.switchboard.sessionBytes / 1000,
    2,
    true,
    '  (kept for the session idle time)',
  );
  console.log(
    `info    of which the turn event log, KB ${fmt(redis && redis.switchboard.eventLogBytes / 1000, 2).padStart(16)}  (3 turns, kept 1 h after each turn's last event; 0 after)`,
  );
  target('heap per 3-turn session right after its turns, KiB', heap && heap.switchboardBusy / 1024, 3, true);
  recordChurnTargets(result);
  target(
    'p99 ÷ p50 over HTTP under churn',
    switchboard && switchboard.p99Ms / switchboard.p50Ms,
    10,
    true,
    `  (hand-written ${fmt(baseline && baseline.p99Ms / baseline.p50Ms, 1)})`,
  );
  console.log(
    `info  req/s ÷ bare hono: switchboard ${fmt(switchboard && hono && switchboard.requestsPerSecond / hono.requestsPerSecond, 2)}, hand-written ${fmt(baseline && hono && baseline.requestsPerSecond / hono.requestsPerSecond, 2)}`,
  );
}

/** Switchboard's and the minimal turn's CPU per turn, each alone in fresh processes, alternating (3 rounds). */
async function freshProcessRatio(): Promise<{ switchboard: number[]; minimal: number[]; ratio: number }> {
  const turns = String(Math.min(Number(process.env.BENCH_CHURN_TURNS ?? 45_000), 30_000));
  const sides = { switchboard: [] as number[], minimal: [] as number[] };
  for (let round = 0; round < 3; round++)
    for (const side of ['switchboard', 'minimal'] as const) {
      const { cpuMicrosPerTurn } = await runChild<ChurnResult>('churn.ts', 'result', {
        env: { BENCH_CHURN_PARTS: `${side}-cpu`, BENCH_CHURN_TURNS: turns },
      });
      sides[side].push(Number(cpuMicrosPerTurn?.[side]));
    }
  return { ...sides, ratio: median(sides.switchboard) / median(sides.minimal) };
}

/** The churn rows of the run's summary table (bench/summary.ts). */
function recordChurnTargets({ cpuMicrosPerTurn: cpu, heapBytesPerSession: heap, redis }: ChurnResult): void {
  recordTarget({
    label: 'CPU per turn in process ÷ a minimal hand-written turn (alternating blocks, one process)',
    value: cpu?.minimal === undefined ? undefined : cpu.switchboard / cpu.minimal,
    bound: 8,
    kind: 'max',
    note:
      cpu &&
      `${fmt(cpu.switchboard)} ÷ ${fmt(cpu.minimal, 2)} µs; ÷ the fuller hand-written turn ${fmt(cpu.switchboard / cpu.baseline, 2)}×`,
  });
  recordTarget({
    label: "Redis bytes per 3-turn session (its turns' event log included)",
    value: redis && redis.switchboard.bytesPerSession / 1000,
    bound: 2,
    kind: 'max',
    unit: ' KB',
    note:
      redis &&
      `session data ${fmt(redis.switchboard.sessionBytes / 1000, 2)} KB + event log ${fmt(redis.switchboard.eventLogBytes / 1000, 2)} KB, kept 1 h`,
  });
  const withoutLog = (bytes: number | undefined) =>
    `${fmt(bytes === undefined ? undefined : bytes / 1024, 2)} KiB without the turn event log, a cache of 10,000 events in all spread here over ${heap?.sessions ?? '-'} sessions`;
  recordTarget({
    label: "heap per idle 3-turn session (after the store's compaction)",
    value: heap && heap.switchboard / 1024,
    bound: 1.5,
    kind: 'max',
    unit: ' KiB',
    note: withoutLog(heap?.switchboardNoLog),
  });
  recordTarget({
    label: 'heap per 3-turn session while active',
    value: heap && heap.switchboardBusy / 1024,
    bound: 3,
    kind: 'max',
    unit: ' KiB',
    note: withoutLog(heap?.switchboardNoLogBusy),
  });
}

/** The history variant: a turn on a 10 000-message session against a 10-message one, in memory and on Redis. */
export async function runHistoryBench(): Promise<void> {
  const { results, redisError } = await runChild<{ results: FlatnessResult[]; redisError?: string }>(
    'history-flatness.ts',
    'flatness',
  );
  console.log(
    `\nHistory: a turn on a ${results[0]?.messages ?? '-'}-message session against a 10-message one\n`,
  );
  console.log('store   turns  big cpu µs  small cpu µs  big wall µs  small wall µs');
  for (const r of results)
    console.log(
      `${r.store.padEnd(6)} ${String(r.turns).padStart(6)}  ${fmt(r.big.cpuMicros).padStart(10)}  ${fmt(r.small.cpuMicros).padStart(12)}  ${fmt(r.big.wallMicros).padStart(11)}  ${fmt(r.small.wallMicros).padStart(13)}`,
    );
  if (redisError) console.log(`  redis skipped: ${redisError}`);
  console.log('');
  for (const r of results) {
    // In memory the turn is CPU; on Redis the server's work shows in the wall time, so that is the one compared.
    const [measured, kind] =
      r.store === 'memory'
        ? [r.big.cpuMicros / r.small.cpuMicros, 'cpu']
        : [r.big.wallMicros / r.small.wallMicros, 'wall'];
    target(`turn on big ÷ small session, ${r.store} (${kind})`, measured, 1.2, true);
  }
}
