import { readFileSync } from 'node:fs';
import type { MessageItem } from '@switchboard/core';
import type { TurnResult } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { useSpanRecording } from '../../../packages/runtime/test/support/span-recording.js';
import { readmeTree, spanTree } from '../../../packages/runtime/test/support/span-tree.js';
import { buildApp } from '../src/app.js';
import { SimulatedSearch } from '../src/library.js';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const readme = read('../README.md');
const { name } = JSON.parse(read('../package.json')) as { name: string };

/** The question the README's `curl` asks. */
const DEMO = 'I am jane@example.com. How do heat pumps work in cold climates, and what do they cost?';

/** Removes the indentation every non-blank line shares. */
function dedent(lines: readonly string[]): string {
  const indents = lines.filter((line) => line.trim()).map((line) => /^ */.exec(line)![0].length);
  const shared = Math.min(...indents);
  return lines.map((line) => line.slice(shared)).join('\n');
}

/** True when `block` is a run of consecutive lines of `source`, but for the indentation they share. */
function isExcerptOf(block: string, source: string): boolean {
  const wanted = block.replace(/\n$/, '');
  const length = wanted.split('\n').length;
  const lines = source.split('\n');
  for (let start = 0; start + length <= lines.length; start += 1) {
    if (dedent(lines.slice(start, start + length)) === wanted) return true;
  }
  return false;
}

/** The README's steps table: `hop kind agent-or-label` of each row, without the comments. */
function readmeSteps(markdown: string): string[] | undefined {
  const block = [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .find((text) => text.startsWith('hop '));
  return block
    ?.trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.split(/\s+/).slice(0, 3).join(' '));
}

describe('README', () => {
  const recording = useSpanRecording();

  it('shows the steps and the trace tree of the demo question as the runtime records them', async () => {
    expect(readme).toContain(JSON.stringify({ sessionId: 'demo', message: DEMO }));
    // As `pnpm start` runs it: the first search finds the backend busy.
    const { app, orchestrator } = buildApp({
      search: new SimulatedSearch({ busy: 1, latencyMs: 5 }),
      logLevel: 'silent',
    });
    try {
      const response = await app.mount(orchestrator).request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: 'demo', message: DEMO }),
      });
      const { traceId, steps, status } = (await response.json()) as TurnResult;
      expect(status).toBe('completed');
      expect(readmeSteps(readme)).toEqual(
        steps.map((step) =>
          [step.hop, step.kind, step.label ?? step.calls.map((call) => call.agent).join(',')].join(' '),
        ),
      );
      const [rewrite] = (steps[0]?.annotations?.rewrites ?? []) as { reason?: string }[];
      expect(readme).toContain(`pii rewrote the message: "${rewrite?.reason}"`);
      expect(readmeTree(readme, 'research-desk')).toBe(spanTree(recording().spans, traceId!));

      const { messages } = (await (await app.request('/v1/sessions/demo')).json()) as {
        messages: MessageItem[];
      };
      const shown = /The stored message reads `([^`…]+)…`/.exec(readme)?.[1];
      expect(shown && messages[0]?.content.startsWith(shown)).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('shows every code snippet exactly as the example has it', () => {
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const sources = [read('../src/app.ts'), read('../src/library.ts')];
    for (const block of blocks) {
      expect(
        sources.some((source) => isExcerptOf(block, source)),
        `not in the example's sources:\n${block}`,
      ).toBe(true);
    }
  });

  it('starts the example with the package name it has', () => {
    expect(readme).toContain(`pnpm --filter ${name} start`);
  });
});
