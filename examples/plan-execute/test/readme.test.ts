import { readFileSync } from 'node:fs';
import type { TurnResult } from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { useSpanRecording } from '../../../packages/runtime/test/support/span-recording.js';
import { readmeTree, spanTree } from '../../../packages/runtime/test/support/span-tree.js';
import { buildApp } from '../src/app.js';
import { SimulatedDesk } from '../src/desk.js';
import { briefingModel } from '../src/offline-model.js';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const readme = read('../README.md');
const { name } = JSON.parse(read('../package.json')) as { name: string };

/** The rows of the README's plan table: `| \`id\`: … | \`agent\` | \`a\`, \`b\` or — |`, as plan steps. */
const planTable = (markdown: string) =>
  [...markdown.matchAll(/^\| `([^`]+)`: [^|]+\| `([^`]+)` \| ([^|]+) \|$/gm)].map(([, id, agent, after]) => ({
    id,
    agent,
    dependsOn: [...after!.matchAll(/`([^`]+)`/g)].map((match) => match[1]),
  }));

describe('README', () => {
  const recording = useSpanRecording();

  it('shows the plan and the trace tree of a turn as the runtime records them', async () => {
    const model = await createScriptedModelServer({ script: Array.from({ length: 4 }, () => briefingModel) });
    const { app, orchestrator } = buildApp({
      model: 'gpt-4o-mini', // the default model the README shows
      apiKey: 'test-key',
      baseURL: model.url,
      maxRetries: 0,
      desk: new SimulatedDesk({ latencyMs: 10 }),
      logLevel: 'silent',
    });
    try {
      const response = await app.mount(orchestrator).request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Write me a short briefing on honeybees' }),
      });
      const { traceId, steps } = (await response.json()) as TurnResult;
      const planned = steps[0]?.annotations?.steps as { id: string; agent: string; dependsOn: string[] }[];
      expect(planTable(readme)).toEqual(
        planned.map(({ id, agent, dependsOn }) => ({ id, agent, dependsOn })),
      );
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(readmeTree(readme, 'briefing-desk')).toBe(spanTree(recording().spans, traceId!));
      model.assertDone();
    } finally {
      await app.close();
      await model.close();
    }
  });

  it('starts the example with the package name it has', () => {
    expect(readme).toContain(`pnpm --filter ${name} start`);
  });
});
