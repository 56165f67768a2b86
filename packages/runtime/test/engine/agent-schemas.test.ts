import { latestToolResults, routeToUser, toolCall } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { createApp, describeResults } from '../support/app-fixtures.js';

const Refund = z.object({ orderId: z.string().regex(/^ord_\d+$/), amount: z.number().positive().max(1000) });

function refunds() {
  const seen: unknown[] = [];
  const agent = defineAgent({
    name: 'refunds',
    description: 'Refunds an order',
    input: Refund,
    output: z.object({ refunded: z.number() }),
    run: (_message, context) => {
      seen.push(context.input);
      const { amount } = context.input as z.infer<typeof Refund>;
      // A bug: large refunds answer in the wrong shape.
      return JSON.stringify(amount > 500 ? { ok: true } : { refunded: amount });
    },
  });
  return Object.assign(agent, { seen });
}

/** Sends the user's message as the call's structured input. */
function callWith(input: unknown) {
  return (conversation: Parameters<Parameters<typeof createApp>[0]['handler'] & object>[0]) => {
    const results = latestToolResults(conversation);
    if (results.length > 0) return routeToUser(describeResults(results));
    return toolCall('refunds', 'refund', { input });
  };
}

describe('agent input and output schemas', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('gives the agent its input as the schema parsed it, and checks what it answers', async () => {
    const agent = refunds();
    app = createApp({ agents: [agent], handler: callWith({ orderId: 'ord_1', amount: 40 }) }).app;
    expect((await app.chat({ message: 'refund' })).reply).toBe('{"refunded":40}');
    expect(agent.seen).toEqual([{ orderId: 'ord_1', amount: 40 }]);
  });

  it('refuses a call its schema refuses before the agent runs, naming the issues to the orchestrator', async () => {
    const agent = refunds();
    const created = createApp({ agents: [agent], handler: callWith({ orderId: '42', amount: -5 }) });
    app = created.app;
    const result = await app.chat({ message: 'refund' });
    expect(agent.seen).toEqual([]);
    const [reply] = latestToolResults(created.orchestrator.seen[1]!);
    expect(reply).toMatchObject({ status: 'error', metadata: { errorCode: 'invalid_agent_input' } });
    expect(result.reply).toContain('orderId');
    expect(result.reply).toContain('amount');
  });

  it('reads the message as JSON when the call has no structured input', async () => {
    const agent = refunds();
    app = createApp({
      agents: [agent],
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(describeResults(results));
        return toolCall('refunds', '{"orderId":"ord_7","amount":12}');
      },
    }).app;
    expect((await app.chat({ message: 'refund' })).reply).toBe('{"refunded":12}');
  });

  it('turns a reply its output schema refuses into an error reply', async () => {
    const created = createApp({ agents: [refunds()], handler: callWith({ orderId: 'ord_2', amount: 900 }) });
    app = created.app;
    await app.chat({ message: 'refund' });
    const [reply] = latestToolResults(created.orchestrator.seen[1]!);
    expect(reply).toMatchObject({ status: 'error', metadata: { errorCode: 'invalid_agent_output' } });
  });

  it('lists the schemas in /v1/agents and the OpenAPI document', async () => {
    app = createApp({ agents: [refunds()], handler: callWith({}) }).app;
    const { agents } = (await (await app.request('/v1/agents')).json()) as {
      agents: Array<Record<string, unknown>>;
    };
    expect(agents[0]?.inputSchema).toMatchObject({
      type: 'object',
      properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
      required: ['orderId', 'amount'],
    });
    expect(agents[0]?.outputSchema).toMatchObject({ properties: { refunded: { type: 'number' } } });
    const openApi = (await (await app.request('/openapi.json')).json()) as {
      components?: { schemas?: Record<string, unknown> };
    };
    expect(openApi.components?.schemas?.['refunds.input']).toEqual(agents[0]?.inputSchema);
    expect(openApi.components?.schemas?.['refunds.output']).toEqual(agents[0]?.outputSchema);
  });
});
