// The churn bench's in-process CPU per turn alone (bench/churn.ts, its `cpu` part), for quick side-by-side
// comparisons of two checkouts: `BENCH_CHURN_TURNS=30000 pnpm tsx bench/churn-cpu.ts` in each, alternately.
import type { ChurnResult } from './churn.js';
import { runChild } from './run-child.js';

process.env.BENCH_CHURN_PARTS = 'cpu';
const result = await runChild<ChurnResult>('churn.ts', 'result', { execArgv: ['--expose-gc'] });
const cpu = result.cpuMicrosPerTurn;
const bytes = result.allocatedBytesPerTurn;
console.log(
  `switchboard ${cpu?.switchboard.toFixed(1)} µs/turn, hand-written ${cpu?.baseline.toFixed(1)}, minimal ${cpu?.minimal?.toFixed(2)}` +
    ` (ratios ${((cpu?.switchboard ?? 0) / (cpu?.baseline ?? 1)).toFixed(2)}×, ${((cpu?.switchboard ?? 0) / (cpu?.minimal ?? 1)).toFixed(2)}×);` +
    ` allocated B/turn switchboard ${bytes?.switchboard.toFixed(0)}, hand-written ${bytes?.baseline.toFixed(0)}, minimal ${bytes?.minimal.toFixed(0)}`,
);
