import { fileURLToPath } from 'node:url';
import { DEFAULT_INHERITED_ENV_VARS } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llmAgent } from '../../src/agents/llm-agent.js';
import type { LlmToolFilter } from '../../src/agents/llm-tool-filter.js';
import { App } from '../../src/app.js';
import { type McpTools, mcpTools } from '../../src/mcp.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import type { RecordedRequest, ScriptEntry } from '../../src/testing/scripted-script.js';
import { useSpanRecording } from '../support/span-recording.js';
import { startHttpToolServer } from './fixtures/tool-server.js';
import { modelClient, ToAssistant, toolResultsSeen } from './mcp-support.js';

/**
 * Each MCP call's deadline in these tests: a local call answers well within
 * it, and only a call the server leaves hanging waits it out.
 */
const TIMEOUT_MS = 300;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A streamable-HTTP MCP server whose tools count the calls that reach them. */
interface WarehouseServer {
  url: string;
  /** Calls that reached each tool, by tool name. */
  calls: Record<string, number>;
  close(): Promise<void>;
}

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

/**
 * Serves `lookup`, `refund`, `reserve` (it leaves its first `hangs` calls
 * unanswered) and `stock` (always an `isError` result) over streamable HTTP,
 * stateless: a server and transport per request, the counts shared.
 */
async function startWarehouseServer({ hangs = 0 }: { hangs?: number } = {}): Promise<WarehouseServer> {
  const calls: Record<string, number> = {};
  const reached = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
    return calls[name];
  };
  const warehouse = () => {
    const server = new McpServer({ name: 'warehouse', version: '1.0.0' });
    const order = { order: z.string() };
    const sku = { sku: z.string() };
    server.registerTool('lookup', { description: 'Looks an order up', inputSchema: order }, ({ order }) => {
      reached('lookup');
      return text(`${order}: shipped`);
    });
    server.registerTool('refund', { description: 'Refunds an order', inputSchema: order }, ({ order }) => {
      reached('refund');
      return text(`refunded ${order}`);
    });
    server.registerTool('reserve', { description: 'Reserves a product', inputSchema: sku }, ({ sku }) =>
      reached('reserve') <= hangs ? new Promise<CallToolResult>(() => {}) : text(`reserved ${sku}`),
    );
    server.registerTool('stock', { description: 'Stock level of a product', inputSchema: sku }, ({ sku }) => {
      reached('stock');
      return { isError: true, content: [{ type: 'text', text: `No product with SKU ${sku}` }] };
    });
    return server;
  };
  const served = await startHttpToolServer(0, warehouse);
  const started: WarehouseServer = { url: served.url, calls, close: served.close };
  cleanups.push(() => started.close());
  return started;
}

async function scripted(script: readonly ScriptEntry[]) {
  const model = await createScriptedModelServer({ script });
  cleanups.push(() => model.close());
  return model;
}

/**
 * An app whose `assistant` agent has the MCP tools, under a profile with
 * `agentRetries` (default 0) and retry delays of a few milliseconds.
 */
function assistantApp(
  model: ScriptedModelServer,
  tools: McpTools,
  { toolFilter, agentRetries = 0 }: { toolFilter?: LlmToolFilter; agentRetries?: number } = {},
) {
  const assistant = llmAgent({
    name: 'assistant',
    description: 'Answers with tools',
    model: 'tool-user-1',
    instructions: 'Use the tools.',
    tools: [tools],
    client: modelClient(model),
    stream: false,
    ...(toolFilter ? { toolFilter } : {}),
  });
  const app = new App({
    name: 'desk',
    agents: [assistant],
    logLevel: 'silent',
    profiles: { quick: { agentRetries, retryBaseDelayMs: 1, retryMaxDelayMs: 2 } },
    profile: 'quick',
  }).mount(ToAssistant);
  cleanups.push(() => app.close());
  return app;
}

/** The tool names a request offered the model. */
function offered(request: RecordedRequest | undefined): string[] | undefined {
  return request?.body.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.type));
}

