import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { limitsOf } from '../../runtime/src/retrieval/store-limits.js';

// Keeps docs/guides/retrieval.md honest: its code runs (on the scripted model server) and prints what the page shows; its limits are the code's.
const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const page = read('docs/guides/retrieval.md');
const blocks = (language: string) =>
  [...page.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] as string,
  );

const server = await createScriptedModelServer();
afterAll(() => server.close());

/** Runs one of the page's TypeScript blocks as a module beside this test (so its imports resolve), returning what it printed. */
async function runBlock(code: string, index: number): Promise<string> {
  const file = new URL(`./.retrieval-doc-${index}.ts`, import.meta.url);
  writeFileSync(file, code);
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
    printed.push(values.join(' '));
  });
  vi.stubEnv('OPENAI_API_KEY', 'test');
  vi.stubEnv('OPENAI_BASE_URL', server.url);
  try {
    await import(/* @vite-ignore */ `${file.href}?run=${Date.now()}`);
  } finally {
    log.mockRestore();
    vi.unstubAllEnvs();
    rmSync(file, { force: true });
  }
  return printed.join('\n');
}

describe('docs/guides/retrieval.md', () => {
  it('is linked from the README', () => {
    expect(read('README.md')).toContain('](docs/guides/retrieval.md)');
  });

  it('quick start: runs and prints the reply the page shows', async () => {
    const [quickStart] = blocks('ts');
    const [shown] = blocks('text');
    expect(await runBlock(quickStart ?? '', 0)).toBe(shown?.trimEnd());
  });

  it('perception: the example builds both agents', async () => {
    const perception = blocks('ts')[1] ?? '';
    expect(await runBlock(perception, 1)).toBe('perception trip-reader function');
  });

  it('states the store limits the code has', () => {
    const defaults = limitsOf('docs') as unknown as Record<string, number>;
    const rows = [...page.matchAll(/^\| [^|]+ \| (\d+) \| `(\w+)` \|$/gm)];
    expect(rows.map((row) => row[2])).toEqual(Object.keys(defaults));
    for (const [, value, option = ''] of rows) expect(defaults[option], option).toBe(Number(value));
  });
});
