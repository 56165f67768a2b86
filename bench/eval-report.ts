import type { EvalCost } from './eval-cost.js';
import { median } from './load.js';
import { runChild } from './run-child.js';

/** The most a routing eval with stubbed agents may cost, as a multiple of bare `decide()` calls. */
const TARGET_RATIO = 10;

/**
 * Runs bench/eval-cost.ts in a child process and prints the eval's wall time against the bare decisions'
 * with PASS or MISS against the target. Resolves to false on a MISS.
 */
export async function runEvalBench(): Promise<boolean> {
  const cost = await runChild<EvalCost>('eval-cost.ts', 'result');
  const bare = median(cost.bareMs);
  const evaluated = median(cost.evalMs);
  const ratios = cost.evalMs.map((ms, round) => ms / (cost.bareMs[round] as number));
  const ratio = median(ratios);
  console.log(
    `\nRouting eval in process: ${cost.cases} cases, stubbed agents, vs ${cost.cases} bare decide() calls\n`,
  );
  console.log('side                 cpu ms (median)  cpu µs/case');
  console.log(
    `bare decide()        ${bare.toFixed(1).padStart(11)}  ${((bare * 1000) / cost.cases).toFixed(2).padStart(7)}`,
  );
  console.log(
    `runEval, stubbed     ${evaluated.toFixed(1).padStart(11)}  ${((evaluated * 1000) / cost.cases).toFixed(2).padStart(7)}`,
  );
  const pass = ratio < TARGET_RATIO;
  console.log(
    `ratio eval/decide = ${ratio.toFixed(2)}  (target < ${TARGET_RATIO}, rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}; accuracy ${(cost.accuracy * 100).toFixed(1)}%) ${pass ? 'PASS' : 'MISS'}`,
  );
  return pass;
}
