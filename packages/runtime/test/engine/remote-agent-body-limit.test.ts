import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { App, remoteAgent } from '../../src/index.js';
import { Relay } from '../support/relay-orchestrator.js';

/** A server whose chat endpoint answers 200 and then streams JSON-ish bytes until the client hangs up. */
async function startEndlessServer(): Promise<{ url: string; server: Server; hungUp: Promise<number> }> {
  let resolveHungUp: (sent: number) => void = () => {};
  const hungUp = new Promise<number>((resolve) => {
    resolveHungUp = resolve;
  });
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const chunk = Buffer.alloc(16 * 1024, 'a');
    response.write('{"reply":"');
    const timer = setInterval(() => {
      response.write(chunk);
      sent += chunk.length;
    }, 1);
    response.on('close', () => {
      clearInterval(timer);
      resolveHungUp(sent);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server, hungUp };
}

describe('remoteAgent response size', () => {
  let server: Server | undefined;
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('stops reading past maxResponseBytes, hangs up, and fails the call with a clear error', async () => {
    const endless = await startEndlessServer();
    server = endless.server;
    const agent = remoteAgent({
      name: 'flood',
      description: 'Never stops',
      url: endless.url,
      maxResponseBytes: 64 * 1024,
    });
    // Error details on: the test reads what the remote agent says went wrong.
    app = new App({
      name: 'front',
      agents: [agent],
      agentTimeoutMs: 5_000,
      exposeErrorDetails: true,
      logger: () => {},
    }).mount(Relay);

    const result = await app.chat({ message: 'hi' });
    // Cut off at the cap, before the agent's 5 s timeout: that would have failed the call as timed out.
    expect(result.reply).toMatch(
      /^error: Agent 'flood' failed: http:\/\/127\.0\.0\.1:\d+\/v1\/chat answered with more than 65536 bytes \(maxResponseBytes\)$/,
    );
    // The connection was closed, so the remote stops sending.
    const sent = await endless.hungUp;
    expect(sent).toBeLessThan(4 * 1024 * 1024);
  });

  it('fails without reading an answer whose content-length is over the cap', async () => {
    server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 5000 });
      response.write('{"reply":"');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = remoteAgent({
      name: 'big',
      description: 'Announces too much',
      url: `http://127.0.0.1:${port}`,
      maxResponseBytes: 4096,
    });
    app = new App({ name: 'front', agents: [agent], exposeErrorDetails: true, logger: () => {} }).mount(
      Relay,
    );
    expect((await app.chat({ message: 'hi' })).reply).toMatch(/answered with more than 4096 bytes/);
  });

  it('rejects a maxResponseBytes that is not a positive whole number', () => {
    for (const maxResponseBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() =>
        remoteAgent({ name: 'bad', description: 'x', url: 'http://127.0.0.1:1', maxResponseBytes }),
      ).toThrow(/invalid maxResponseBytes/);
    }
  });

  it('reads an answer up to the cap', async () => {
    const reply = 'x'.repeat(1000);
    server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ reply, status: 'completed' }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    app = new App({
      name: 'front',
      agents: [remoteAgent({ name: 'fits', description: 'Small answers', url, maxResponseBytes: 1100 })],
      logger: () => {},
    }).mount(Relay);
    expect((await app.chat({ message: 'hi' })).reply).toBe(`ok: ${reply}`);
  });
});
