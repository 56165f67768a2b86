import type { Dataset } from './dataset.js';
import { loadDataset } from './dataset-parse.js';
import { type GatedMetric, gatedValue } from './eval-diff.js';
import type { CaseResult, EvalReport } from './eval-report.js';
import { type EvalTarget, type RunEvalOptions, runEval } from './run-eval.js';

/** The least each metric may score (0–1); only the given ones are checked. */
export type RoutingThresholds = Partial<Record<GatedMetric, number>>;

/** How many failed cases a failure message lists. */
const LISTED_CASES = 10;

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

function clip(text: string, length: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** A failed case in a few lines: id, source, message, what failed, and the decision's thought and reason. */
export function describeCase(result: CaseResult): string {
  const where = result.source ? ` (${result.source})` : '';
  const lines = [`- ${result.id}${where}: "${clip(result.message, 80)}"`];
  for (const failure of result.failures) lines.push(`    ${failure}`);
  const { thought, reason } = result.first;
  if (reason !== undefined) lines.push(`    reason: ${clip(reason, 160)}`);
  if (thought !== undefined) lines.push(`    thought: ${clip(thought, 160)}`);
  return lines.join('\n');
}

/**
 * The failed cases worst first (a wrong first decision before a wrong
 * trajectory before a wrong answer text; more failed expectations first),
 * at most `limit` of them.
 */
export function worstCases(report: EvalReport, limit = LISTED_CASES): CaseResult[] {
  const weight = (result: CaseResult) =>
    result.failures.length +
    (result.failures.some((failure) => failure.startsWith('first decision')) ? 10 : 0);
  return report.results
    .filter((result) => !result.passed)
    .sort((left, right) => weight(right) - weight(left))
    .slice(0, limit);
}

/** Thrown by {@link expectRouting} when a metric scores below its threshold. */
export class RoutingScoreError extends Error {
  /** The report of the run, for a closer look. */
  readonly report: EvalReport;
  constructor(message: string, report: EvalReport) {
    super(message);
    this.name = 'RoutingScoreError';
    this.report = report;
  }
}

/** What {@link expectRouting} returns. */
export interface RoutingExpectation {
  /**
   * Runs the dataset and resolves with the report when every given metric
   * scores at least its threshold; rejects with a {@link RoutingScoreError}
   * naming the metrics below and listing the worst cases otherwise.
   */
  toScoreAtLeast(thresholds: RoutingThresholds): Promise<EvalReport>;
}

/**
 * A test assertion over a routing eval, for any test runner (it throws,
 * it imports none). Agents are stubbed unless `options.stubAgents` is false.
 *
 * @example
 * ```ts
 * it('routes well', async () => {
 *   await expectRouting(app, 'evals/routing.jsonl').toScoreAtLeast({ accuracy: 0.9 });
 * });
 * ```
 */
export function expectRouting(
  target: EvalTarget,
  dataset: Dataset | string,
  options: RunEvalOptions = {},
): RoutingExpectation {
  return {
    async toScoreAtLeast(thresholds) {
      const loaded = typeof dataset === 'string' ? await loadDataset(dataset) : dataset;
      const report = await runEval(target, loaded, { stubAgents: true, ...options });
      const { metrics } = report;
      const below = (Object.entries(thresholds) as [GatedMetric, number][]).filter(
        ([metric, least]) => gatedValue(metrics, metric) < least,
      );
      if (below.length === 0) return report;
      const worst = worstCases(report);
      const message = [
        `Routing of '${report.orchestrator}' on dataset '${report.dataset}' scored below the threshold:`,
        ...below.map(
          ([metric, least]) => `  ${metric} ${percent(gatedValue(metrics, metric))} < ${percent(least)}`,
        ),
        `  (${metrics.passed} of ${metrics.cases} cases passed)`,
        `Worst cases (${worst.length} of ${metrics.failed} failed):`,
        ...worst.map(describeCase),
      ].join('\n');
      throw new RoutingScoreError(message, report);
    },
  };
}
