import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { a2aAgent } from '@switchboard/runtime/a2a';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnListening } from '../../../packages/runtime/test/support/spawn-listening.js';
import { buildApp } from '../src/app.js';
import { currencyModel } from '../src/offline-model.js';

const script = fileURLToPath(new URL('../src/a2a-agent-server.ts', import.meta.url));

/** Starts `src/a2a-agent-server.ts` as its script does (node with tsx) on a free port. */
const startAgentServer = () => spawnListening(script);

describe('src/a2a-agent-server.ts, an A2A agent in a second process', () => {
  let agentServer: { child: ChildProcess; url: string };
  beforeAll(async () => {
    agentServer = await startAgentServer();
  });
  afterAll(async () => {
    agentServer.child.kill('SIGTERM');
    await once(agentServer.child, 'exit');
  });

  it('publishes an agent card that describes it', async () => {
    const card = (await (await fetch(`${agentServer.url}/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(card).toMatchObject({
      name: 'travel-desk',
      description: 'Answers travel questions: the weather in Lisbon, Oslo and Tokyo.',
      supportedInterfaces: [{ url: `${agentServer.url}/a2a`, protocolBinding: 'JSONRPC' }],
      skills: [{ id: 'weather', tags: ['weather', 'forecast', 'temperature'] }],
    });
  });

  it('joins the example app beside the MCP-backed agent: both routed by the keyword router', async () => {
    const travel = await a2aAgent({
      url: agentServer.url,
      name: 'travel',
      description: 'Travel questions, answered by an A2A agent in another process',
      keywords: ['weather', 'forecast', 'temperature'],
    });
    const model = await createScriptedModelServer({ script: [currencyModel, currencyModel] });
    const { app, orchestrator } = buildApp({
      model: 'gpt-4o-mini',
      apiKey: 'test',
      baseURL: model.url,
      remoteAgents: [travel],
      logLevel: 'silent',
    });
    try {
      app.mount(orchestrator);
      const remote = await app.chat({ message: 'What is the weather in Oslo?' });
      expect(remote.reply).toBe('Weather in Oslo: light snow, -3 °C.');
      expect(remote.steps[0]?.calls?.map((call) => call.agent)).toEqual(['travel']);
      const local = await app.chat({ message: 'convert 100 EUR to USD' });
      expect(local.reply).toBe('100 EUR = 108.7 USD.');
      expect(local.steps[0]?.calls?.map((call) => call.agent)).toEqual(['money']);
      model.assertDone();
    } finally {
      await app.close();
      await model.close();
    }
  });
});
