// The churn bench in process (no HTTP): Switchboard's keyword turn (App.chat, in memory, untraced) against the
// hand-written turn of bench/baseline-turn.ts, on traffic that looks like traffic: a new session every 3 turns,
// agents that await. Run compiled in a child process by bench/run.ts (`--expose-gc`), which prints the
// results it sends over IPC; run alone it prints them as JSON.
//   BENCH_CHURN_TURNS (default 45000)    turns of each side for CPU per turn, in interleaved blocks
//   BENCH_CHURN_SESSIONS (default 5000)   idle 3-turn sessions created for heap per session
//   BENCH_CHURN_REDIS_SESSIONS (default 500)  3-turn sessions written to Redis for bytes per session
//   BENCH_CHURN_PARTS (default cpu,heap,redis)  which measurements to run; `minimal-cpu` runs only the minimal
//     turn's side of `cpu` (bench/churn-report.ts sets it against `switchboard-cpu`, each in a fresh process);
//     `switchboard-cpu` runs only
//     Switchboard's side of `cpu` (for `node --cpu-prof`; see bench/profile-summary.ts)
//   BENCH_CHURN_IDLE_MS (default 37000)  how long the sessions sit idle before the heap is measured again: the
//     in-memory store compacts sessions idle for 30 s (its default `compactAfterSeconds`), checked every 5 s
//   BENCH_CHURN_SNAPSHOT  a directory: write heap snapshots before and after the idle sessions there
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { type BaselineTurn, createBaselineTurn } from './baseline-turn.js';
import { allocatedBytes } from './churn-alloc.js';
import { measureRedisFootprint, type RedisFootprint } from './churn-redis.js';
import {
  AGENT_WORK,
  churnApp,
  churnMessage,
  churnSession,
  KEYWORDS,
  TURNS_PER_SESSION,
} from './churn-workload.js';
import { createMinimalTurn } from './minimal-turn.js';

/** What the in-process churn measurements found, for bench/run.ts to print. */
export interface ChurnResult {
  turns: number;
  /**
   * `baseline`: the hand-written turn that stores what Switchboard stores (bench/baseline-turn.ts);
   * `minimal`: the leanest hand-written turn (bench/minimal-turn.ts); `agents`: the three agents alone,
   * called the same way: the floor under every side.
   */
  cpuMicrosPerTurn?: { switchboard: number; baseline: number; minimal?: number; agents?: number };
  /** Heap bytes allocated per turn (kept or garbage), counted in a pass of its own after the CPU blocks. */
  allocatedBytesPerTurn?: { switchboard: number; baseline: number; minimal: number };
  /** `switchboard` once the sessions have been idle; `switchboardBusy` right after their last turn. */
  heapBytesPerSession?: {
    switchboard: number;
    switchboardBusy: number;
    /** The same without the turn event log (a cache bounded in all, not per session). */
    switchboardNoLog: number;
    switchboardNoLogBusy: number;
    baseline: number;
    sessions: number;
  };
  redis?: { switchboard: RedisFootprint; baseline: RedisFootprint };
  redisError?: string;
}

type Turn = (sessionId: string, message: string) => Promise<unknown>;

const BLOCK = 10_000;

function switchboardTurn(options: Parameters<typeof churnApp>[0] = {}): {
  turn: Turn;
  close: () => Promise<void>;
} {
  const app = churnApp(options);
  return {
    turn: async (sessionId, message) => {
      const result = await app.chat({ sessionId, message });
      if (result.status !== 'completed') throw new Error(`churn turn ended ${result.status}`);
    },
    close: () => app.close(),
  };
}

