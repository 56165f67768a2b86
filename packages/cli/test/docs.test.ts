import { readFile } from 'node:fs/promises';
import { parseDataset } from '@switchboard/runtime/eval';
import { describe, expect, it } from 'vitest';
import { cli } from './cli-support.js';

const docs = await readFile(new URL('../../../docs/guides/evals.md', import.meta.url), 'utf8');
const blocks = (language: string) =>
  [...docs.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] as string,
  );

describe('docs/guides/evals.md', () => {
  it('shows datasets that parse', async () => {
    const [jsonl] = blocks('jsonl');
    const [yaml] = blocks('yaml');
    expect((await parseDataset(jsonl as string)).cases.map((item) => item.id)).toEqual([
      'time-1',
      'both',
      'joke',
      'refund',
    ]);
    expect((await parseDataset(yaml as string, { format: 'yaml' })).cases).toHaveLength(2);
  });

  it('uses only options the commands have', async () => {
    const commands = [...blocks('sh'), ...blocks('yaml')]
      .join('\n')
      .replace(/\\\n\s*/g, ' ')
      .replace(/\n\s+(?=--)/g, ' ')
      .matchAll(/switchboard (\w+)([^\n]*)/g);
    let checked = 0;
    for (const [, command, rest] of commands) {
      const help = (await cli(process.cwd(), command as string, '--help')).stdout;
      for (const [option] of (rest ?? '').matchAll(/--[a-z-]+/g)) {
        expect(help, `switchboard ${command} ${option}`).toContain(option);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });
});
