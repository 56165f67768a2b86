import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BUILT_IN_PROFILES, SEED_PROFILE } from '@switchboard/core';
import { describe, expect, it, vi } from 'vitest';

// Keeps docs/guides/strategies.md honest: its quick start runs and prints what the page shows; its defaults table is the code's.
const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const page = read('docs/guides/strategies.md');
const blocks = (language: string) =>
  [...page.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] as string,
  );

async function runBlock(code: string): Promise<string> {
  const file = new URL('./.strategies-doc.ts', import.meta.url);
  writeFileSync(file, code);
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
    printed.push(values.join(' '));
  });
  try {
    await import(/* @vite-ignore */ `${file.href}?run=${Date.now()}`);
  } finally {
    log.mockRestore();
    rmSync(file, { force: true });
  }
  return printed.join('\n');
}

/** The cells of the defaults table's row that starts with `label`. */
function row(label: string): string[] {
  const line = page.split('\n').find((text) => text.startsWith(`| ${label} |`));
  return (line ?? '')
    .split('|')
    .slice(2, -1)
    .map((cell) => cell.trim());
}

describe('docs/guides/strategies.md', () => {
  it('is linked from the README', () => {
    expect(read('README.md')).toContain('](docs/guides/strategies.md)');
  });

  it('quick start: runs and prints what the page shows', async () => {
    const [quickStart] = blocks('ts');
    const [shown] = blocks('text');
    expect(await runBlock(quickStart ?? '')).toBe(shown?.trimEnd());
  });

  it('states the retries, deadlines and hops the profiles have', () => {
    const { conservative, exploratory, fallback } = BUILT_IN_PROFILES;
    const seed = { ...fallback, ...SEED_PROFILE };
    const profiles = [conservative, exploratory, fallback, seed];
    const minutes = (ms = 0) => (ms < 120_000 ? `${ms / 1000} s` : `${ms / 60_000} min`);
    expect(row('retries of a failed call').slice(1)).toEqual(profiles.map((p) => String(p.agentRetries)));
    expect(row('deadline per turn').slice(1)).toEqual(profiles.map((p) => minutes(p.turnTimeoutMs)));
    expect(row('hops').slice(1)).toEqual(profiles.map((p) => String(p.maxHops)));
    expect(row('timeout per agent call').at(-1)).toBe(`${(SEED_PROFILE.agentTimeoutMs ?? 0) / 1000} s`);
  });
});
