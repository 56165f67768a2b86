import { readFileSync } from 'node:fs';
import type { TurnResult } from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { useSpanRecording } from '../../../packages/runtime/test/support/span-recording.js';
import { readmeTree, spanTree } from '../../../packages/runtime/test/support/span-tree.js';
import { buildApp } from '../src/app.js';
import { travelDeskModel } from '../src/offline-model.js';
import { SimulatedTravelServices } from '../src/travel-services.js';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const readme = read('../README.md');
const { name } = JSON.parse(read('../package.json')) as { name: string };

describe('README', () => {
  const recording = useSpanRecording();

  it('shows the trace tree of a turn as the runtime records it', async () => {
    const model = await createScriptedModelServer({ script: [travelDeskModel, travelDeskModel] });
    const { app, orchestrator } = buildApp({
      model: 'gpt-4o-mini', // the default model the README shows
      apiKey: 'test-key',
      baseURL: model.url,
      maxRetries: 0,
      services: new SimulatedTravelServices({ latencyMs: 10 }),
      logLevel: 'silent',
    });
    try {
      const response = await app.mount(orchestrator).request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Plan a weekend in Rome: flights, a hotel and the weather' }),
      });
      const { traceId } = (await response.json()) as TurnResult;
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(readmeTree(readme, 'travel-desk')).toBe(spanTree(recording().spans, traceId!));
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
