import { RequestContext } from '@switchboard/core';
import { historyProblems } from '@switchboard/runtime/testing';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AgentContext } from '../../src/agents/agent-contract.js';
import { AgentPause, type AgentResume } from '../../src/agents/agent-pause.js';
import type { App } from '../../src/app.js';
import type { TurnEvent } from '../../src/engine/events.js';
import type { TurnResult } from '../../src/engine/turn-engine.js';
import {
  langGraphAgent,
  memoryCheckpointBackend,
  redisCheckpointBackend,
  SwitchboardCheckpointSaver,
} from '../../src/langgraph.js';
import { createRedisStores } from '../../src/redis.js';
import { createApp, postJson, readEventStream } from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { PLAN_TEXT, questionGraph, refundGraph } from './refund-graph.js';

const redis = useRedis();
const apps: App[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
});

type Answer = { status: number; body: TurnResult & { error?: { code: string } } };

function client(app: App) {
  const answer = async (response: Response | Promise<Response>): Promise<Answer> => {
    const received = await response;
    return { status: received.status, body: (await received.json()) as Answer['body'] };
  };
  return {
    chat: (body: object) => answer(app.request('/v1/chat', postJson(body))),
    resolve: (sessionId: string, approvalId: string, body: object) =>
      answer(app.request(`/v1/sessions/${sessionId}/approvals/${approvalId}`, postJson(body))),
    session: async (sessionId: string) =>
      (await (await app.request(`/v1/sessions/${sessionId}`)).json()) as {
        messages: Parameters<typeof historyProblems>[0];
        turns: Parameters<typeof historyProblems>[1];
      },
    stream: async (path: string, body: object) =>
      (await readEventStream(await app.request(path, postJson({ ...body, stream: true })))).map(
        (event) => event.data,
      ),
  };
}

const deltasOf = (events: readonly TurnEvent[]) =>
  events.flatMap((event) => (event.type === 'agent-delta' ? [event.delta] : []));

/** One replica: an app whose refunds agent hosts the refund graph, checkpointed on `backend`. */
function replica(label: string, runs: string[], stores: object, saver: SwitchboardCheckpointSaver) {
  const refunds = langGraphAgent({
    name: 'refunds',
    description: 'Refunds an order, with a person approving large refunds',
    graph: refundGraph(saver, runs, label),
  });
  const greeter = langGraphAgent({
    name: 'greeter',
    description: 'Greets by name',
    graph: questionGraph(saver),
  });
  const { app } = createApp({ agents: [refunds, greeter], ...stores });
  apps.push(app);
  return client(app);
}

