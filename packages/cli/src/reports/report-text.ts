import type { EvalReport, ReportDiff } from '@switchboard/runtime/eval';
import { describeCase, worstCases } from '@switchboard/runtime/eval';

/** A rate as a percentage with one decimal. */
export const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

/** A signed change in percentage points. */
export const points = (delta: number) => `${delta >= 0 ? '+' : ''}${(delta * 100).toFixed(1)} pts`;

/** Rows of cells as aligned columns. */
export function columns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, index) => Math.max(...rows.map((row) => (row[index] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, index) => cell.padEnd(widths[index] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The report for a terminal: headline metrics, per-agent scores, the confusion matrix, the worst cases. */
export function textReport(report: EvalReport, { worst = 10 }: { worst?: number } = {}): string {
  const { metrics } = report;
  const lines = [
    `Dataset ${report.dataset}, orchestrator ${report.orchestrator}${report.stubAgents ? ', stubbed agents' : ''}: ${metrics.cases} cases in ${(report.durationMs / 1000).toFixed(2)} s`,
    `Accuracy ${percent(metrics.accuracy)} (${metrics.passed}/${metrics.cases} passed)  routing ${percent(metrics.routing.accuracy)} (${metrics.routing.correct}/${metrics.routing.cases})`,
  ];
  if (metrics.trajectory.cases > 0)
    lines.push(
      `Trajectories: exact ${percent(metrics.trajectory.exactMatch)}, in order ${percent(metrics.trajectory.inOrder)} (${metrics.trajectory.cases} cases)`,
    );
  lines.push(
    `Latency p50 ${metrics.latencyMs.p50.toFixed(2)} ms, p95 ${metrics.latencyMs.p95.toFixed(2)} ms; tokens ${metrics.tokens.perCase.toFixed(1)} per case${metrics.timeouts ? `; ${metrics.timeouts} timed out` : ''}`,
    '',
    columns([
      ['agent', 'precision', 'recall', 'f1', 'support'],
      ...Object.entries(metrics.perAgent).map(([agent, score]) => [
        agent,
        percent(score.precision),
        percent(score.recall),
        percent(score.f1),
        String(score.support),
      ]),
    ]),
    '',
    'Confusion (rows: expected, columns: decided)',
    columns([
      ['', ...metrics.confusion.labels],
      ...metrics.confusion.labels.map((label, row) => [
        label,
        ...(metrics.confusion.matrix[row] ?? []).map(String),
      ]),
    ]),
  );
  const failed = worstCases(report, worst);
  if (failed.length > 0)
    lines.push('', `Failed cases (${failed.length} of ${metrics.failed}):`, ...failed.map(describeCase));
  return `${lines.join('\n')}\n`;
}

/** A diff for a terminal: metric deltas, flipped cases, agent changes, regressions. */
export function textDiff(diff: ReportDiff): string {
  const lines = [
    `Compared with the baseline (${diff.baseline.orchestrator}): accuracy ${points(diff.deltas.accuracy)}, routing ${points(diff.deltas.routing)}`,
    `${diff.broke.length} case(s) broke, ${diff.fixed.length} fixed`,
    ...diff.broke.map((flip) => `  broke ${flip.id}: ${flip.before} → ${flip.after} "${flip.message}"`),
    ...diff.fixed.map((flip) => `  fixed ${flip.id}: ${flip.before} → ${flip.after} "${flip.message}"`),
    ...diff.agents.map(
      (change) =>
        `  ${change.agent}: precision ${points(change.precision)}, recall ${points(change.recall)}, f1 ${points(change.f1)}`,
    ),
  ];
  for (const { metric, drop } of diff.regressions ?? [])
    lines.push(`REGRESSION: ${metric} dropped ${points(-drop)}`);
  return `${lines.join('\n')}\n`;
}
