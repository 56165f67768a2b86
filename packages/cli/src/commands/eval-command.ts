import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { diffReports, type GatedMetric, parseDataset, runEval } from '@switchboard/runtime/eval';
import type { Command } from 'commander';
import { loadAppModule } from '../app-module.js';
import { type CliIo, progressBar, readReport, writeOutput } from '../cli-io.js';
import { htmlReport } from '../reports/report-html.js';
import { markdownReport } from '../reports/report-markdown.js';
import { textDiff, textReport } from '../reports/report-text.js';
import { GATE_DEFAULT, gatedMetric, positiveInteger, rate } from './option-parsers.js';

interface EvalOptions {
  stubAgents?: boolean;
  concurrency: number;
  timeout: number;
  json?: string;
  markdown?: string;
  html?: string;
  baseline?: string;
  maxDrop: number;
  gate: GatedMetric[];
  minAccuracy?: number;
  quiet?: boolean;
}

/** `switchboard eval <app-module> <dataset>`: scores the app's routing; exit 1 below a threshold or on a regression. */
export function evalCommand(program: Command, io: CliIo, exit: (code: number) => void): void {
  program
    .command('eval')
    .description("score an app's routing on a dataset (JSONL or YAML)")
    .argument('<app-module>', "a module exporting 'agents' and 'orchestrator' (or a mounted 'app')")
    .argument('<dataset>', 'the labelled cases (.jsonl, .yaml)')
    .option('--stub-agents', 'replace every agent with a stub that answers its own name (routing only)')
    .option('--concurrency <n>', 'cases run at once', positiveInteger, 1)
    .option('--timeout <ms>', 'per-case timeout in milliseconds', positiveInteger, 30_000)
    .option('--json <file>', "write the report as JSON ('-' for stdout)")
    .option('--markdown <file>', "write the report as Markdown ('-' for stdout)")
    .option('--html <file>', 'write the report as one offline HTML file with a heat-map confusion matrix')
    .option('--baseline <report>', 'a JSON report to compare with: flipped cases, per-agent changes')
    .option('--max-drop <rate>', 'with --baseline: exit 1 when a gated metric drops by more (0-1)', rate, 0)
    .option(
      '--gate <metrics...>',
      'metrics gated by --max-drop: accuracy, routing, trajectoryExact, trajectoryInOrder',
      gatedMetric,
      GATE_DEFAULT,
    )
    .option('--min-accuracy <rate>', 'exit 1 when accuracy is below this (0-1)', rate)
    .option('--quiet', 'print nothing but errors and files written to stdout')
    .action(async (appModule: string, datasetPath: string, options: EvalOptions) => {
      const loaded = await loadAppModule(appModule, io.cwd);
      const format = /\.ya?ml$/i.test(datasetPath) ? 'yaml' : 'jsonl';
      const text = await readFile(resolve(io.cwd, datasetPath), 'utf8');
      const dataset = await parseDataset(text, { format, source: datasetPath });
      const bar = progressBar(io, `eval ${dataset.name}`);
      const report = await runEval(loaded.target, dataset, {
        stubAgents: options.stubAgents === true,
        concurrency: options.concurrency,
        timeoutMs: options.timeout,
        onProgress: (done, total) => bar.update(done, total),
      });
      bar.done();
      const diff = options.baseline
        ? diffReports(await readReport(io, options.baseline), report, {
            maxDrop: options.maxDrop,
            metrics: options.gate,
          })
        : undefined;
      if (options.json) await writeOutput(io, options.json, `${JSON.stringify(report, null, 2)}\n`);
      if (options.markdown) await writeOutput(io, options.markdown, markdownReport(report, diff));
      if (options.html) await writeOutput(io, options.html, htmlReport(report, diff));
      const toStdout = [options.json, options.markdown, options.html].includes('-');
      if (!options.quiet && !toStdout) {
        io.stdout(textReport(report));
        if (diff) io.stdout(textDiff(diff));
      }
      let code = 0;
      if (options.minAccuracy !== undefined && report.metrics.accuracy < options.minAccuracy) {
        io.stderr(
          `Accuracy ${(report.metrics.accuracy * 100).toFixed(1)}% is below --min-accuracy ${(options.minAccuracy * 100).toFixed(1)}%\n`,
        );
        code = 1;
      }
      if (diff?.regressions && diff.regressions.length > 0) {
        io.stderr(`Regressed past --max-drop: ${diff.regressions.map((item) => item.metric).join(', ')}\n`);
        code = 1;
      }
      exit(code);
    });
}
