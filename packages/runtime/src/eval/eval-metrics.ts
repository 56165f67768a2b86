import { agentLabel, expectedAgents, NO_AGENT } from './dataset.js';
import { type AgentScore, type CaseResult, ERROR_LABEL, type EvalMetrics } from './eval-report.js';

const rate = (count: number, total: number) => (total === 0 ? 0 : count / total);

/** The value at quantile `q` (0–1) of sorted `values`, nearest rank; 0 for none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** True when `expected` appears in `actual` in the same order, other agents between them allowed. */
export function inOrder(expected: readonly string[], actual: readonly string[]): boolean {
  let next = 0;
  for (const agent of actual) if (agent === expected[next]) next += 1;
  return next === expected.length;
}

/** True when both lists hold the same agents in the same order. */
export function sameSequence(expected: readonly string[], actual: readonly string[]): boolean {
  return expected.length === actual.length && expected.every((agent, index) => actual[index] === agent);
}

/** True when both lists hold the same agents, in any order (repeats ignored). */
export function sameSet(expected: readonly string[], actual: readonly string[]): boolean {
  const left = new Set(expected);
  const right = new Set(actual);
  return left.size === right.size && [...left].every((agent) => right.has(agent));
}

/** Agents by name, then `(no agent)` and `(error)` last. */
function labelOrder(labels: Iterable<string>): string[] {
  const all = [...labels];
  const special = [NO_AGENT, ERROR_LABEL];
  const named = all.filter((label) => !special.includes(label)).sort();
  return [...named, ...special.filter((label) => all.includes(label))];
}

function agentScores(pairs: readonly (readonly [string[], string[]])[]): Record<string, AgentScore> {
  // A fan-out counts for each of its agents; "no agent" and "(error)" are labels of their own.
  const members = (agents: string[], label: string) => (agents.length > 0 ? agents : [label]);
  const counts = new Map<string, { truePositive: number; predicted: number; support: number }>();
  const count = (label: string) => {
    const entry = counts.get(label) ?? { truePositive: 0, predicted: 0, support: 0 };
    counts.set(label, entry);
    return entry;
  };
  for (const [expected, decided] of pairs) {
    const wanted = new Set(members(expected, NO_AGENT));
    const got = new Set(members(decided, NO_AGENT));
    for (const label of wanted) count(label).support += 1;
    for (const label of got) {
      count(label).predicted += 1;
      if (wanted.has(label)) count(label).truePositive += 1;
    }
  }
  const scores: Record<string, AgentScore> = {};
  for (const label of labelOrder(counts.keys())) {
    const { truePositive, predicted, support } = counts.get(label) as {
      truePositive: number;
      predicted: number;
      support: number;
    };
    const precision = rate(truePositive, predicted);
    const recall = rate(truePositive, support);
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    scores[label] = { precision, recall, f1, support };
  }
  return scores;
}

/**
 * The scores of a run from its case results: accuracy, first-decision
 * routing accuracy, per-agent precision/recall/F1, the confusion matrix,
 * trajectory rates, latency quantiles and tokens.
 */
export function computeMetrics(results: readonly CaseResult[]): EvalMetrics {
  const passed = results.filter((result) => result.passed).length;
  const routed = results.flatMap((result) => {
    const expected = expectedAgents(result.expect);
    return expected === undefined ? [] : [{ result, expected: expected ?? [] }];
  });
  const correct = routed.filter(({ result, expected }) => agentLabel(expected) === result.first.label).length;
  // An errored first decision is its own label for precision too.
  const pairs = routed.map(({ result, expected }) => {
    const decided = result.first.label === ERROR_LABEL ? [ERROR_LABEL] : result.first.agents;
    return [expected, decided] as const;
  });
  const labels = labelOrder(
    new Set(routed.flatMap(({ result, expected }) => [agentLabel(expected), result.first.label])),
  );
  const index = new Map(labels.map((label, position) => [label, position]));
  const matrix = labels.map(() => labels.map(() => 0));
  for (const { result, expected } of routed) {
    const row = matrix[index.get(agentLabel(expected)) as number] as number[];
    const column = index.get(result.first.label) as number;
    row[column] = (row[column] as number) + 1;
  }
  const withTrajectory = results.filter((result) => result.expect.trajectory !== undefined);
  const latencies = results.map((result) => result.latencyMs).sort((left, right) => left - right);
  const input = results.reduce((sum, result) => sum + (result.tokens?.input ?? 0), 0);
  const output = results.reduce((sum, result) => sum + (result.tokens?.output ?? 0), 0);
  return {
    cases: results.length,
    passed,
    failed: results.length - passed,
    accuracy: rate(passed, results.length),
    routing: { cases: routed.length, correct, accuracy: rate(correct, routed.length) },
    perAgent: agentScores(pairs),
    confusion: { labels, matrix },
    trajectory: {
      cases: withTrajectory.length,
      exactMatch: rate(
        withTrajectory.filter((result) => sameSequence(result.expect.trajectory ?? [], result.trajectory))
          .length,
        withTrajectory.length,
      ),
      inOrder: rate(
        withTrajectory.filter((result) => inOrder(result.expect.trajectory ?? [], result.trajectory)).length,
        withTrajectory.length,
      ),
    },
    latencyMs: {
      p50: quantile(latencies, 0.5),
      p95: quantile(latencies, 0.95),
      max: latencies.at(-1) ?? 0,
    },
    tokens: { input, output, perCase: rate(input + output, results.length) },
    timeouts: results.filter((result) => result.status === 'timeout').length,
  };
}