describe('MCP tools run like the agent’s own tools', () => {
  const spans = useSpanRecording();

  it('retries a timed-out call per mcpTools’ retries, and the model gets the answer; an isError result is not retried', async () => {
    const warehouse = await startWarehouseServer({ hangs: 1 });
    const model = await scripted([
      {
        toolCalls: [
          { name: 'reserve', arguments: { sku: 'X-1' } },
          { name: 'stock', arguments: { sku: 'X-1' } },
        ],
      },
      'Reserved X-1.',
    ]);
    const app = assistantApp(model, mcpTools({ url: warehouse.url, retries: 1, timeoutMs: TIMEOUT_MS }));

    const turn = await app.chat({ message: 'reserve X-1' });

    expect(turn.reply).toBe('Reserved X-1.');
    expect(toolResultsSeen(model)).toEqual([
      'reserved X-1',
      "Error: 'stock' failed: No product with SKU X-1",
    ]);
    expect(warehouse.calls).toEqual({ reserve: 2, stock: 1 });
    expect(spans().named('tool reserve')[0]?.attributes['switchboard.tool.attempts']).toBe(2);
    model.assertDone();
  });

  it('tells the model the call timed out once its retries are used up', async () => {
    const warehouse = await startWarehouseServer({ hangs: 2 });
    const model = await scripted([
      { toolCalls: [{ name: 'reserve', arguments: { sku: 'X-1' } }] },
      'The warehouse does not answer.',
    ]);
    const app = assistantApp(model, mcpTools({ url: warehouse.url, retries: 1, timeoutMs: TIMEOUT_MS }));

    const turn = await app.chat({ message: 'reserve X-1' });

    expect(turn.reply).toBe('The warehouse does not answer.');
    expect(toolResultsSeen(model)).toEqual([
      `Error: 'reserve' timed out after ${TIMEOUT_MS} ms (2 attempts)`,
    ]);
    expect(warehouse.calls).toEqual({ reserve: 2 });
    model.assertDone();
  });

  it('retries per the turn profile’s agentRetries when mcpTools sets no retries', async () => {
    const warehouse = await startWarehouseServer({ hangs: 1 });
    const model = await scripted([{ toolCalls: [{ name: 'reserve', arguments: { sku: 'X-2' } }] }, 'Done.']);
    const app = assistantApp(model, mcpTools({ url: warehouse.url, timeoutMs: TIMEOUT_MS }), {
      agentRetries: 1,
    });

    await app.chat({ message: 'reserve X-2' });

    expect(toolResultsSeen(model)).toEqual(['reserved X-2']);
    expect(warehouse.calls).toEqual({ reserve: 2 });
    model.assertDone();
  });

  it('pauses the turn for a tool in the requiresApproval list before calling the server, and an approved call runs once', async () => {
    const warehouse = await startWarehouseServer();
    const model = await scripted([
      {
        toolCalls: [
          { id: 'tc_lookup', name: 'lookup', arguments: { order: 'A-7' } },
          { id: 'tc_refund', name: 'refund', arguments: { order: 'A-7' } },
        ],
      },
      'Refunded A-7.',
    ]);
    const app = assistantApp(model, mcpTools({ url: warehouse.url, requiresApproval: ['refund'] }));

    const paused = await app.chat({ message: 'refund A-7', sessionId: 'mcp-approve' });

    expect(paused.status).toBe('awaiting_approval');
    expect(paused.approvals).toEqual([
      expect.objectContaining({
        agent: 'assistant',
        tool: 'refund',
        toolUseId: 'tc_refund',
        input: { order: 'A-7' },
      }),
    ]);
    // Nothing of that round reached the server before the decision.
    expect(warehouse.calls).toEqual({});

    const done = await app.resolveApproval({
      sessionId: 'mcp-approve',
      approvalId: paused.approvals![0]!.id,
      decision: 'approve',
    });

    expect(done).toMatchObject({ status: 'completed', reply: 'Refunded A-7.' });
    expect(toolResultsSeen(model)).toEqual(['A-7: shipped', 'refunded A-7']);
    expect(warehouse.calls).toEqual({ lookup: 1, refund: 1 });
    model.assertDone();
  });

  it('never calls the server for a rejected call and tells the model; a tool not in the list runs without approval', async () => {
    const warehouse = await startWarehouseServer();
    const model = await scripted([
      { toolCalls: [{ id: 'tc_refund', name: 'refund', arguments: { order: 'B-1' } }] },
      'No refund then.',
      { toolCalls: [{ id: 'tc_lookup', name: 'lookup', arguments: { order: 'B-1' } }] },
      'B-1 has shipped.',
    ]);
    const app = assistantApp(model, mcpTools({ url: warehouse.url, requiresApproval: ['refund'] }));

    const paused = await app.chat({ message: 'refund B-1', sessionId: 'mcp-reject' });
    const rejected = await app.resolveApproval({
      sessionId: 'mcp-reject',
      approvalId: paused.approvals![0]!.id,
      decision: 'reject',
      comment: 'not today',
    });

    expect(rejected).toMatchObject({ status: 'completed', reply: 'No refund then.' });
    expect(toolResultsSeen(model)).toEqual([
      "Error: 'refund' was not run: the user rejected it: not today. Do not call it again for this request.",
    ]);
    expect(warehouse.calls).toEqual({});

    const lookup = await app.chat({ message: 'where is B-1?', sessionId: 'mcp-reject' });

    expect(lookup.status).toBe('completed');
    expect(lookup.approvals ?? []).toEqual([]);
    expect(lookup.reply).toBe('B-1 has shipped.');
    expect(warehouse.calls).toEqual({ lookup: 1 });
    model.assertDone();
  });

  it('offers the model only the MCP tools the agent’s toolFilter keeps, and refuses a call to another without reaching the server', async () => {
    const warehouse = await startWarehouseServer();
    const model = await scripted([
      { toolCalls: [{ id: 'tc_refund', name: 'refund', arguments: { order: 'C-3' } }] },
      'I cannot refund here.',
    ]);
    const filtered: string[][] = [];
    const noRefunds: LlmToolFilter = (tools) => {
      filtered.push(tools);
      return tools.filter((name) => name !== 'refund');
    };
    const app = assistantApp(model, mcpTools({ url: warehouse.url }), { toolFilter: noRefunds });

    const turn = await app.chat({ message: 'refund C-3' });

    expect(turn.reply).toBe('I cannot refund here.');
    expect(filtered[0]).toEqual(['lookup', 'refund', 'reserve', 'stock']);
    expect(model.requests.map(offered)).toEqual([
      ['lookup', 'reserve', 'stock'],
      ['lookup', 'reserve', 'stock'],
    ]);
    expect(toolResultsSeen(model)).toEqual([
      "Error: 'refund' was not run: it is not available at this point. Available tools: lookup, reserve, stock.",
    ]);
    expect(warehouse.calls).toEqual({});
    model.assertDone();
  });
});

