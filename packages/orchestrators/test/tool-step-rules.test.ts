import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { type AgentContext, App, agentMeta, llmAgent, llmTool, type MemoryStore } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
} from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type StepRule, toolStepRules } from '../src/index.js';
import { failingMemory } from './support/turn-driver.js';

/** Browsing never pays; once something is in the cart, checkout runs: address, then payment. */
const CHECKOUT: StepRule[] = [
  { name: 'browse', description: 'Looking around', isDefault: true, denied: ['pay'] },
  {
    name: 'checkout',
    description: 'Address, then payment',
    conditions: [{ type: 'used', agent: 'cart' }],
    sequence: ['address', 'pay'],
  },
];

/** Sends every message to the shop agent, and answers with its reply (what went wrong, when it failed). */
class ToShop extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (!reply) return toolCall('shop', currentUserMessage(conversation).content);
    return routeToUser(
      reply.status === 'ok' ? reply.content : `failed: ${String(reply.metadata?.errorDetail)}`,
    );
  }
}

let server: ScriptedModelServer | undefined;
let app: App | undefined;
afterEach(async () => {
  await app?.close();
  await server?.close();
  app = undefined;
  server = undefined;
});

/** A shop agent whose four tools log what ran, behind `toolStepRules(CHECKOUT)`, in an app of its own. */
async function shop(script: Parameters<typeof createScriptedModelServer>[0], memoryStore?: MemoryStore) {
  server = await createScriptedModelServer(script);
  const ran: string[] = [];
  const tool = (name: string) =>
    llmTool({
      name,
      description: `The ${name} step of an order`,
      parameters: z.object({ item: z.string().optional() }),
      execute: () => {
        ran.push(name);
        return `${name} done`;
      },
    });
  const agent = llmAgent({
    name: 'shop',
    description: 'Takes orders',
    model: 'shop-1',
    instructions: 'Help the user order.',
    client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
    tools: ['search', 'cart', 'address', 'pay'].map(tool),
    toolFilter: toolStepRules({ steps: CHECKOUT }),
  });
  app = new App({ name: 'shop', agents: [agent], logLevel: 'silent', memoryStore }).mount(
    new ToShop({ name: 'to-shop', agents: [agentMeta(agent)] }),
  );
  return { app, ran };
}

function offered(request: RecordedRequest): string[] {
  return (request.body.tools ?? []).map((tool) =>
    tool.type === 'function' ? tool.function.name : tool.type,
  );
}

function toolResults(request: RecordedRequest | undefined): Record<string, string> {
  const results: Record<string, string> = {};
  for (const message of request?.body.messages ?? []) {
    if (message.role === 'tool') results[message.tool_call_id] = String(message.content);
  }
  return results;
}

describe('toolStepRules', () => {
  it('holds an llmAgent’s tools to a sequence across two turns of a session, refusing a tool out of turn', async () => {
    const { app, ran } = await shop({
      script: [
        // Turn 1: browsing, `pay` is not offered; the cart starts the checkout.
        { toolCalls: [{ id: 'tc_cart', name: 'cart', arguments: { item: 'lamp' } }] },
        'The lamp is in your cart. Where should it go?',
        // Turn 2: the checkout goes on where it stopped; paying before the address is refused.
        { toolCalls: [{ id: 'tc_early_pay', name: 'pay', arguments: {} }] },
        { toolCalls: [{ id: 'tc_address', name: 'address', arguments: {} }] },
        { toolCalls: [{ id: 'tc_pay', name: 'pay', arguments: {} }] },
        'Paid; it ships to 1 Main St.',
        // Another session starts browsing.
        'Hello!',
      ],
    });

    const first = await app.chat({ message: 'add the lamp' });
    const second = await app.chat({ sessionId: first.sessionId, message: 'ship to 1 Main St and pay' });
    const other = await app.chat({ message: 'hi' });

    expect(first.reply).toBe('The lamp is in your cart. Where should it go?');
    expect(second.reply).toBe('Paid; it ships to 1 Main St.');
    expect(other.reply).toBe('Hello!');
    expect(server?.requests.map(offered)).toEqual([
      ['search', 'cart', 'address'],
      ['address'],
      ['address'],
      ['address'],
      ['pay'],
      ['search', 'cart', 'address', 'pay'],
      ['search', 'cart', 'address'],
    ]);
    expect(ran).toEqual(['cart', 'address', 'pay']);
    expect(toolResults(server?.requests[3]).tc_early_pay).toBe(
      "Error: 'pay' was not run: it is not available at this point. Available tools: address.",
    );
    server?.assertDone();
  });

  it('fails the agent call rather than offer tools unchecked when session memory is down', async () => {
    const { app, ran } = await shop({ script: [] }, failingMemory(new Error('redis is down')));

    const result = await app.chat({ message: 'add the lamp' });

    expect(result.reply).toMatch(/^failed: .*could not read the session's step state \('tool-steps:shop'\)/);
    expect(server?.requests).toEqual([]);
    expect(ran).toEqual([]);
  });

  it('checks the steps when built, and their tool names against the agent’s tools when it first calls', async () => {
    expect(() =>
      toolStepRules({
        steps: [{ name: 'browse', description: 'x', alowed: ['search'] } as unknown as StepRule],
      }),
    ).toThrow(/invalid steps/);
    expect(() =>
      toolStepRules({
        steps: [
          { name: 'a', description: 'x', isDefault: true },
          { name: 'b', description: 'y', isDefault: true },
        ],
      }),
    ).toThrow(/only one step can be the default/);

    const filter = toolStepRules({ steps: CHECKOUT });
    const context = { agent: {} as AgentContext, agentName: 'shop', modelCalls: 0, results: [] };
    await expect(filter(['search', 'cart', 'address'], context)).rejects.toThrow(
      "toolStepRules of 'shop': step 'browse' names 'pay' in denied, which is not one of the agent's tools: search, cart, address",
    );
  });
});
