import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The README fits on a few screens, holds the two commands a newcomer needs, and every command in it is
// one that the tests or CI (.ci/run, which runs the tests) run as written.
const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const readme = read('README.md');
const pnpmVersion = (JSON.parse(read('package.json')) as { packageManager: string }).packageManager.replace(
  /^pnpm@/,
  '',
);

/** The commands of the README's shell blocks, each `a && b` as two, and those it shows inline. */
function commands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].flatMap((match) =>
    match[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean)
      .flatMap((line) => line.split('&&').map((command) => command.trim())),
  );
  const inline = [
    ...markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/`((?:pnpm|npm|npx|node) [^`]+)`/g),
  ].map((match) => match[1]!);
  return [...blocks, ...inline];
}

/** Who runs each command the README may show, as written there: a file and the text in it that runs it. */
const RUN_BY: Record<string, { file: string; runs: string }[]> = {
  [`npm install -g pnpm@${pnpmVersion}`]: [{ file: '.ci/run', runs: 'npm install -g "pnpm@$PNPM_VERSION"' }],
  'pnpm install': [{ file: '.ci/run', runs: '\npnpm install --frozen-lockfile\n' }],
  'pnpm start': [
    { file: 'apps/server/test/production-start.test.ts', runs: "stopDuringTurn(context, 'start'," },
  ],
  'pnpm test': [{ file: '.ci/run', runs: '\npnpm test\n' }],
  'pnpm test:pack': [{ file: '.ci/run', runs: '\npnpm test:pack\n' }],
  'pnpm docs:build': [
    { file: '.ci/run', runs: '\npnpm docs:build\n' },
    { file: 'docs/test/site.test.ts', runs: "execFileSync('pnpm', ['docs:build']" },
  ],
};

describe('the README', () => {
  it('fits on a few screens: at most 200 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('holds the two commands: the server on its embedded defaults, and the tests', () => {
    const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]!.trim());
    expect(blocks).toContain(`npm install -g pnpm@${pnpmVersion} && pnpm install && pnpm start`);
    expect(blocks).toContain(`npm install -g pnpm@${pnpmVersion} && pnpm install && pnpm test`);
    expect(read('.ci/run')).toContain(`PNPM_VERSION=${pnpmVersion}\n`);
  });

  it('shows only commands that a test or CI runs, as written', () => {
    const shown = commands(readme);
    expect(shown.length).toBeGreaterThanOrEqual(7);
    for (const command of shown) {
      const runners = RUN_BY[command];
      expect(
        runners,
        `nothing is known to run "${command}": add it to RUN_BY with what runs it`,
      ).toBeDefined();
      for (const { file, runs } of runners!) expect(read(file), `${file} runs ${command}`).toContain(runs);
    }
  });

  it('reads every command of a shell block and every inline one', () => {
    expect(commands('```sh\na && b   # note\nc\n```\nsay `pnpm x` and `other`\n')).toEqual([
      'a',
      'b',
      'c',
      'pnpm x',
    ]);
  });
});
