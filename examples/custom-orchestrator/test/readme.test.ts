import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

describe.each(['README.md', 'docs/guides/writing-an-orchestrator.md'])('%s', (page) => {
  const markdown = read(`../../../${page}`);
  const blocks = [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);

  it('shows the custom orchestrator exactly as the example that is type-checked and tested', () => {
    expect(blocks).toContain(read('../src/keyword-router.ts'));
  });

  it('shows start-up lines that the example really runs', () => {
    const main = read('../src/main.ts');
    const startBlock = blocks.find((block) => block?.includes('app.start(KeywordRouter'));
    expect(startBlock).toBeDefined();
    for (const line of startBlock!.trim().split('\n')) {
      expect(main).toContain(line.replace('{ port: 3000 }', '{ port: Number(process.env.PORT ?? 3000) }'));
    }
  });
});
