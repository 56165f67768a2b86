// The result of bench/fan-out.ts and how it is printed, shared by the bench itself and bench/run.ts.

/** What one fan-out measurement found; times in milliseconds. */
export interface FanOutResult {
  runs: number;
  branches: number;
  /** How long each branch's agent works in the measured turns. */
  agentMs: number;
  /** Median wall time of a turn whose agents answer at once: the model calls and the engine. */
  baselineMedianMs: number;
  /** Median wall time of a turn whose agents each work `agentMs`. */
  fanOutMedianMs: number;
  /** The turns in which every branch started before any ended. */
  overlappingRuns: number;
}

/** The time the branches added to a turn, its ratio to running them one after the other, and whether it is within the bound. */
export function fanOutVerdict(result: FanOutResult) {
  const sequentialMs = result.branches * result.agentMs;
  const branchesMs = result.fanOutMedianMs - result.baselineMedianMs;
  // Concurrent branches cost one branch's time; 1.5 of it leaves room for timers and a loaded machine.
  const boundMs = 1.5 * result.agentMs;
  return {
    sequentialMs,
    branchesMs,
    boundMs,
    ok: branchesMs < boundMs && result.overlappingRuns === result.runs,
  };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** Prints the measurement and its verdict; returns whether it passed. */
export function printFanOut(result: FanOutResult): boolean {
  const { sequentialMs, branchesMs, boundMs, ok } = fanOutVerdict(result);
  console.log(
    `\nSupervisor fan-out to ${result.branches} agents of ${result.agentMs} ms, ${result.runs} turns each (scripted model on loopback)\n`,
  );
  console.log(
    `median turn, agents of 0 ms (model calls + engine)  ${fmt(result.baselineMedianMs).padStart(7)} ms`,
  );
  console.log(
    `median turn, agents of ${result.agentMs} ms`.padEnd(50),
    `${fmt(result.fanOutMedianMs).padStart(7)} ms`,
  );
  console.log(`time the branches added (difference)`.padEnd(50), `${fmt(branchesMs).padStart(7)} ms`);
  console.log(
    `ratio to the sequential sum of ${sequentialMs} ms = ${fmt(branchesMs / sequentialMs, 2)} (whole turn: ${fmt(result.fanOutMedianMs / sequentialMs, 2)})`,
  );
  console.log(`branches overlapping in ${result.overlappingRuns} of ${result.runs} turns`);
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} the branches added ${fmt(branchesMs)} ms, bound ${fmt(boundMs, 0)} ms (1.5 × one branch), every turn overlapping`,
  );
  return ok;
}
