import { currentUserMessage, latestToolResults, routeToUser, toolCall } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { createApp, describeResults, slowAgent } from '../support/app-fixtures.js';

/** An agent that answers only when aborted never: it records whether (and why) its signal aborted. */
function waitingAgent(name: string) {
  const seen: { aborted?: unknown } = {};
  const agent = defineAgent({
    name,
    description: 'Waits until it is aborted',
    run: (_message, { signal }) =>
      new Promise<string>((_, reject) => {
        signal.addEventListener('abort', () => {
          seen.aborted = signal.reason;
          reject(signal.reason);
        });
      }),
  });
  return Object.assign(agent, { seen });
}

describe('fan-in bounds: a call’s own deadline and the grace period after a sibling’s reply', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('ends the branches still running a grace period after the first reply, and keeps the replies that came in time', async () => {
    const fast = slowAgent('fast', 5);
    const steady = slowAgent('steady', 30);
    const stuck = waitingAgent('stuck');
    const created = createApp({
      agents: [fast, steady, stuck],
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(describeResults(results));
        const text = currentUserMessage(conversation).content;
        return ['fast', 'steady', 'stuck'].map((name) => toolCall(name, text, { fanInGraceMs: 400 }));
      },
    });
    app = created.app;

    const result = await app.chat({ message: 'compare' });

    expect(result.status).toBe('completed');
    const seen = latestToolResults(created.orchestrator.seen[1]!);
    expect(seen.map((reply) => [reply.name, reply.status])).toEqual([
      ['fast', 'ok'],
      ['steady', 'ok'],
      ['stuck', 'error'],
    ]);
    // The stuck branch was stopped through its signal, and says why, safely.
    expect(stuck.seen.aborted).toBeInstanceOf(Error);
    expect(seen[2]?.content).toBe(
      "Agent 'stuck' did not reply within 400 ms of the first reply of its fan-out (agent_timeout)",
    );
    // The grace started at the first reply: the stuck branch ended after it, not at the 60 s agent timeout.
    const stored = await app.sessions.read(result.sessionId);
    const replies = stored.filter((message) => message.role === 'tool');
    expect(replies.map((message) => message.name)).toEqual(['fast', 'steady', 'stuck']);
    const fastAt = Date.parse(replies[0]!.createdAt);
    const stuckAt = Date.parse(replies[2]!.createdAt);
    expect(stuckAt - fastAt).toBeGreaterThanOrEqual(390);
    // The bounds are kept on the stored step, so a resumed call keeps them.
    expect(result.steps[0]?.calls.map((call) => call.fanInGraceMs)).toEqual([400, 400, 400]);
  });

  it('starts no grace period on a failed reply: a failure is not a result worth hurrying for', async () => {
    const steady = slowAgent('steady', 40);
    const broken = defineAgent({
      name: 'broken',
      description: 'Fails at once',
      run: async () => {
        throw new Error('down');
      },
    });
    const created = createApp({
      agents: [steady, broken],
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(describeResults(results));
        return [toolCall('broken', 'go', { fanInGraceMs: 0 }), toolCall('steady', 'go', { fanInGraceMs: 0 })];
      },
    });
    app = created.app;
    await app.chat({ message: 'go' });
    const seen = latestToolResults(created.orchestrator.seen[1]!);
    expect(seen.map((reply) => [reply.name, reply.status])).toEqual([
      ['broken', 'error'],
      ['steady', 'ok'],
    ]);
  });

  it('bounds a call by its own deadline when that is shorter than its agent’s timeout', async () => {
    const stuck = waitingAgent('stuck');
    const created = createApp({
      agents: [stuck],
      agentTimeoutMs: 60_000,
      handler: (conversation) => {
        const results = latestToolResults(conversation);
        if (results.length > 0) return routeToUser(results[0]!.content);
        return toolCall('stuck', 'go', { timeoutMs: 50 });
      },
    });
    app = created.app;
    const result = await app.chat({ message: 'go' });
    expect(result.reply).toBe("Agent 'stuck' timed out after 50 ms (agent_timeout)");
    expect(stuck.seen.aborted).toBeInstanceOf(Error);
  });

  it('rejects a call whose bounds are not whole, positive numbers as an invalid decision', async () => {
    const created = createApp({
      agents: [slowAgent('fast', 1)],
      handler: () => toolCall('fast', 'go', { timeoutMs: -5 }),
    });
    app = created.app;
    const result = await app.chat({ message: 'go' });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('invalid_decision');
  });
});
