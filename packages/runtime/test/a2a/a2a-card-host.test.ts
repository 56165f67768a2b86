import { request } from 'node:http';
import { AgentCard } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { ConfigurationError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { withAbsoluteUrls } from '../../src/a2a/a2a-card.js';
import type { A2aOptions } from '../../src/a2a/a2a-options.js';
import type { ServerHandle } from '../../src/app.js';
import { buildApp, createApp, echoAgent } from '../support/app-fixtures.js';
import { asTask, userMessage } from './a2a-client.js';

/** The endpoint URL of the card the server at `url` answers for a request with this `Host` header. */
function cardUrlFor(url: string, host: string): Promise<{ endpoint: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { hostname, port, path: '/.well-known/agent-card.json', headers: { host } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => {
          const card = JSON.parse(body) as { supportedInterfaces: Array<{ url: string }> };
          resolve({ endpoint: card.supportedInterfaces[0]!.url, body });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the agent card behind a Host header', () => {
  let server: ServerHandle | undefined;
  afterEach(() => server?.close());

  const start = async (a2a: A2aOptions | true) => {
    const { app, orchestrator } = buildApp({ agents: [echoAgent()], a2a });
    server = await app.start(orchestrator, { port: 0 });
    return server;
  };

  it('never names a Host it does not trust: evil.example gets the bare path', async () => {
    const { url } = await start(true);
    const evil = await cardUrlFor(url, 'evil.example');
    expect(evil.endpoint).toBe('/a2a');
    expect(evil.body).not.toContain('evil.example');
    // This machine's own names are trusted: a local client gets a URL it can call.
    const port = new URL(url).port;
    expect((await cardUrlFor(url, `127.0.0.1:${port}`)).endpoint).toBe(`http://127.0.0.1:${port}/a2a`);
    expect((await cardUrlFor(url, `localhost:${port}`)).endpoint).toBe(`http://localhost:${port}/a2a`);
  });

  it('names the origin of a Host in trustedHosts (a name on any port, name:port on that one)', async () => {
    const { url } = await start({ trustedHosts: ['desk.internal', 'desk.example.com:8443'] });
    expect((await cardUrlFor(url, 'desk.internal:8080')).endpoint).toBe('http://desk.internal:8080/a2a');
    expect((await cardUrlFor(url, 'desk.example.com:8443')).endpoint).toBe(
      'http://desk.example.com:8443/a2a',
    );
    expect((await cardUrlFor(url, 'desk.example.com:9999')).endpoint).toBe('/a2a');
    expect((await cardUrlFor(url, 'evil.example')).endpoint).toBe('/a2a');
  });

  it('with the bare path, is still callable by a client that resolves it against the card URL (as a2aAgent does)', async () => {
    const { url } = await start(true);
    const { body } = await cardUrlFor(url, 'travel-agent:3001');
    const card = withAbsoluteUrls(AgentCard.fromJSON(JSON.parse(body)), `${url}/.well-known/agent-card.json`);
    expect(card.supportedInterfaces[0]?.url).toBe(`${url}/a2a`);
    const client = await new ClientFactory().createFromAgentCard(card);
    const task = asTask(await client.sendMessage(userMessage({ text: 'hi' })));
    expect(task.artifacts.length).toBeGreaterThan(0);
  });

  it('names publicUrl whatever the Host', async () => {
    const { url } = await start({ publicUrl: 'https://desk.example.com/', path: '/agents/a2a' });
    expect((await cardUrlFor(url, 'evil.example')).endpoint).toBe('https://desk.example.com/agents/a2a');
  });

  it('refuses a trusted host that is a URL, not a Host value', () => {
    for (const trustedHosts of [['https://desk.example.com'], ['desk.example.com/a2a'], ['']])
      expect(() => createApp({ agents: [echoAgent()], a2a: { trustedHosts } })).toThrow(ConfigurationError);
  });
});
