import { afterEach, describe, expect, it } from 'vitest';
import { llmAgent } from '../../src/agents/llm-agent.js';
import { App } from '../../src/app.js';
import { type McpTools, mcpTools } from '../../src/mcp.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import type { ScriptEntry } from '../../src/testing/scripted-script.js';
import { useSpanRecording } from '../support/span-recording.js';
import { startHttpToolServer } from './fixtures/tool-server.js';
import { modelClient, STDIO_TOOL_SERVER, ToAssistant, toolResultsSeen } from './mcp-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function assistantApp(model: ScriptedModelServer, tools: McpTools) {
  const assistant = llmAgent({
    name: 'assistant',
    description: 'Answers with tools',
    model: 'tool-user-1',
    instructions: 'Use the tools.',
    tools: [tools],
    client: modelClient(model),
    stream: false,
  });
  const app = new App({ name: 'desk', agents: [assistant], logLevel: 'silent' }).mount(ToAssistant);
  cleanups.push(() => app.close());
  return app;
}

async function scripted(script: readonly ScriptEntry[]) {
  const model = await createScriptedModelServer({ script });
  cleanups.push(() => model.close());
  return model;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('mcpTools', () => {
  const spans = useSpanRecording();

  it('lists a stdio server’s tools with the allow and deny lists and the prefix, schemas as the server gave them', async () => {
    const signal = new AbortController().signal;
    const denied = mcpTools({ ...STDIO_TOOL_SERVER, deny: ['delete_everything', 'crash'], prefix: 'shop_' });
    cleanups.push(() => denied.close?.() ?? Promise.resolve());
    const tools = await denied.listTools(signal);
    expect(tools.map((tool) => tool.name).sort()).toEqual(['shop_add', 'shop_stock', 'shop_whoami']);
    const add = tools.find((tool) => tool.name === 'shop_add');
    expect(add?.definition.function.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    // Listed once per connection: the same tools again.
    expect(await denied.listTools(signal)).toBe(tools);

    const allowed = mcpTools({ ...STDIO_TOOL_SERVER, allow: ['add', 'stock'] });
    cleanups.push(() => allowed.close?.() ?? Promise.resolve());
    expect((await allowed.listTools(signal)).map((tool) => tool.name).sort()).toEqual(['add', 'stock']);
  });

  it('runs a turn where the model calls a tool over streamable HTTP and answers with its result, the tool span under the agent span', async () => {
    const toolServer = await startHttpToolServer();
    cleanups.push(() => toolServer.close());
    const model = await scripted([
      { toolCalls: [{ name: 'calc_add', arguments: { a: 2, b: 3 } }] },
      (request) => {
        const result = request.body.messages.at(-1);
        return `2 + 3 = ${String(result?.content).match(/The sum is (\d+)/)?.[1]}`;
      },
    ]);
    const app = assistantApp(model, mcpTools({ url: toolServer.url, prefix: 'calc_', allow: ['add'] }));

    const turn = await app.chat({ message: 'what is 2 + 3?' });

    expect(turn.status).toBe('completed');
    expect(turn.reply).toBe('2 + 3 = 5');
    expect(toolResultsSeen(model)).toEqual(['The sum is 5\n{"sum":5}']);
    expect(
      model.requests[0]?.body.tools?.map((tool) => tool.type === 'function' && tool.function.name),
    ).toEqual(['calc_add']);
    const [toolSpan] = spans().named('tool calc_add');
    expect(toolSpan).toBeDefined();
    expect(spans().parentOf(toolSpan!)?.name).toBe('agent assistant');
    model.assertDone();
  });

  it('checks arguments against the tool’s JSON schema before calling it, and reports a failing tool as an error the model sees', async () => {
    const toolServer = await startHttpToolServer();
    cleanups.push(() => toolServer.close());
    const model = await scripted([
      { toolCalls: [{ name: 'add', arguments: { a: 'two', b: 3 } }] },
      { toolCalls: [{ name: 'stock', arguments: { sku: 'X-1' } }] },
      'That product does not exist.',
    ]);
    const app = assistantApp(model, mcpTools({ url: toolServer.url }));

    const turn = await app.chat({ message: 'add two and three, then check X-1' });

    expect(turn.reply).toBe('That product does not exist.');
    const [invalid, failed] = toolResultsSeen(model);
    expect(invalid).toMatch(/^Error: invalid arguments for 'add': .*a must be number/);
    expect(failed).toBe("Error: 'stock' failed: No product with SKU X-1");
    const [stockSpan] = spans().named('tool stock');
    expect(stockSpan?.status.code).toBe(2);
    model.assertDone();
  });

  it('tells the model when the server died during the call, starts it again on the next turn, and stops it on app.close()', async () => {
    const model = await scripted([
      { toolCalls: [{ name: 'whoami', arguments: {} }] },
      { toolCalls: [{ name: 'crash', arguments: {} }] },
      'The tool server is down.',
      { toolCalls: [{ name: 'whoami', arguments: {} }] },
      'Back again.',
    ]);
    const app = assistantApp(model, mcpTools(STDIO_TOOL_SERVER));

    const first = await app.chat({ message: 'who are you? then crash' });
    const second = await app.chat({ message: 'who are you now?' });

    expect(first.reply).toBe('The tool server is down.');
    expect(second.reply).toBe('Back again.');
    const [before, crashed, after] = toolResultsSeen(model);
    expect(crashed).toBe(
      "Error: 'crash' failed: the MCP server 'test-tools' is unreachable (it is down or closed the connection); try again later",
    );
    const firstPid = Number(before?.replace('pid ', ''));
    const secondPid = Number(after?.replace('pid ', ''));
    expect(secondPid).not.toBe(firstPid);
    expect(processAlive(firstPid)).toBe(false);
    expect(processAlive(secondPid)).toBe(true);

    await app.close();
    await expect.poll(() => processAlive(secondPid)).toBe(false);
    model.assertDone();
  });

  it('tells the model when an HTTP server is down, and reconnects once it is back', async () => {
    const toolServer = await startHttpToolServer();
    const model = await scripted([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] },
      'Two.',
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      'The calculator is down.',
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }] },
      'Four.',
    ]);
    const app = assistantApp(model, mcpTools({ url: toolServer.url }));

    await app.chat({ message: '1 + 1' });
    await toolServer.close();
    const down = await app.chat({ message: '1 + 2' });
    const restarted = await startHttpToolServer(toolServer.port);
    cleanups.push(() => restarted.close());
    const back = await app.chat({ message: '2 + 2' });

    expect([down.reply, back.reply]).toEqual(['The calculator is down.', 'Four.']);
    expect(toolResultsSeen(model)).toEqual([
      'The sum is 2\n{"sum":2}',
      "Error: 'add' failed: the MCP server '127.0.0.1:" +
        toolServer.port +
        "' is unreachable (it is down or closed the connection); try again later",
      'The sum is 4\n{"sum":4}',
    ]);
    model.assertDone();
  });
});
