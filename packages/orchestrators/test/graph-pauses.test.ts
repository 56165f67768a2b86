import { App } from '@switchboard/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { stateGraph } from '../src/index.js';

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const Refund = z.object({
  request: z.string(),
  amount: z.number().default(0),
  outcome: z.string().optional(),
  order: z.string().optional(),
});

function refundGraph(paid: string[]) {
  return stateGraph({ name: 'refund', state: Refund, input: (message) => ({ request: message }) })
    .node('quote', (state) => ({ amount: Number(/\d+/.exec(state.request)?.[0] ?? 0) }))
    .node(
      'pay',
      (state) => {
        paid.push(`${state.amount}`);
        return { outcome: `refunded ${state.amount}` };
      },
      {
        task: (state) => `refund ${state.amount} EUR`,
        approval: (state) => (state.amount > 100 ? `refund of ${state.amount} EUR is over 100` : false),
        onError: (_state, failure) => ({ outcome: failure.rejected ? 'refund declined' : 'refund failed' }),
      },
    )
    .entry('quote')
    .edge('quote', 'pay')
    .respond((state) => state.outcome ?? '?');
}

function host(graph: ReturnType<ReturnType<typeof refundGraph>['compile']>): App {
  const app = new App({ name: 'pauses', agents: [], logLevel: 'silent' }).mount(graph);
  apps.push(app);
  return app;
}

describe('stateGraph: pauses', () => {
  it('runs a node without approval under its threshold, and pauses one over it until a person approves', async () => {
    const paid: string[] = [];
    const app = host(refundGraph(paid).compile());
    expect((await app.chat({ message: 'refund 40 please' })).reply).toBe('refunded 40');

    const paused = await app.chat({ message: 'refund 250 please' });
    expect(paused.status).toBe('awaiting_approval');
    expect(paid).toEqual(['40']);
    const approval = paused.approvals?.[0];
    expect(approval?.message).toBe('refund 250 EUR');
    expect(approval?.reason).toBe('refund of 250 EUR is over 100');
    const done = await app.resolveApproval({
      sessionId: paused.sessionId,
      approvalId: approval?.id as string,
      decision: 'approve',
    });
    expect(done.status).toBe('completed');
    expect(done.reply).toBe('refunded 250');
    expect(paid).toEqual(['40', '250']);
  });

  it('turns a refused approval into the node’s onError update, and the graph finishes', async () => {
    const paid: string[] = [];
    const app = host(refundGraph(paid).compile());
    const paused = await app.chat({ message: 'refund 900' });
    const done = await app.resolveApproval({
      sessionId: paused.sessionId,
      approvalId: paused.approvals?.[0]?.id as string,
      decision: 'reject',
    });
    expect(done.reply).toBe('refund declined');
    expect(paid).toEqual([]);
  });

  it('asks the user at an input node and resumes there with the next message', async () => {
    const paid: string[] = [];
    const graph = stateGraph({ name: 'ask', state: Refund, input: (message) => ({ request: message }) })
      .inputNode('which', {
        ask: (state) => `Which order is "${state.request}" about?`,
        update: (answer) => ({ order: answer.trim() }),
      })
      .node('pay', (state) => {
        paid.push(state.order ?? '');
        return { outcome: `refund for order ${state.order} (${state.request})` };
      })
      .entry('which')
      .edge('which', 'pay')
      .respond((state) => state.outcome ?? '?')
      .compile();
    const app = host(graph);
    const asked = await app.chat({ message: 'I want my money back' });
    expect(asked.status).toBe('completed');
    expect(asked.reply).toBe('Which order is "I want my money back" about?');
    expect(paid).toEqual([]);
    const answered = await app.chat({ sessionId: asked.sessionId, message: 'A-42' });
    expect(answered.reply).toBe('refund for order A-42 (I want my money back)');
    expect(answered.steps[0]?.annotations?.graphResumedFrom).toBe('which');
    // A later message starts the graph afresh: the question was answered.
    const again = await app.chat({ sessionId: asked.sessionId, message: 'another thing' });
    expect(again.reply).toBe('Which order is "another thing" about?');
  });
});
