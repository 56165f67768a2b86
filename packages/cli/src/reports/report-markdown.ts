import type { EvalReport, ReportDiff } from '@switchboard/runtime/eval';
import { worstCases } from '@switchboard/runtime/eval';
import { percent, points } from './report-text.js';

/** A table cell: pipes escaped and lines joined, so that any text stays in its cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

/**
 * The report as Markdown (a CI job summary, a pull-request comment):
 * metrics, per-agent scores, the confusion matrix, the failed cases and,
 * with a diff, what changed since the baseline.
 */
export function markdownReport(report: EvalReport, diff?: ReportDiff): string {
  const { metrics } = report;
  const lines = [
    `## Routing eval: ${cell(report.dataset)} on ${cell(report.orchestrator)}`,
    '',
    ...table(
      ['metric', 'value'],
      [
        ['accuracy', `${percent(metrics.accuracy)} (${metrics.passed}/${metrics.cases})`],
        [
          'routing (first decision)',
          `${percent(metrics.routing.accuracy)} (${metrics.routing.correct}/${metrics.routing.cases})`,
        ],
        [
          'trajectory exact / in order',
          `${percent(metrics.trajectory.exactMatch)} / ${percent(metrics.trajectory.inOrder)} (${metrics.trajectory.cases})`,
        ],
        [
          'latency p50 / p95',
          `${metrics.latencyMs.p50.toFixed(2)} ms / ${metrics.latencyMs.p95.toFixed(2)} ms`,
        ],
        ['tokens per case', metrics.tokens.perCase.toFixed(1)],
      ],
    ),
    '',
    '### Per agent',
    '',
    ...table(
      ['agent', 'precision', 'recall', 'F1', 'support'],
      Object.entries(metrics.perAgent).map(([agent, score]) => [
        agent,
        percent(score.precision),
        percent(score.recall),
        percent(score.f1),
        String(score.support),
      ]),
    ),
    '',
    '### Confusion matrix (rows: expected, columns: decided)',
    '',
    ...table(
      ['', ...metrics.confusion.labels],
      metrics.confusion.labels.map((label, row) => [
        label,
        ...(metrics.confusion.matrix[row] ?? []).map(String),
      ]),
    ),
  ];
  if (diff) {
    lines.push(
      '',
      '### Since the baseline',
      '',
      `Accuracy ${points(diff.deltas.accuracy)}, routing ${points(diff.deltas.routing)}.`,
      '',
    );
    lines.push(
      ...table(
        ['change', 'case', 'before', 'after', 'message'],
        [
          ...diff.broke.map((flip) => ['broke', flip.id, flip.before, flip.after, flip.message]),
          ...diff.fixed.map((flip) => ['fixed', flip.id, flip.before, flip.after, flip.message]),
        ],
      ),
    );
    for (const { metric, drop } of diff.regressions ?? [])
      lines.push('', `**Regression:** ${metric} ${points(-drop)}`);
  }
  const failed = worstCases(report, 50);
  if (failed.length > 0) {
    lines.push('', `### Failed cases (${failed.length} of ${metrics.failed})`, '');
    lines.push(
      ...table(
        ['case', 'message', 'what failed', 'reason'],
        failed.map((result) => [
          result.id,
          result.message,
          result.failures.join('; '),
          result.first.reason ?? '',
        ]),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}
