import type { EvalReport, ReportDiff } from '@switchboard/runtime/eval';
import { worstCases } from '@switchboard/runtime/eval';
import { percent, points } from './report-text.js';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML content and attributes: a dataset's messages are arbitrary. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => ENTITIES[character] as string);

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d2433;max-width:72rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d5d9e2;padding:.3rem .55rem;text-align:right}th{background:#f3f5f9}
td.text,th.text{text-align:left}.matrix td{min-width:3rem;font-variant-numeric:tabular-nums}
.bad{color:#a01818}.good{color:#16702f}.small{color:#5b6475;font-size:12px}`;

function row(cells: readonly string[], header = false, classes: readonly string[] = []): string {
  const tag = header ? 'th' : 'td';
  return `<tr>${cells.map((content, index) => `<${tag}${classes[index] ? ` class="${classes[index]}"` : ''}>${content}</${tag}>`).join('')}</tr>`;
}

/** A heat-map cell: the diagonal in green, misses in red, shaded by their share of the row. */
function heat(count: number, rowTotal: number, diagonal: boolean): string {
  const share = rowTotal === 0 ? 0 : count / rowTotal;
  const hue = diagonal ? 140 : 0;
  const background = count === 0 ? '#ffffff' : `hsl(${hue} 65% ${Math.round(96 - share * 50)}%)`;
  return `<td style="background:${background}" title="${percent(share)} of the row">${count}</td>`;
}

/**
 * The report as one offline HTML file (no scripts, fonts or styles from
 * elsewhere): metrics, per-agent scores, the confusion matrix drawn as a
 * heat map, the failed cases, and what changed since a baseline.
 */
export function htmlReport(report: EvalReport, diff?: ReportDiff): string {
  const { metrics } = report;
  const { labels, matrix } = metrics.confusion;
  const heading = row(['expected ↓ / decided →', ...labels.map(escapeHtml)], true, ['text']);
  const heatRows = labels.map((label, index) => {
    const counts = matrix[index] ?? [];
    const total = counts.reduce((sum, count) => sum + count, 0);
    const cells = counts.map((count, column) => heat(count, total, column === index)).join('');
    return `<tr><th class="text">${escapeHtml(label)}</th>${cells}</tr>`;
  });
  const parts = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Routing eval: ${escapeHtml(report.dataset)}</title><style>${STYLE}</style></head><body>`,
    `<h1>Routing eval: ${escapeHtml(report.dataset)} on ${escapeHtml(report.orchestrator)}</h1>`,
    `<p class="small">${metrics.cases} cases, ${report.stubAgents ? 'stubbed agents' : 'real agents'}, ${escapeHtml(report.startedAt)}</p>`,
    '<table>',
    row(['accuracy', `${percent(metrics.accuracy)} (${metrics.passed}/${metrics.cases})`], false, ['text']),
    row(
      [
        'routing (first decision)',
        `${percent(metrics.routing.accuracy)} (${metrics.routing.correct}/${metrics.routing.cases})`,
      ],
      false,
      ['text'],
    ),
    row(
      [
        'trajectory exact / in order',
        `${percent(metrics.trajectory.exactMatch)} / ${percent(metrics.trajectory.inOrder)}`,
      ],
      false,
      ['text'],
    ),
    row(
      ['latency p50 / p95', `${metrics.latencyMs.p50.toFixed(2)} / ${metrics.latencyMs.p95.toFixed(2)} ms`],
      false,
      ['text'],
    ),
    row(['tokens per case', metrics.tokens.perCase.toFixed(1)], false, ['text']),
    '</table>',
    '<h2>Confusion matrix</h2>',
    `<table class="matrix">${heading}${heatRows.join('')}</table>`,
    '<h2>Per agent</h2><table>',
    row(['agent', 'precision', 'recall', 'F1', 'support'], true, ['text']),
    ...Object.entries(metrics.perAgent).map(([agent, score]) =>
      row(
        [
          escapeHtml(agent),
          percent(score.precision),
          percent(score.recall),
          percent(score.f1),
          String(score.support),
        ],
        false,
        ['text'],
      ),
    ),
    '</table>',
  ];
  if (diff) {
    parts.push(
      `<h2>Since the baseline</h2><p>Accuracy ${points(diff.deltas.accuracy)}, routing ${points(diff.deltas.routing)}</p><table>`,
    );
    parts.push(
      row(['change', 'case', 'before', 'after', 'message'], true, ['text', 'text', 'text', 'text', 'text']),
    );
    for (const [kind, flips] of [
      ['broke', diff.broke],
      ['fixed', diff.fixed],
    ] as const)
      for (const flip of flips)
        parts.push(
          row(
            [
              `<span class="${kind === 'broke' ? 'bad' : 'good'}">${kind}</span>`,
              escapeHtml(flip.id),
              escapeHtml(flip.before),
              escapeHtml(flip.after),
              escapeHtml(flip.message),
            ],
            false,
            ['text', 'text', 'text', 'text', 'text'],
          ),
        );
    parts.push('</table>');
  }
  const failed = worstCases(report, 200);
  if (failed.length > 0) {
    parts.push(`<h2>Failed cases (${failed.length} of ${metrics.failed})</h2><table>`);
    parts.push(
      row(['case', 'message', 'what failed', 'thought / reason'], true, ['text', 'text', 'text', 'text']),
    );
    for (const result of failed) {
      const why = [result.first.reason, result.first.thought]
        .filter((text) => text !== undefined)
        .join(' — ');
      parts.push(
        row(
          [
            escapeHtml(result.id),
            escapeHtml(result.message),
            escapeHtml(result.failures.join('; ')),
            escapeHtml(why),
          ],
          false,
          ['text', 'text', 'text', 'text'],
        ),
      );
    }
    parts.push('</table>');
  }
  parts.push('</body></html>\n');
  return parts.join('\n');
}
