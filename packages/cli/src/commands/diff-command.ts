import { diffReports, type GatedMetric } from '@switchboard/runtime/eval';
import type { Command } from 'commander';
import { type CliIo, readReport, writeOutput } from '../cli-io.js';
import { textDiff } from '../reports/report-text.js';
import { GATE_DEFAULT, gatedMetric, rate } from './option-parsers.js';

/** `switchboard diff <baseline> <candidate>`: compares two JSON reports; exit 1 on a regression past --max-drop. */
export function diffCommand(program: Command, io: CliIo, exit: (code: number) => void): void {
  program
    .command('diff')
    .description('compare two reports of switchboard eval --json')
    .argument('<baseline>', 'the report to compare with')
    .argument('<candidate>', 'the new report')
    .option('--max-drop <rate>', 'exit 1 when a gated metric drops by more (0-1)', rate, 0)
    .option('--gate <metrics...>', 'metrics gated by --max-drop', gatedMetric, GATE_DEFAULT)
    .option('--json <file>', "write the diff as JSON ('-' for stdout)")
    .action(
      async (
        baseline: string,
        candidate: string,
        options: { maxDrop: number; gate: GatedMetric[]; json?: string },
      ) => {
        const diff = diffReports(await readReport(io, baseline), await readReport(io, candidate), {
          maxDrop: options.maxDrop,
          metrics: options.gate,
        });
        if (options.json) await writeOutput(io, options.json, `${JSON.stringify(diff, null, 2)}\n`);
        if (options.json !== '-') io.stdout(textDiff(diff));
        exit(diff.regressions && diff.regressions.length > 0 ? 1 : 0);
      },
    );
}
