import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { piiRedactor } from '../../src/guardrails/pii-redactor.js';
import { App, defineAgent, type ServerHandle } from '../../src/index.js';
import { apiKeys } from '../../src/server/auth.js';
import { echoAgent } from '../support/app-fixtures.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Always routes to `assistant` and prefixes its answer: a turn that skipped it shows no prefix. */
class ViaAssistant extends AbstractOrchestrator {
  static decisions = 0;
  protected handleMessage(conversation: Conversation) {
    ViaAssistant.decisions += 1;
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(`orchestrator: ${reply.content}`);
    return toolCall('assistant', currentUserMessage(conversation).content);
  }
}

const weather = defineAgent({
  name: 'weather',
  description: 'The forecast for a city',
  input: z.object({ city: z.string().min(1), days: z.number().int().min(1).max(7) }),
  run: (_message, context) => {
    const { city, days } = context.input as { city: string; days: number };
    return `${city}: sunny for ${days} days`;
  },
});

const refunds = defineAgent({
  name: 'refunds',
  description: 'Refunds an order',
  requiresApproval: true,
  run: (message) => `refunded ${message}`,
});

async function serve(
  exposeAgents: boolean | string[],
  options: Partial<ConstructorParameters<typeof App>[0]> = {},
): Promise<{ server: ServerHandle; orchestrator: typeof ViaAssistant }> {
  const app = new App({
    name: 'desk',
    agents: [echoAgent('assistant'), weather, refunds, echoAgent('chat')],
    logLevel: 'silent',
    mcp: { exposeAgents },
    ...options,
  });
  ViaAssistant.decisions = 0;
  const server = await app.start(ViaAssistant, { port: 0 });
  cleanups.push(() => server.close());
  return { server, orchestrator: ViaAssistant };
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  cleanups.push(() => client.close());
  return client;
}

interface Output {
  reply: string;
  sessionId: string;
  turnId: string;
  status: string;
}

interface SessionView {
  messages: { role: string; content: string }[];
  turns: { turnId: string; steps: { kind: string; calls: { agent: string; reason?: string }[] }[] }[];
}

