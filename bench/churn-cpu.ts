// The churn bench's in-process CPU per turn alone (bench/churn.ts, its `cpu` part), for quick side-by-side
// comparisons of two checkouts: `BENCH_CHURN_TURNS=30000 pnpm tsx bench/churn-cpu.ts` in each, alternately.
import { runChild } from './run-child.js';

process.env.BENCH_CHURN_PARTS = 'cpu';
const result = await runChild<{ cpuMicrosPerTurn?: { switchboard: number; baseline: number } }>(
  'churn.ts',
  'result',
  { execArgv: ['--expose-gc'] },
);
const cpu = result.cpuMicrosPerTurn;
console.log(
  `switchboard ${cpu?.switchboard.toFixed(1)} µs/turn, hand-written ${cpu?.baseline.toFixed(1)} µs/turn`,
);
