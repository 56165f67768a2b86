// The `regression` variant of `pnpm bench`: this checkout's turn against an earlier commit's, on the same
// machine in the same run. The earlier commit (BENCH_BASE, e.g. `BENCH_BASE=HEAD~3` or a hash) is checked out
// into a detached worktree under the system's temporary folder and installed from the pnpm store (offline
// once the store holds its packages); both sides' bench/churn.ts and bench/tracing-cost.ts are compiled from
// their own sources, and run in alternating fresh processes, BENCH_REGRESSION_ROUNDS (default 3) rounds, so
// that a noisy stretch of the machine hits both sides alike. The ratio new/old of the medians is printed.
//   BENCH_BASE  the earlier commit (without it the variant prints n/a)
//   BENCH_REGRESSION_TURNS (default 20000)  turns per process
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileIn, compileServer } from './compile.js';
import { median } from './load.js';
import { runScript } from './run-child.js';

/** CPU µs per turn of each side, untraced and traced, with the per-round figures. */
export interface RegressionResult {
  base: string;
  untraced: { old: number[]; new: number[] };
  traced: { old: number[]; new: number[] };
}

interface ChurnCpu {
  cpuMicrosPerTurn: { switchboard: number };
}
interface TraceCpu {
  cpuMicrosPerTurn: { traced: number; untraced: number };
}

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..');

/** A detached worktree of `rev`, installed; reused when it already exists. */
function checkout(rev: string): { dir: string; sha: string } {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
  const dir = join(tmpdir(), `switchboard-bench-base-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'package.json')))
    execFileSync('git', ['worktree', 'add', '--detach', '--force', dir, sha], { cwd: root, stdio: 'ignore' });
  if (!existsSync(join(dir, 'bench', 'node_modules')))
    execFileSync('pnpm', ['install', '--frozen-lockfile', '--prefer-offline', '--silent'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  return { dir, sha };
}

/** Runs the churn and tracing CPU measurements of both sides, alternating, and returns every round's figures. */
export async function measureRegression(rev: string): Promise<RegressionResult> {
  const base = checkout(rev);
  const turns = String(Number(process.env.BENCH_REGRESSION_TURNS ?? 20_000));
  const rounds = Math.max(1, Number(process.env.BENCH_REGRESSION_ROUNDS ?? 3));
  const sink = await compileServer('servers/otlp-sink.ts');
  const sides = {
    old: {
      churn: await compileIn(join(base.dir, 'bench'), 'churn.ts'),
      trace: await compileIn(join(base.dir, 'bench'), 'tracing-cost.ts'),
    },
    new: { churn: await compileIn(here, 'churn.ts'), trace: await compileIn(here, 'tracing-cost.ts') },
  };
  const result: RegressionResult = {
    base: base.sha.slice(0, 12),
    untraced: { old: [], new: [] },
    traced: { old: [], new: [] },
  };
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
      const churn = await runScript<ChurnCpu>(sides[side].churn, 'result', {
        env: { BENCH_CHURN_PARTS: 'switchboard-cpu', BENCH_CHURN_TURNS: turns },
      });
      result.untraced[side].push(churn.cpuMicrosPerTurn.switchboard);
      const traced = await runScript<TraceCpu>(sides[side].trace, 'result', {
        env: { BENCH_TRACE_ONLY: 'traced', BENCH_TRACE_TURNS: turns, BENCH_OTLP_SINK_SCRIPT: sink },
      });
      result.traced[side].push(traced.cpuMicrosPerTurn.traced);
    }
  }
  return result;
}

/** new/old of the medians. */
export function regressionRatio(sides: { old: number[]; new: number[] }): number {
  return median(sides.new) / median(sides.old);
}