describe('agents served as MCP tools', () => {
  it('lists chat and every agent, its description and its input schema (agent_chat for an agent named chat)', async () => {
    const { server } = await serve(true);
    const client = await connect(`${server.url}/mcp`);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['chat', 'assistant', 'weather', 'refunds', 'agent_chat']);
    const weatherTool = tools.find((tool) => tool.name === 'weather');
    expect(weatherTool?.description).toBe('The forecast for a city');
    expect(weatherTool?.inputSchema.properties).toHaveProperty('city');
    expect(weatherTool?.inputSchema.properties).toHaveProperty('sessionId');
    expect(tools.find((tool) => tool.name === 'assistant')?.inputSchema.required).toEqual(['message']);
  });

  it('calls the agent directly: its reply is the answer, and the session shows a direct call step', async () => {
    const { server, orchestrator } = await serve(['weather', 'assistant']);
    const client = await connect(`${server.url}/mcp`);

    const result = await client.callTool({ name: 'weather', arguments: { city: 'Oslo', days: 3 } });
    expect(result.isError).toBeFalsy();
    const output = result.structuredContent as unknown as Output;
    expect(output).toMatchObject({ reply: 'Oslo: sunny for 3 days', status: 'completed' });
    expect(orchestrator.decisions).toBe(0);

    const continued = await client.callTool({
      name: 'assistant',
      arguments: { message: 'and tomorrow?', sessionId: output.sessionId },
    });
    expect(continued.structuredContent).toMatchObject({
      reply: 'echo: and tomorrow?',
      sessionId: output.sessionId,
    });

    const session = (await (
      await fetch(`${server.url}/v1/sessions/${output.sessionId}`)
    ).json()) as SessionView;
    const [first, second] = session.turns;
    expect(first?.steps.map((step) => step.kind)).toEqual(['call', 'answer']);
    expect(first?.steps[0]?.calls[0]).toMatchObject({
      agent: 'weather',
      reason: expect.stringContaining('direct call'),
    });
    expect(second?.steps[0]?.calls[0]?.agent).toBe('assistant');
    expect(
      session.messages.filter((message) => message.role === 'assistant').map((message) => message.content),
    ).toEqual(['Oslo: sunny for 3 days', 'echo: and tomorrow?']);
  });

  it('gives a directly called agent its input as the input guardrails let it through (a redaction included)', async () => {
    const seen: unknown[] = [];
    const contact = defineAgent({
      name: 'contact',
      description: 'Files a contact request',
      input: z.object({ note: z.string() }),
      run: (_message, context) => {
        seen.push(context.input);
        return 'filed';
      },
    });
    const app = new App({
      name: 'desk',
      agents: [echoAgent('assistant'), contact],
      logLevel: 'silent',
      mcp: { exposeAgents: ['contact'] },
      guardrails: [piiRedactor({ stages: ['input'] })],
    });
    const server = await app.start(ViaAssistant, { port: 0 });
    cleanups.push(() => server.close());
    const client = await connect(`${server.url}/mcp`);
    const result = await client.callTool({
      name: 'contact',
      arguments: { note: 'mail me at ada@example.com' },
    });
    expect(result.structuredContent).toMatchObject({ reply: 'filed', status: 'completed' });
    expect(JSON.stringify(seen)).not.toContain('ada@example.com');
    expect(seen).toHaveLength(1);
  });

  it("reports input the agent's schema refuses as a failed turn, and bad arguments as a tool error", async () => {
    const { server } = await serve(['weather', 'assistant']);
    const client = await connect(`${server.url}/mcp`);
    const refused = await client.callTool({ name: 'weather', arguments: { city: 'Oslo', days: 30 } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ status: 'failed' });
    const invalid = await client.callTool({ name: 'assistant', arguments: { text: 'hi' } });
    expect(invalid.isError).toBe(true);
    expect(JSON.stringify(invalid.content)).toContain('Invalid arguments');
  });

  it('pauses for approval like any turn, and answers with the agent’s reply once approved', async () => {
    const { server, orchestrator } = await serve(['refunds']);
    const client = await connect(`${server.url}/mcp`);
    const paused = await client.callTool({ name: 'refunds', arguments: { message: 'order 42' } });
    const output = paused.structuredContent as unknown as Output;
    expect(output.status).toBe('awaiting_approval');

    const session = (await (await fetch(`${server.url}/v1/sessions/${output.sessionId}`)).json()) as {
      turns: { approvals: { id: string; agent: string }[] }[];
    };
    const approval = session.turns[0]?.approvals[0];
    expect(approval?.agent).toBe('refunds');
    const resolved = await fetch(`${server.url}/v1/sessions/${output.sessionId}/approvals/${approval?.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(await resolved.json()).toMatchObject({ reply: 'refunded order 42', status: 'completed' });
    expect(orchestrator.decisions).toBe(0);
  });

  it('lists only the agents named, and refuses a call of one that is not', async () => {
    const { server } = await serve(['weather']);
    const client = await connect(`${server.url}/mcp`);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['chat', 'weather']);
    const refused = await client.callTool({ name: 'assistant', arguments: { message: 'hi' } });
    expect(refused.isError).toBe(true);
    const misnamed = new App({
      name: 'desk',
      agents: [weather],
      logLevel: 'silent',
      mcp: { exposeAgents: ['nobody'] },
    });
    await expect(misnamed.start(ViaAssistant, { port: 0 })).rejects.toThrow(/nobody/);
  });

  it('requires an API key when the app has auth, and runs the turn in the key’s tenant', async () => {
    const { server } = await serve(['assistant'], {
      auth: apiKeys({ keys: { 'mcp-agents-key-0001': { tenantId: 'acme' } } }),
    });
    const anonymous = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(
      anonymous.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`))),
    ).rejects.toThrow();

    const headers = { authorization: 'Bearer mcp-agents-key-0001' };
    const client = await connect(`${server.url}/mcp`, headers);
    const result = await client.callTool({ name: 'assistant', arguments: { message: 'hi' } });
    const output = result.structuredContent as unknown as Output;
    expect(output).toMatchObject({ reply: 'echo: hi', status: 'completed' });
    expect((await fetch(`${server.url}/v1/sessions/${output.sessionId}`, { headers })).status).toBe(200);
  });
});
