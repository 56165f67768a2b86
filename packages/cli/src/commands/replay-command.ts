import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ValidationError } from '@switchboard/core';
import { agentMeta } from '@switchboard/runtime';
import { parseSessionExport, type ReplayReport, replaySessions } from '@switchboard/runtime/eval';
import type { Command } from 'commander';
import { loadAppModule } from '../app-module.js';
import { type CliIo, writeOutput } from '../cli-io.js';
import { percent } from '../reports/report-text.js';
import { rate } from './option-parsers.js';

/** A replay for a terminal: the agreement, then each disagreement. */
export function textReplay(report: ReplayReport): string {
  const lines = [
    `Replayed ${report.decisions} decisions of ${report.sessions} session(s) with ${report.orchestrator}: agreement ${percent(report.agreement)} (${report.agreed}/${report.decisions})`,
  ];
  for (const item of report.disagreements) {
    lines.push(`- ${item.sessionId} turn ${item.turnId} hop ${item.hop}: "${item.message}"`);
    lines.push(`    recorded ${item.recorded}${item.recordedReason ? ` (${item.recordedReason})` : ''}`);
    lines.push(`    replayed ${item.replayed}${item.replayedReason ? ` (${item.replayedReason})` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `switchboard replay <app-module> <exports...>`: re-decides recorded sessions with the app's orchestrator. */
export function replayCommand(program: Command, io: CliIo, exit: (code: number) => void): void {
  program
    .command('replay')
    .description("re-decide recorded sessions (GET /v1/sessions/:id/export files) with an app's orchestrator")
    .argument('<app-module>', "a module exporting 'agents' and 'orchestrator' (or a mounted 'app')")
    .argument('<exports...>', 'session exports (JSONL)')
    .option('--json <file>', "write the replay report as JSON ('-' for stdout)")
    .option('--min-agreement <rate>', 'exit 1 when the agreement is below this (0-1)', rate)
    .action(async (appModule: string, files: string[], options: { json?: string; minAgreement?: number }) => {
      const loaded = await loadAppModule(appModule, io.cwd);
      const sessions = [];
      for (const file of files)
        sessions.push(...parseSessionExport(await readFile(resolve(io.cwd, file), 'utf8'), file));
      if (sessions.length === 0) throw new ValidationError({ message: 'The exports hold no session' });
      const { target } = loaded;
      const orchestrator = target.orchestrator;
      if (!orchestrator) throw new ValidationError({ message: `${appModule} has no orchestrator` });
      const agents = 'agentMetas' in target ? target.agentMetas : target.agents.map(agentMeta);
      const report = await replaySessions(orchestrator, sessions, { agents, name: loaded.name });
      if (options.json) await writeOutput(io, options.json, `${JSON.stringify(report, null, 2)}\n`);
      if (options.json !== '-') io.stdout(textReplay(report));
      const below = options.minAgreement !== undefined && report.agreement < options.minAgreement;
      if (below) io.stderr(`Agreement ${percent(report.agreement)} is below --min-agreement\n`);
      exit(below ? 1 : 0);
    });
}

/** `switchboard export <server-url> <session-id...>`: saves sessions of a running server as JSONL. */
export function exportCommand(program: Command, io: CliIo, exit: (code: number) => void): void {
  program
    .command('export')
    .description('save sessions of a running server as JSONL (the API key from SWITCHBOARD_API_KEY)')
    .argument('<server-url>', 'e.g. http://127.0.0.1:3000')
    .argument('<session-ids...>', 'the sessions to export')
    .option('-o, --output <file>', "where to write ('-' for stdout)", '-')
    .action(async (serverUrl: string, ids: string[], options: { output: string }) => {
      const key = process.env.SWITCHBOARD_API_KEY;
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      let text = '';
      for (const id of ids) {
        const response = await fetch(new URL(`/v1/sessions/${encodeURIComponent(id)}/export`, serverUrl), {
          headers,
        });
        if (response.status !== 200)
          throw new ValidationError({ message: `Session ${id}: the server answered ${response.status}` });
        text += await response.text();
      }
      await writeOutput(io, options.output, text);
      exit(0);
    });
}
