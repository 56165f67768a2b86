import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentMeta } from '../src/agents/agent.js';
import { llmAgent } from '../src/agents/llm-agent.js';
import { llmTool } from '../src/agents/llm-tool.js';
import { App } from '../src/app.js';
import { createRedisStores } from '../src/redis.js';
import { historyProblems } from '../src/testing/history-check.js';
import { createScriptedModelServer } from '../src/testing/scripted-model-server.js';
import { REDIS_URL, useRedis } from './support/redis.js';

const redis = useRedis();

/** Sends every message to the support agent, then hands its answer to the user. */
class ToSupport extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.content);
    return toolCall('support', currentUserMessage(conversation).content);
  }
}

/** A support agent with a refund tool that needs approval above 100, and a lookup tool that never does. */
function supportAgent(baseURL: string, refunds: Array<{ order: string; amount: number }>) {
  return llmAgent({
    name: 'support',
    description: 'Handles orders and refunds',
    model: 'support-1',
    instructions: 'Help with orders.',
    client: new OpenAI({ apiKey: 'test', baseURL, maxRetries: 0 }),
    tools: [
      llmTool({
        name: 'refund',
        description: 'Refunds an order',
        parameters: z.object({ order: z.string(), amount: z.number() }),
        requiresApproval: ({ amount }) =>
          amount > 100 ? { required: true, risk: 'high', reason: `refund of ${amount}` } : false,
        execute: ({ order, amount }) => {
          refunds.push({ order, amount });
          return `refunded ${amount} on ${order}`;
        },
      }),
      llmTool({
        name: 'lookup',
        description: 'Looks an order up',
        parameters: z.object({ order: z.string() }),
        execute: ({ order }) => `${order}: shipped`,
      }),
    ],
  });
}

describe('llmAgent tools that need approval', () => {
  it('pause the agent mid-run; approved on another replica, the run continues there where it stopped', async () => {
    const server = await createScriptedModelServer({
      script: [
        {
          toolCalls: [
            { id: 'tc_lookup', name: 'lookup', arguments: { order: 'A-7' } },
            { id: 'tc_refund', name: 'refund', arguments: { order: 'A-7', amount: 250 } },
          ],
        },
        // After the approval: the model sees both tool results and answers.
        (request) => {
          const tools = request.body.messages.filter((message) => message.role === 'tool');
          return `Done: ${tools.map((message) => message.content).join('; ')}`;
        },
      ],
    });
    const keyPrefix = redis.prefix();
    const refunds: Array<{ order: string; amount: number }> = [];
    const replica = () => {
      const agent = supportAgent(server.url, refunds);
      const app = new App({
        name: 'support',
        agents: [agent],
        ...createRedisStores(REDIS_URL, { keyPrefix }),
        logLevel: 'silent',
      });
      return app.mount(new ToSupport({ name: 'support', agents: [agentMeta(agent)] }));
    };
    const [a, b] = [replica(), replica()];
    try {
      const paused = await a.chat({ message: 'refund order A-7', sessionId: 'llm-approval' });
      expect(paused.status).toBe('awaiting_approval');
      expect(paused.approvals).toEqual([
        expect.objectContaining({
          agent: 'support',
          tool: 'refund',
          toolUseId: 'tc_refund',
          input: { order: 'A-7', amount: 250 },
          risk: 'high',
          reason: 'refund of 250',
          requestedBy: 'agent',
          message: 'refund({"order":"A-7","amount":250})',
        }),
      ]);
      // The saved run (the agent's prompt and conversation) stays on the server.
      expect(paused.approvals![0]).not.toHaveProperty('agentState');
      const shown = await (await a.request('/v1/sessions/llm-approval')).text();
      expect(shown).toContain('tc_refund');
      expect(shown).not.toContain('Help with orders.');
      // Nothing of that round ran before the decision: not even the lookup.
      expect(refunds).toEqual([]);
      expect(server.requests).toHaveLength(1);

      const done = await b.resolveApproval({
        sessionId: 'llm-approval',
        approvalId: paused.approvals![0]!.id,
        decision: 'approve',
      });
      expect(done).toMatchObject({ status: 'completed', reply: 'Done: A-7: shipped; refunded 250 on A-7' });
      expect(refunds).toEqual([{ order: 'A-7', amount: 250 }]);
      // The resumed run sent the model its earlier messages, the tool calls and their results.
      const resumed = server.requests[1]!.body.messages;
      expect(resumed.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
      server.assertDone();

      const messages = await b.sessions.read('llm-approval');
      const turns = await b.sessions.listTurns('llm-approval');
      expect(historyProblems(messages, turns)).toEqual([]);
      // One reply of the agent, with the usage of both model calls.
      const replies = messages.filter((message) => message.role === 'tool');
      expect(replies).toHaveLength(1);
      expect(replies[0]!.metadata).toMatchObject({ model: 'support-1', iterations: 2 });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await server.close();
    }
  });

  it('tell the model a rejected tool call was not run, with the comment, and the run goes on', async () => {
    const server = await createScriptedModelServer({
      script: [
        { toolCalls: [{ id: 'tc_refund', name: 'refund', arguments: { order: 'B-1', amount: 900 } }] },
        (request) => {
          const tool = request.body.messages.find((message) => message.role === 'tool');
          return `I could not refund: ${String(tool?.content)}`;
        },
      ],
    });
    const refunds: Array<{ order: string; amount: number }> = [];
    const agent = supportAgent(server.url, refunds);
    const app = new App({ name: 'support', agents: [agent] }).mount(
      new ToSupport({ name: 'support', agents: [agentMeta(agent)] }),
    );
    try {
      const paused = await app.chat({ message: 'refund B-1', sessionId: 'rejected' });
      const done = await app.resolveApproval({
        sessionId: 'rejected',
        approvalId: paused.approvals![0]!.id,
        decision: 'reject',
        comment: 'over the limit',
      });
      expect(done.status).toBe('completed');
      expect(done.reply).toContain('was not run: the user rejected it: over the limit');
      expect(refunds).toEqual([]);
      server.assertDone();
    } finally {
      await app.close();
      await server.close();
    }
  });
});
