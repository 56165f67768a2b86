import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

/** The `ts` blocks of a markdown text. */
const tsBlocks = (markdown: string) =>
  [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** Removes the indentation every non-blank line shares. */
function dedent(lines: readonly string[]): string {
  const indents = lines.filter((line) => line.trim()).map((line) => /^ */.exec(line)![0].length);
  const shared = Math.min(...indents);
  return lines.map((line) => line.slice(shared)).join('\n');
}

/**
 * True when `block` is a run of consecutive lines of `source`, as written
 * there but for the indentation they all share (a snippet cut out of a
 * function body reads at the left margin).
 */
function isExcerptOf(block: string, source: string): boolean {
  const wanted = block.replace(/\n$/, '');
  const length = wanted.split('\n').length;
  const lines = source.split('\n');
  for (let start = 0; start + length <= lines.length; start += 1) {
    if (dedent(lines.slice(start, start + length)) === wanted) return true;
  }
  return false;
}

describe('docs/guides/human-approval.md', () => {
  const guide = read('../../../docs/guides/human-approval.md');
  const start = guide.indexOf('# Human approval');
  const blocks = tsBlocks(guide);
  const sources = [
    read('../src/agents.ts'),
    read('../src/app.ts'),
    read('../src/support-desk.ts'),
    read('./approvals.test.ts'),
  ];

  it('has the approvals page with its snippets', () => {
    expect(start).toBeGreaterThanOrEqual(0);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
  });

  it('shows every snippet of the page exactly as the example that is type-checked and tested', () => {
    for (const block of blocks) {
      expect(
        sources.some((source) => isExcerptOf(block, source)),
        `not in examples/approvals:\n${block}`,
      ).toBe(true);
    }
  });

  it('shows the refunds agent with its approval rule and the app-wide policy', () => {
    expect(blocks.some((block) => block.includes('requiresApproval: (call) =>'))).toBe(true);
    expect(blocks.some((block) => block.includes('approvalPolicy:'))).toBe(true);
    expect(blocks.some((block) => block.includes('app.resolveApproval('))).toBe(true);
  });
});
