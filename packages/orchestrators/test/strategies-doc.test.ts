import { readFileSync } from 'node:fs';
import { BUILT_IN_PROFILES, SEED_PROFILE } from '@switchboard/core';
import { describe, expect, it } from 'vitest';

// Keeps docs/guides/strategies.md honest: its defaults table is the code's (docs/test/code-blocks-run.test.ts runs its quick start).
const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const page = read('docs/guides/strategies.md');

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
