import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App, type ServerHandle } from '../../src/index.js';
import { apiKeys } from '../../src/server/auth.js';
import { echoAgent } from '../support/app-fixtures.js';
import { ToAssistant } from './mcp-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(options: Partial<ConstructorParameters<typeof App>[0]> = {}): Promise<ServerHandle> {
  const app = new App({
    name: 'desk',
    agents: [echoAgent('assistant')],
    logLevel: 'silent',
    mcp: true,
    ...options,
  });
  const server = await app.start(ToAssistant, { port: 0 });
  cleanups.push(() => server.close());
  return server;
}

async function connect(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headers ?? {} } }),
  );
  cleanups.push(() => client.close());
  return client;
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('the MCP endpoint', () => {
  it("offers a chat tool that runs a turn and returns the orchestrator's answer, the session id and the status", async () => {
    const server = await serve();
    const client = await connect(`${server.url}/mcp`);

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['chat']);
    expect(tools[0]?.outputSchema?.properties).toHaveProperty('status');

    const first = await client.callTool({ name: 'chat', arguments: { message: 'hello' } });
    expect(first.isError).toBeFalsy();
    expect(first.content).toContainEqual({ type: 'text', text: 'echo: hello' });
    const output = first.structuredContent as { reply: string; sessionId: string; status: string };
    expect(output).toMatchObject({ reply: 'echo: hello', status: 'completed' });

    const second = await client.callTool({
      name: 'chat',
      arguments: { message: 'again', sessionId: output.sessionId },
    });
    expect(second.structuredContent).toMatchObject({ sessionId: output.sessionId, reply: 'echo: again' });
    const response = await fetch(`${server.url}/v1/sessions/${output.sessionId}`);
    const history = (await response.json()) as { messages: { role: string }[] };
    expect(history.messages.filter((message) => message.role === 'user')).toHaveLength(2);
  });

  it('reports invalid chat arguments as a tool error', async () => {
    const server = await serve();
    const client = await connect(`${server.url}/mcp`);
    const result = await client.callTool({ name: 'chat', arguments: { message: '' } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('message');
  });

  it('requires an API key when the app has auth, like every route', async () => {
    const server = await serve({ auth: apiKeys({ keys: { 'mcp-test-key-0001': { tenantId: 'acme' } } }) });
    const anonymous = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: initialize,
    });
    expect(anonymous.status).toBe(401);

    const client = await connect(`${server.url}/mcp`, { authorization: 'Bearer mcp-test-key-0001' });
    const result = await client.callTool({ name: 'chat', arguments: { message: 'hi' } });
    expect(result.structuredContent).toMatchObject({ reply: 'echo: hi', status: 'completed' });
  });

  it("counts against the key's rate limit like every route: past it, 429 with Retry-After, and no turn runs", async () => {
    let runs = 0;
    const counted = defineAgent({
      name: 'assistant',
      description: 'Counts its calls',
      run: (message) => {
        runs++;
        return `echo: ${message}`;
      },
    });
    const server = await serve({
      agents: [counted],
      auth: apiKeys({ keys: { 'mcp-test-key-0002': { tenantId: 'acme' } } }),
      rateLimit: { requestsPerMinute: 3 },
    });
    const post = () =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: 'Bearer mcp-test-key-0002',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'chat', arguments: { message: 'count me', sessionId: 'ses_rate' } },
        }),
      });
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let index = 0; index < 5; index++) {
      const response = await post();
      statuses.push(response.status);
      if (response.status === 429) refused ??= response;
      await response.text();
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    // Only the three calls within the limit ran a turn.
    expect(runs).toBe(3);
  });

  it('refuses requests from another site’s page, and bodies over the limit', async () => {
    const server = await serve({ maxBodyBytes: 2_000 });
    const post = (headers: Record<string, string>, body = initialize) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ origin: server.url })).status).toBe(200);
    expect((await post({}, `${initialize}${' '.repeat(3_000)}`)).status).toBe(413);
    expect((await fetch(`${server.url}/mcp`)).status).toBe(405);
  });

  it('is not served without the mcp option', async () => {
    const server = await serve({ mcp: false });
    expect((await fetch(`${server.url}/mcp`, { method: 'POST', body: initialize })).status).toBe(404);
  });
});
