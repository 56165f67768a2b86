import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Keeps docs/guides/background-turns.md honest: its first example runs as written.
const page = readFileSync(new URL('../../../docs/guides/background-turns.md', import.meta.url), 'utf8');
const example = page.match(/```ts\n([\s\S]*?)```/)?.[1] ?? '';
const file = new URL('./.background-doc-example.ts', import.meta.url);
afterAll(() => rmSync(file, { force: true }));

describe('docs/guides/background-turns.md', () => {
  it('queues a turn and reads it completed, as the page shows', async () => {
    expect(example).toContain('background: true');
    writeFileSync(file, example);
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
      printed.push(values.join(' '));
    });
    try {
      await import(/* @vite-ignore */ file.href);
    } finally {
      log.mockRestore();
    }
    expect(printed).toEqual(['completed Report ready: report for week 48']);
  });
});
