import { RequestContext, routeToUser } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import {
  createApp,
  type DecisionHandler,
  postJson,
  relay,
  sleep,
  visitCounterAgent,
} from '../support/app-fixtures.js';

/** Replies with who is asking, read from `RequestContext.current()` after a short pause. */
const whoAmI = defineAgent({
  name: 'whoami',
  description: 'Says who is asking',
  run: async (_message, { signal }) => {
    await sleep(Math.floor(Math.random() * 5), signal);
    const { sessionId, userId, requestId } = RequestContext.current();
    return JSON.stringify({ sessionId, userId, requestId });
  },
});

describe('RequestContext inside agents and orchestrators', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  const chat = async (body: Record<string, unknown>, headers?: Record<string, string>) => {
    const response = await app!.request('/v1/chat', postJson(body, headers));
    expect(response.status).toBe(200);
    return ((await response.json()) as { reply: string }).reply;
  };

  it('gives agents and orchestrators the sessionId, userId and request id of the request', async () => {
    const seenByOrchestrator: Array<{ sessionId: string; userId?: string; requestId: string }> = [];
    const normal = relay({ defaultAgent: 'whoami' });
    const handler: DecisionHandler = (conversation) => {
      const { sessionId, userId, requestId } = RequestContext.current();
      seenByOrchestrator.push({ sessionId, userId, requestId });
      return normal(conversation);
    };
    app = createApp({ agents: [whoAmI], handler }).app;

    const reply = await chat(
      { message: 'who am I?', sessionId: 'ctx-1', userId: 'alice' },
      { 'x-request-id': 'req-42' },
    );
    expect(JSON.parse(reply)).toEqual({ sessionId: 'ctx-1', userId: 'alice', requestId: 'req-42' });
    expect(seenByOrchestrator).toEqual([
      { sessionId: 'ctx-1', userId: 'alice', requestId: 'req-42' },
      { sessionId: 'ctx-1', userId: 'alice', requestId: 'req-42' },
    ]);
  });

  it('keeps 50 concurrent requests of different users apart', async () => {
    app = createApp({ agents: [whoAmI], handler: relay({ defaultAgent: 'whoami' }) }).app;
    const users = Array.from({ length: 50 }, (_, index) => `user-${index}`);
    const replies = await Promise.all(
      users.map((userId) => chat({ message: 'me?', sessionId: `s-${userId}`, userId })),
    );
    expect(replies.map((reply) => JSON.parse(reply) as { sessionId: string; userId: string })).toMatchObject(
      users.map((userId) => ({ sessionId: `s-${userId}`, userId })),
    );
  });

  it("session memory persists across a session's turns and is isolated between sessions", async () => {
    app = createApp({
      agents: [visitCounterAgent('counter', 'session')],
      handler: relay({ defaultAgent: 'counter' }),
    }).app;
    expect(await chat({ message: 'count', sessionId: 'one' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'one' })).toBe('visit 2');
    expect(await chat({ message: 'count', sessionId: 'two' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'one', userId: 'alice' })).toBe('visit 3');
  });

  it("user memory is shared across a user's sessions and not with other users or anonymous sessions", async () => {
    app = createApp({
      agents: [visitCounterAgent('counter', 'user')],
      handler: relay({ defaultAgent: 'counter' }),
    }).app;
    expect(await chat({ message: 'count', sessionId: 'laptop', userId: 'alice' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'phone', userId: 'alice' })).toBe('visit 2');
    expect(await chat({ message: 'count', sessionId: 'desk', userId: 'bob' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'anonymous-1' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'anonymous-2' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'tablet', userId: 'alice' })).toBe('visit 3');
  });

  it('app memory is shared by everyone', async () => {
    app = createApp({
      agents: [visitCounterAgent('counter', 'app')],
      handler: relay({ defaultAgent: 'counter' }),
    }).app;
    expect(await chat({ message: 'count', sessionId: 'a', userId: 'alice' })).toBe('visit 1');
    expect(await chat({ message: 'count', sessionId: 'b', userId: 'bob' })).toBe('visit 2');
  });

  it('an orchestrator can keep its own state in session memory', async () => {
    const countingTurns: DecisionHandler = async () => {
      const turns = await RequestContext.current()
        .getMemory()
        .updateContent('turns', (count: number) => count + 1, 0);
      return routeToUser(turns.success ? `this is turn ${turns.data}` : 'memory failed');
    };
    app = createApp({ agents: [], handler: countingTurns }).app;
    expect(await chat({ message: 'hi', sessionId: 'stateful' })).toBe('this is turn 1');
    expect(await chat({ message: 'hi', sessionId: 'stateful' })).toBe('this is turn 2');
    expect(await chat({ message: 'hi', sessionId: 'fresh' })).toBe('this is turn 1');
  });
});
