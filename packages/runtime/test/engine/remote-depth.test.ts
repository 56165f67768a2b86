import { RequestContext } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { type Agent, App, defineAgent, remoteAgent } from '../../src/index.js';
import { Relay } from '../support/relay-orchestrator.js';

describe('nesting depth across servers', () => {
  it('stops a server that calls itself through a remote agent at maxCallDepth, with a clear error', async () => {
    const depths: number[] = [];
    let remote: Agent | undefined;
    // The agent calls this very server: without a limit, it would loop until something broke.
    const again = defineAgent({
      name: 'again',
      description: 'Asks the same server again',
      run: (message, context) => {
        depths.push(RequestContext.current().depth);
        return (remote as Agent).run(message, context);
      },
    });
    const app = new App({ name: 'loop', agents: [again], logLevel: 'silent' });
    const server = await app.start(Relay, { port: 0 });
    try {
      remote = remoteAgent({ name: 'again', description: 'This server', url: server.url });
      const response = await fetch(`${server.url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hello' }),
      });
      const body = (await response.json()) as { reply: string };
      // Depths 0 to 3 ran a turn; the request at depth 4 was refused before any turn.
      expect(depths).toEqual([0, 1, 2, 3]);
      expect(body.reply).toContain("Agent 'again' failed (nesting_depth_exceeded)");

      const refused = await fetch(`${server.url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-switchboard-depth': '4' },
        body: JSON.stringify({ message: 'hello' }),
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: { code: 'nesting_depth_exceeded' } });
      const bad = await fetch(`${server.url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-switchboard-depth': 'deep' },
        body: JSON.stringify({ message: 'hello' }),
      });
      expect(bad.status).toBe(400);
    } finally {
      await server.close();
    }
  });
});
