import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { cli, cliWith, put, workFolder } from './cli-support.js';

const BROKEN_APP = `import { AbstractOrchestrator, routeToUser } from '@switchboard/core';
import { agents } from './agents.js';
/** Never calls an agent. */
class Lazy extends AbstractOrchestrator {
  handleMessage() { return routeToUser('no'); }
}
export { agents };
export const orchestrator = Lazy;
`;

describe('switchboard init, eval and diff', async () => {
  const folder = await workFolder('eval-command');
  const init = await cli(folder, 'init', 'demo');
  const project = join(folder, 'demo');
  await put(project, 'src/broken.ts', BROKEN_APP);

  it('scaffolds a project whose dataset its router passes', async () => {
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('Wrote 10 files');
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: 'demo', devDependencies: { '@switchboard/cli': '^0.1.0' } });
    const run = await cli(
      project,
      'eval',
      'src/app.ts',
      'evals/routing.jsonl',
      '--stub-agents',
      '--min-accuracy',
      '1',
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Accuracy 100.0% (10/10 passed)');
    expect(run.stdout).toMatch(/calculator\s+4\s+0\s+0\n/);
    expect((await cli(folder, 'init', 'demo')).code).toBe(2);
  });

  it('draws a progress bar on a terminal, and none otherwise', async () => {
    const shown = await cliWith(
      { progress: true },
      project,
      'eval',
      'src/app.ts',
      'evals/routing.jsonl',
      '--quiet',
    );
    const frames = shown.stderr.split('\r').filter(Boolean);
    expect(frames.at(-1)).toBe(`eval routing [${'#'.repeat(30)}] 10/10\n`);
    expect(frames.length).toBeGreaterThan(2);
    const quiet = await cli(project, 'eval', 'src/app.ts', 'evals/routing.jsonl', '--quiet');
    expect(quiet.stderr).toBe('');
  });

  it('writes JSON, Markdown and a single offline HTML file with a heat-map confusion matrix', async () => {
    const run = await cli(
      project,
      'eval',
      'src/broken.ts',
      'evals/routing.jsonl',
      '--json',
      'broken.json',
      '--markdown',
      'broken.md',
      '--html',
      'broken.html',
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(await readFile(join(project, 'broken.json'), 'utf8'));
    expect(report.metrics).toMatchObject({ cases: 10, passed: 2, routing: { correct: 3 } });
    const markdown = await readFile(join(project, 'broken.md'), 'utf8');
    expect(markdown).toContain('| calculator | 0 | 0 | 4 |');
    const html = await readFile(join(project, 'broken.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    // Four calculator cases all decided "(no agent)": the whole row's share, a deep red.
    expect(html).toContain('<td style="background:hsl(0 65% 46%)" title="100.0% of the row">4</td>');
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\//);
  });

  it('fails below --min-accuracy and on a regression past --max-drop against a baseline', async () => {
    expect(
      (
        await cli(
          project,
          'eval',
          'src/app.ts',
          'evals/routing.jsonl',
          '--stub-agents',
          '--json',
          'good.json',
        )
      ).code,
    ).toBe(0);
    const low = await cli(
      project,
      'eval',
      'src/broken.ts',
      'evals/routing.jsonl',
      '--min-accuracy',
      '0.9',
      '--quiet',
    );
    expect([low.code, low.stdout, low.stderr]).toEqual([
      1,
      '',
      'Accuracy 20.0% is below --min-accuracy 90.0%\n',
    ]);
    const worse = await cli(
      project,
      'eval',
      'src/broken.ts',
      'evals/routing.jsonl',
      '--baseline',
      'good.json',
      '--max-drop',
      '0.05',
    );
    expect(worse.code).toBe(1);
    expect(worse.stdout).toContain('8 case(s) broke, 0 fixed');
    expect(worse.stdout).toContain('broke sum-1: calculator → (no agent) "what is 2 plus 2"');
    expect(worse.stderr).toContain('Regressed past --max-drop: accuracy');
    const diff = await cli(project, 'diff', 'good.json', 'broken.json', '--max-drop', '0.8');
    expect([diff.code, diff.stdout.split('\n')[0]]).toEqual([
      0,
      'Compared with the baseline (demo): accuracy -80.0 pts, routing -70.0 pts',
    ]);
    expect((await cli(project, 'diff', 'broken.json', 'good.json', '--max-drop', '0')).code).toBe(0);
    expect(
      (await cli(project, 'diff', 'good.json', 'broken.json', '--gate', 'routing', '--max-drop', '0.5')).code,
    ).toBe(1);
  });

  it('lists every bad line of a dataset and exits 2', async () => {
    await put(
      project,
      'evals/bad.jsonl',
      '{"input":"hi","expect":{"agent":"clock"}}\n{"input":"x"}\nnot json\n',
    );
    const run = await cli(project, 'eval', 'src/app.ts', 'evals/bad.jsonl');
    expect(run.code).toBe(2);
    const lines = run.stderr.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      'switchboard: Invalid dataset evals/bad.jsonl',
      '  evals/bad.jsonl:2: expect: Invalid input: expected object, received undefined',
    ]);
    expect(lines[2]).toMatch(/^ {2}evals\/bad\.jsonl:3: not JSON/);
    expect((await cli(project, 'eval', 'src/nope.ts', 'evals/routing.jsonl')).code).toBe(2);
    expect((await cli(project, 'eval', 'src/app.ts', 'evals/routing.jsonl', '--concurrency', '0')).code).toBe(
      2,
    );
  });

  it('exports a session from a running server, and replays it with the app and with a broken router', async () => {
    const { agents, orchestrator } = await import(pathToFileURL(join(project, 'src/app.ts')).href);
    const app = new App({ name: 'demo', agents, logLevel: 'silent' });
    const server = await app.start(orchestrator, { port: 0 });
    for (const message of ['what time is it', '2 plus 2', 'hello'])
      await app.chat({ sessionId: 's1', message });
    const saved = await cli(project, 'export', server.url, 's1', '-o', 's1.jsonl');
    const missing = await cli(project, 'export', server.url, 'nope');
    expect([saved.code, missing.code, missing.stderr]).toEqual([
      0,
      2,
      'switchboard: Session nope: the server answered 404\n',
    ]);
    await server.close();
    const same = await cli(project, 'replay', 'src/app.ts', 's1.jsonl', '--min-agreement', '1');
    expect([same.code, same.stdout]).toEqual([
      0,
      'Replayed 5 decisions of 1 session(s) with demo: agreement 100.0% (5/5)\n',
    ]);
    const broken = await cli(project, 'replay', 'src/broken.ts', 's1.jsonl', '--min-agreement', '0.9');
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('agreement 60.0% (3/5)');
    expect(broken.stdout).toContain('    recorded clock (keywords: time)\n    replayed (no agent)');
  });
});
