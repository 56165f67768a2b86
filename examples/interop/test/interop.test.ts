import type { TurnResult } from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { currencyModel } from '../src/offline-model.js';

describe('the interop example', () => {
  it('routes a conversion to the money agent, whose model calls the MCP server’s tool', async () => {
    const model = await createScriptedModelServer({ script: [currencyModel, currencyModel] });
    const { app, orchestrator } = buildApp({
      model: 'gpt-4o-mini',
      apiKey: 'test',
      baseURL: model.url,
      logLevel: 'silent',
    });
    try {
      const response = await app.mount(orchestrator).request('/v1/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'convert 100 EUR to USD' }),
      });
      const turn = (await response.json()) as TurnResult;
      expect(turn.reply).toBe('100 EUR = 108.7 USD.');
      model.assertDone();
    } finally {
      await app.close();
      await model.close();
    }
  });

  it('answers other requests with the help agent', async () => {
    const { app, orchestrator } = buildApp({ model: 'gpt-4o-mini', apiKey: 'test', logLevel: 'silent' });
    try {
      const turn = await app.mount(orchestrator).chat({ message: 'hello there' });
      expect(turn.reply).toContain('I convert currencies');
    } finally {
      await app.close();
    }
  });
});