describe('a stdio MCP server’s environment', () => {
  it('is the MCP SDK’s default environment plus env: never a variable of this process outside it', async () => {
    const secret = process.env.SWITCHBOARD_TEST_SECRET;
    process.env.SWITCHBOARD_TEST_SECRET = 'sk-do-not-leak';
    cleanups.push(() => {
      if (secret === undefined) delete process.env.SWITCHBOARD_TEST_SECRET;
      else process.env.SWITCHBOARD_TEST_SECRET = secret;
    });
    const model = await scripted([
      {
        toolCalls: [
          { name: 'environment', arguments: { names: ['EXTRA', 'PATH', 'SWITCHBOARD_TEST_SECRET'] } },
        ],
      },
      'Checked.',
    ]);
    const server = mcpTools({
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        fileURLToPath(new URL('./fixtures/env-reporting-server.ts', import.meta.url)),
      ],
      env: { EXTRA: 'yes' },
      name: 'env-reporting',
    });
    const app = assistantApp(model, server);

    const turn = await app.chat({ message: 'what do you see?' });

    expect(turn.reply).toBe('Checked.');
    const [seen] = toolResultsSeen(model);
    const { names, values } = JSON.parse(seen ?? '{}') as {
      names: string[];
      values: Record<string, string | null>;
    };
    expect(values).toEqual({ EXTRA: 'yes', PATH: process.env.PATH, SWITCHBOARD_TEST_SECRET: null });
    expect(names).toContain('EXTRA');
    expect(names).toContain('PATH');
    const allowed = new Set<string>([...DEFAULT_INHERITED_ENV_VARS, 'EXTRA']);
    expect(names.filter((name) => !allowed.has(name))).toEqual([]);
    model.assertDone();
  });
});
