import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { limitsOf } from '../../runtime/src/retrieval/store-limits.js';

// Keeps docs/guides/retrieval.md honest: its limits are the code's (docs/test/code-blocks-run.test.ts runs its code on the scripted model server).
const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const page = read('docs/guides/retrieval.md');

describe('docs/guides/retrieval.md', () => {
  it('is linked from the README', () => {
    expect(read('README.md')).toContain('](docs/guides/retrieval.md)');
  });

  it('states the store limits the code has', () => {
    const defaults = limitsOf('docs') as unknown as Record<string, number>;
    const rows = [...page.matchAll(/^\| [^|]+ \| (\d+) \| `(\w+)` \|$/gm)];
    expect(rows.map((row) => row[2])).toEqual(Object.keys(defaults));
    for (const [, value, option = ''] of rows) expect(defaults[option], option).toBe(Number(value));
  });
});
