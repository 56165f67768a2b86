import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

/** The `ts` blocks of a markdown text. */
const tsBlocks = (markdown: string) =>
  [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** True when `block` is a run of consecutive lines of `source`, but for the indentation they share. */
function isExcerptOf(block: string, source: string): boolean {
  const wanted = block.replace(/\n$/, '').split('\n');
  const lines = source.split('\n');
  for (let start = 0; start + wanted.length <= lines.length; start += 1) {
    const slice = lines.slice(start, start + wanted.length);
    const indent = Math.min(
      ...slice.filter((line) => line.trim()).map((line) => /^ */.exec(line)![0].length),
    );
    if (slice.map((line) => line.slice(indent)).join('\n') === wanted.join('\n')) return true;
  }
  return false;
}

describe("The agents guide's LangGraph section", () => {
  const guide = read('../../../docs/guides/agents.md');
  const start = guide.indexOf('\n## Hosting LangGraph graphs');
  const end = guide.indexOf('\n## ', start + 1);
  const section = guide.slice(start, end === -1 ? undefined : end);
  const sources = [read('../src/app.ts'), read('../src/returns-graph.ts')];

  it('shows snippets that are the example, as type-checked and tested', () => {
    const blocks = tsBlocks(section);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(blocks.length).toBe(2);
    for (const block of blocks) {
      expect(
        sources.some((source) => isExcerptOf(block, source)),
        `not in examples/langgraph-agent:\n${block}`,
      ).toBe(true);
    }
  });

  it('states the conformance suite version the runtime pins', () => {
    const pinned = (
      JSON.parse(read('../../../packages/runtime/package.json')) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies['@langchain/langgraph-checkpoint-validation'];
    expect(section).toContain(`\`@langchain/langgraph-checkpoint-validation\` ${pinned}`);
  });
});
