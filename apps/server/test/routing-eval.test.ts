import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runCli } from '@switchboard/cli';
import { type EvalReport, expectRouting, loadDataset } from '@switchboard/runtime/eval';
import { describe, expect, it } from 'vitest';
import { buildServerApp } from '../src/build-app.js';
import { readConfig } from '../src/config.js';

const dataset = await loadDataset(new URL('../evals/routing.jsonl', import.meta.url).pathname);
const guide = await readFile(new URL('../../../docs/guides/evals.md', import.meta.url), 'utf8');

/** The demo server's agents and the orchestrator `ORCHESTRATOR` selects. */
function target(orchestrator: 'keyword' | 'task') {
  const { app, orchestrator: router } = buildServerApp(readConfig({ ORCHESTRATOR: orchestrator }));
  return { orchestrator: router, agents: app.agents, name: app.name };
}

const figure = (report: EvalReport) =>
  `${(report.metrics.accuracy * 100).toFixed(1)}% (${report.metrics.passed}/${report.metrics.cases})`;

describe("the demo server's routing dataset", () => {
  it('holds at least 200 cases over the four agents and out-of-scope questions', () => {
    expect(dataset.cases.length).toBeGreaterThanOrEqual(200);
    const tags = new Set(dataset.cases.flatMap((item) => item.tags ?? []));
    expect([...tags].sort()).toEqual(['arithmetic', 'help', 'out-of-scope', 'time', 'units']);
  });

  it('is routed as the evals guide says by the keyword router and the task router', async () => {
    const keyword = await expectRouting(target('keyword'), dataset).toScoreAtLeast({ accuracy: 0.97 });
    const task = await expectRouting(target('task'), dataset).toScoreAtLeast({ accuracy: 0.8 });
    expect(guide).toContain(`keyword router\nscores **${figure(keyword)}**`);
    expect(guide).toContain(`\`ORCHESTRATOR=task\` scores **${figure(task)}**`);
    expect(keyword.results.filter((result) => !result.passed).map((result) => result.id)).toEqual([
      'oos-07',
      'oos-22',
    ]);
  });

  it("scores the same through the evals guide's command", async () => {
    expect(guide).toContain('pnpm --filter @switchboard/server eval ');
    const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    const command = manifest.scripts.eval as string;
    expect(command).toBe('switchboard eval src/eval-app.ts evals/routing.jsonl --stub-agents');
    let stdout = '';
    const io = {
      stdout: (text: string) => {
        stdout += text;
      },
      stderr: (text: string) => {
        stdout += text;
      },
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      progress: false,
    };
    expect(await runCli(command.split(' ').slice(1), io)).toBe(0);
    expect(stdout).toContain('Accuracy 99.0% (203/205 passed)');
  });
});