describe('langGraphAgent', () => {
  it('pauses on interrupt() on one replica, is approved through the other, and answers from the shared checkpoint', async () => {
    const keyPrefix = redis.prefix();
    const runs: string[] = [];
    const onRedis = (label: string) => {
      const connection = new Redis(REDIS_URL, { lazyConnect: true });
      clients.push(connection);
      const saver = new SwitchboardCheckpointSaver({
        backend: redisCheckpointBackend(connection, { keyPrefix }),
      });
      return replica(label, runs, createRedisStores(REDIS_URL, { keyPrefix }), saver);
    };
    const a = onRedis('A');
    const b = onRedis('B');

    const paused = await a.chat({ message: 'refunds: refund order 42', sessionId: 'lg-across' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      status: 'awaiting_approval',
      approvals: [
        {
          agent: 'refunds',
          tool: 'refund',
          message: 'Refund 120 EUR for order 42?',
          risk: 'high',
          reason: 'over the 100 EUR threshold',
          status: 'pending',
        },
      ],
    });
    expect(runs).toEqual(['A:plan', 'A:review']);

    const events = await b.stream(`/v1/sessions/lg-across/approvals/${paused.body.approvals![0]!.id}`, {
      decision: 'approve',
    });
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'turn-end', status: 'completed' });
    // B resumed the review node from A's checkpoint: the plan did not run again.
    expect(runs).toEqual(['A:plan', 'A:review', 'B:review']);
    const reply = `${PLAN_TEXT}\n\nRefunded 120 EUR.`;
    expect(deltasOf(events).join('')).toBe(reply);
    expect(events.find((event) => event.type === 'message')).toMatchObject({ content: reply });
    const stored = await a.session('lg-across');
    expect(stored.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'refunds: refund order 42'],
      ['tool', reply],
      ['assistant', reply],
    ]);
    expect(historyProblems(stored.messages, stored.turns)).toEqual([]);
  });

  it('streams the graph model tokens as agent-delta events that add up to the reply', async () => {
    const runs: string[] = [];
    const saver = new SwitchboardCheckpointSaver({ backend: memoryCheckpointBackend() });
    const app = replica('M', runs, {}, saver);
    const events = await app.stream('/v1/chat', {
      message: 'refunds: refund order 42',
      sessionId: 'lg-deltas',
    });
    const deltas = deltasOf(events);
    // The fake model streams one character at a time.
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join('')).toBe(PLAN_TEXT);
    const types = events.map((event) => event.type);
    expect(types.indexOf('agent-delta')).toBeGreaterThan(types.indexOf('agent-start'));
    expect(types.at(-2)).toBe('approval-request');
  });

  it('a rejection reaches the node as { approved: false, comment }', async () => {
    const saver = new SwitchboardCheckpointSaver({ backend: memoryCheckpointBackend() });
    const app = replica('M', [], {}, saver);
    const paused = await app.chat({ message: 'refunds: refund order 42', sessionId: 'lg-reject' });
    const rejected = await app.resolve('lg-reject', paused.body.approvals![0]!.id, {
      decision: 'reject',
      comment: 'not eligible',
    });
    expect(rejected.body).toMatchObject({
      status: 'completed',
      reply: `${PLAN_TEXT}\n\nNo refund (not eligible).`,
    });
  });

  it('an interrupt with a question asks the user, and the next message answers it; only then is the thread read first', async () => {
    const backend = memoryCheckpointBackend();
    let loads = 0;
    const saver = new SwitchboardCheckpointSaver({
      backend: {
        ...backend,
        load(...args) {
          loads += 1;
          return backend.load(...args);
        },
      },
    });
    const app = replica('M', [], {}, saver);
    const asked = await app.chat({ message: 'greeter: hi', sessionId: 'lg-question' });
    expect(asked.body).toMatchObject({ status: 'completed', reply: 'What is your name?' });
    // LangGraph's own read of the thread at the start of the run: no extra one for a fresh call.
    expect(loads).toBe(1);
    const answered = await app.chat({ message: 'greeter: Ada', sessionId: 'lg-question' });
    expect(answered.body).toMatchObject({ status: 'completed', reply: 'Hello, Ada!' });
    expect(loads).toBe(3);
    const again = await app.chat({ message: 'greeter: hello again', sessionId: 'lg-question' });
    expect(again.body.reply).toBe('What is your name?');
    expect(loads).toBe(4);
  });

  it('run again with the same decision after a crash, it answers the same without running the node again', async () => {
    const runs: string[] = [];
    const saver = new SwitchboardCheckpointSaver({ backend: memoryCheckpointBackend() });
    const agent = langGraphAgent({
      name: 'refunds',
      description: 'Refunds',
      graph: refundGraph(saver, runs, 'M'),
    });
    const request = new RequestContext({
      sessionId: 'lg-crash',
      requestId: 'req-1',
      signal: new AbortController().signal,
      memory: () => {
        throw new Error('no memory in this test');
      },
    });
    const call = (resume?: AgentResume) =>
      RequestContext.run(request, async () => {
        const conversation = { messages: [] } as unknown as AgentContext['conversation'];
        const context = {
          signal: request.signal,
          request,
          conversation,
          idempotencyKey: 'key',
          resume,
        } as AgentContext;
        let text = '';
        for await (const delta of (await agent.run('refund order 42', context)) as AsyncIterable<string>)
          text += delta;
        return text;
      });
    const pause = await call().catch((error: unknown) => error);
    expect(AgentPause.isInstance(pause)).toBe(true);
    const { requests, state } = pause as AgentPause;
    const resume = {
      state,
      decisions: [{ id: requests[0]!.id, approved: true, status: 'approved' as const }],
    };
    const reply = `${PLAN_TEXT}\n\nRefunded 120 EUR.`;
    expect(await call(resume)).toBe(reply);
    expect(await call(resume)).toBe(reply);
    expect(runs).toEqual(['M:plan', 'M:review', 'M:review']);
  });

  it('refuses a graph compiled without a checkpointer, at construction', async () => {
    const { StateGraph, MessagesAnnotation, START, END } = await import('@langchain/langgraph');
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('noop', () => ({}))
      .addEdge(START, 'noop')
      .addEdge('noop', END)
      .compile();
    expect(() => langGraphAgent({ name: 'bare', description: 'No checkpointer', graph })).toThrow(
      /compile the graph with a checkpointer/,
    );
  });
});