/** Runs turns `from`..`to` of the workload on `turn` and returns the CPU µs they took. */
async function cpuOf(turn: Turn, prefix: string, from: number, to: number): Promise<number> {
  const before = process.cpuUsage();
  for (let index = from; index < to; index++) await turn(churnSession(prefix, index), churnMessage(index));
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

/**
 * CPU per turn of every side over `turns` turns each, in alternating blocks so
 * that a noisy neighbour on the machine hits all alike; then, in a pass of its
 * own, the heap bytes each side allocates per turn. Each side keeps its
 * sessions (up to the in-memory cap), so its heap grows as under real churn.
 */
async function measureCpu(
  turns: number,
): Promise<Pick<ChurnResult, 'cpuMicrosPerTurn' | 'allocatedBytesPerTurn'>> {
  const switchboard = switchboardTurn();
  // The same agent each turn as the routed sides call, picked by the keyword the message names.
  const agentsAlone: Turn = (_, message) =>
    AGENT_WORK[KEYWORDS.find((keyword) => message.includes(keyword)) ?? 'billing'](message);
  const sides: Record<'baseline' | 'minimal' | 'switchboard' | 'agents', Turn> = {
    baseline: createBaselineTurn() satisfies BaselineTurn,
    minimal: createMinimalTurn(),
    switchboard: switchboard.turn,
    agents: agentsAlone,
  };
  const names = Object.keys(sides) as Array<keyof typeof sides>;
  const micros = { baseline: 0, minimal: 0, switchboard: 0, agents: 0 };
  const warmUp = 6_000;
  for (const name of names) await cpuOf(sides[name], 'warm', 0, warmUp);
  for (let from = 0; from < turns; from += BLOCK) {
    const to = Math.min(turns, from + BLOCK);
    for (const name of names) micros[name] += await cpuOf(sides[name], 'cpu', from, to);
  }
  // Turns on new sessions past the CPU blocks', so that each side keeps growing as under churn.
  const allocTurns = Math.min(turns, 9_000);
  const allocated = { baseline: 0, minimal: 0, switchboard: 0 };
  for (const name of ['baseline', 'minimal', 'switchboard'] as const)
    allocated[name] =
      (await allocatedBytes(async () => {
        await cpuOf(sides[name], 'alloc', 0, allocTurns);
      })) / allocTurns;
  await switchboard.close();
  return {
    cpuMicrosPerTurn: {
      switchboard: micros.switchboard / turns,
      baseline: micros.baseline / turns,
      minimal: micros.minimal / turns,
      agents: micros.agents / turns,
    },
    allocatedBytesPerTurn: allocated,
  };
}

function heapUsedAfterGc(): number {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap bytes one 3-turn session keeps: heap after `sessions` sessions minus heap before, over `sessions`,
 * right after the last turn (`busy`) and once they sat idle for `idleMs` (`idle`).
 */
async function heapPerSession(
  turn: Turn,
  sessions: number,
  idleMs: number,
  snapshotPrefix?: string,
): Promise<{ busy: number; idle: number }> {
  // A few sessions first, so that lazily built state (compiled code, caches) is not counted.
  for (let index = 0; index < 30; index++) await turn(churnSession('heap-warm', index), churnMessage(index));
  if (snapshotPrefix) writeHeapSnapshot(`${snapshotPrefix}-before.heapsnapshot`);
  const before = heapUsedAfterGc();
  for (let index = 0; index < sessions * TURNS_PER_SESSION; index++)
    await turn(churnSession('heap', index), churnMessage(index));
  const busy = heapUsedAfterGc();
  if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
  const idle = heapUsedAfterGc();
  if (snapshotPrefix) writeHeapSnapshot(`${snapshotPrefix}-after.heapsnapshot`);
  return { busy: (busy - before) / sessions, idle: (idle - before) / sessions };
}

async function measureHeap(sessions: number, idleMs: number, snapshotDir?: string) {
  // The hand-written turn keeps its sessions as they are: waiting changes nothing there.
  const baseline = await heapPerSession(
    createBaselineTurn(),
    sessions,
    0,
    snapshotDir && join(snapshotDir, 'baseline'),
  );
  const switchboard = switchboardTurn();
  const result = await heapPerSession(
    switchboard.turn,
    sessions,
    idleMs,
    snapshotDir && join(snapshotDir, 'switchboard'),
  );
  await switchboard.close();
  // The same without the turn event log: its events are a cache bounded in all (10,000 events by default,
  // whatever the number of sessions), so over a few thousand sessions it shows as a cost per session.
  const withoutLog = switchboardTurn({ eventLog: false });
  const noLog = await heapPerSession(withoutLog.turn, sessions, idleMs);
  await withoutLog.close();
  return {
    switchboard: result.idle,
    switchboardBusy: result.busy,
    switchboardNoLog: noLog.idle,
    switchboardNoLogBusy: noLog.busy,
    baseline: baseline.idle,
    sessions,
  };
}

const turns = Number(process.env.BENCH_CHURN_TURNS ?? 45_000);
const sessions = Number(process.env.BENCH_CHURN_SESSIONS ?? 5_000);
const redisSessions = Number(process.env.BENCH_CHURN_REDIS_SESSIONS ?? 500);
const parts = (process.env.BENCH_CHURN_PARTS ?? 'cpu,heap,redis').split(',');
if (!globalThis.gc && parts.includes('heap')) throw new Error('heap per session needs node --expose-gc');

const result: ChurnResult = { turns };
if (parts.includes('cpu')) Object.assign(result, await measureCpu(turns));
if (parts.includes('switchboard-cpu')) {
  const switchboard = switchboardTurn();
  const micros = await cpuOf(switchboard.turn, 'cpu', 0, turns);
  await switchboard.close();
  result.cpuMicrosPerTurn = { switchboard: micros / turns, baseline: Number.NaN };
}
if (parts.includes('minimal-cpu')) {
  const micros = await cpuOf(createMinimalTurn(), 'cpu', 0, turns);
  result.cpuMicrosPerTurn = { switchboard: Number.NaN, baseline: Number.NaN, minimal: micros / turns };
}
if (parts.includes('heap'))
  result.heapBytesPerSession = await measureHeap(
    sessions,
    Number(process.env.BENCH_CHURN_IDLE_MS ?? 37_000),
    process.env.BENCH_CHURN_SNAPSHOT,
  );
if (parts.includes('redis')) {
  try {
    result.redis = await measureRedisFootprint(
      process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      redisSessions,
    );
  } catch (error) {
    result.redisError = (error as Error).message;
  }
}
if (process.send) process.send({ result });
else console.log(JSON.stringify(result, null, 2));
