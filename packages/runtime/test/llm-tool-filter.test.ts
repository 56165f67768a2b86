import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { llmAgent } from '../src/agents/llm-agent.js';
import { type LlmTool, llmTool } from '../src/agents/llm-tool.js';
import type { LlmToolFilter } from '../src/agents/llm-tool-filter.js';
import { createScriptedModelServer, type ScriptedModelServer } from '../src/testing/scripted-model-server.js';
import type { RecordedRequest, ScriptEntry } from '../src/testing/scripted-script.js';
import { runAgent } from './llm-test-support.js';
import { useSpanRecording } from './support/span-recording.js';

const recording = useSpanRecording();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const refunds: string[] = [];
afterEach(() => {
  refunds.length = 0;
});

const lookup = llmTool({
  name: 'lookup',
  description: 'Looks an order up',
  parameters: z.object({ order: z.string() }),
  execute: ({ order }) => `${order}: delivered damaged`,
});
const notes = llmTool({
  name: 'notes',
  description: 'Reads the customer notes',
  parameters: z.object({}),
  execute: () => 'no notes',
});
const refund = llmTool({
  name: 'refund',
  description: 'Refunds an order',
  parameters: z.object({ order: z.string() }),
  execute: ({ order }) => {
    refunds.push(order);
    return `refunded ${order}`;
  },
});

async function support(
  script: ScriptEntry[],
  toolFilter: LlmToolFilter,
  tools: LlmTool[] = [lookup, notes, refund],
) {
  server = await createScriptedModelServer({ script });
  return llmAgent({
    name: 'support',
    description: 'Handles orders',
    model: 'support-1',
    instructions: 'Help with orders.',
    client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    tools,
    toolFilter,
  });
}

/** The tool names a request offered the model; `undefined` when it sent no `tools`. */
function offered(request: RecordedRequest | undefined): string[] | undefined {
  return request?.body.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.type));
}

/** The tool results a request sent the model, by tool call id. */
function toolResults(request: RecordedRequest | undefined): Record<string, string> {
  const results: Record<string, string> = {};
  for (const message of request?.body.messages ?? []) {
    if (message.role === 'tool') results[message.tool_call_id] = String(message.content);
  }
  return results;
}

describe('llmAgent toolFilter', () => {
  it('narrows the tools offered for each model call, and refuses a call outside them without running it', async () => {
    const seen: Array<{ modelCalls: number; results: string[] }> = [];
    // Refunds only right after a successful lookup.
    const afterLookup: LlmToolFilter = (tools, { modelCalls, results }) => {
      seen.push({ modelCalls, results: results.map((result) => `${result.name}:${result.ok}`) });
      return results.some((result) => result.name === 'lookup' && result.ok)
        ? ['refund']
        : tools.filter((name) => name !== 'refund');
    };
    const agent = await support(
      [
        {
          toolCalls: [
            { id: 'tc_early_refund', name: 'refund', arguments: { order: 'A-7' } },
            { id: 'tc_lookup', name: 'lookup', arguments: { order: 'A-7' } },
          ],
        },
        { toolCalls: [{ id: 'tc_refund', name: 'refund', arguments: { order: 'A-7' } }] },
        'Refunded A-7.',
      ],
      afterLookup,
    );

    const result = await runAgent(agent, 'A-7 arrived broken');

    expect(result.content).toBe('Refunded A-7.');
    expect(server?.requests.map(offered)).toEqual([['lookup', 'notes'], ['refund'], ['lookup', 'notes']]);
    // The early refund was refused (never run); the one offered ran once.
    expect(refunds).toEqual(['A-7']);
    const second = toolResults(server?.requests[1]);
    expect(second.tc_early_refund).toBe(
      "Error: 'refund' was not run: it is not available at this point. Available tools: lookup, notes.",
    );
    expect(second.tc_lookup).toBe('A-7: delivered damaged');
    expect(toolResults(server?.requests[2]).tc_refund).toBe('refunded A-7');
    expect(seen).toEqual([
      { modelCalls: 0, results: [] },
      { modelCalls: 1, results: ['refund:false', 'lookup:true'] },
      { modelCalls: 2, results: ['refund:true'] },
    ]);
    // Both calls are traced; the refused one as an error.
    expect(
      recording()
        .named('tool refund')
        .map((span) => span.status.code),
    ).toEqual([2, 0]);
    server?.assertDone();
  });

  it('sends no tools when the filter offers none, and refuses every call', async () => {
    const agent = await support(
      [
        { toolCalls: [{ id: 'tc_lookup', name: 'lookup', arguments: { order: 'A-7' } }] },
        'I cannot look it up.',
      ],
      () => [],
    );

    const result = await runAgent(agent, 'Where is A-7?');

    expect(result.content).toBe('I cannot look it up.');
    expect(server?.requests.map((request) => 'tools' in request.body)).toEqual([false, false]);
    expect(toolResults(server?.requests[1]).tc_lookup).toBe(
      "Error: 'lookup' was not run: it is not available at this point. Answer without tools.",
    );
  });

  it('refuses a tool that needs approval without pausing for it, when the filter left it out', async () => {
    const guardedRefund = llmTool({
      name: 'refund',
      description: 'Refunds an order',
      parameters: z.object({ order: z.string() }),
      requiresApproval: true,
      execute: ({ order }) => {
        refunds.push(order);
        return `refunded ${order}`;
      },
    });
    const agent = await support(
      [{ toolCalls: [{ id: 'tc_refund', name: 'refund', arguments: { order: 'A-7' } }] }, 'No refund yet.'],
      (tools) => tools.filter((name) => name !== 'refund'),
      [lookup, guardedRefund],
    );

    const result = await runAgent(agent, 'Refund A-7');

    expect(result.content).toBe('No refund yet.');
    expect(refunds).toEqual([]);
    expect(toolResults(server?.requests[1]).tc_refund).toMatch(/'refund' was not run: it is not available/);
  });

  it('ignores names that are not the agent’s tools, and fails the call on a filter that returns no list', async () => {
    const widening = await support(['Done.'], () => ['lookup', 'delete_everything']);
    await runAgent(widening, 'Hi');
    expect(offered(server?.requests[0])).toEqual(['lookup']);
    await server?.close();

    const broken = await support([], () => 'lookup' as unknown as string[]);
    await expect(runAgent(broken, 'Hi')).rejects.toThrow(
      "Agent 'support' failed: its toolFilter returned string, not an array of tool names",
    );
    expect(server?.requests).toEqual([]);
  });

  it('must be a function', async () => {
    await expect(support([], 'lookup' as unknown as LlmToolFilter)).rejects.toThrow(
      "llmAgent 'support': toolFilter must be a function",
    );
  });
});
