import { randomUUID } from 'node:crypto';
import type { ApprovalRecord, ServerHandle } from '@switchboard/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventStream } from '../../../packages/runtime/test/support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../../../packages/runtime/test/support/redis.js';
import { buildApp } from '../src/app.js';

interface ChatBody {
  reply: string;
  status: string;
  steps: { agent?: string }[];
  approvals?: ApprovalRecord[];
}

const post = async (url: string, body: object): Promise<ChatBody> => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as ChatBody;
};
const chat = (server: ServerHandle, message: string, sessionId: string) =>
  post(`${server.url}/v1/chat`, { message, sessionId });
const decide = (server: ServerHandle, sessionId: string, approvalId: string, body: object) =>
  post(`${server.url}/v1/sessions/${sessionId}/approvals/${approvalId}`, body);
const newSession = () => `ses-${randomUUID()}`;

describe('langgraph-agent example, in memory', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    const { app, orchestrator } = buildApp({ logLevel: 'silent' });
    server = await app.start(orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  it('routes by keywords: opening hours to the native agent, refunds to the LangGraph graph', async () => {
    const hours = await chat(server, 'when are you open?', newSession());
    expect(hours).toMatchObject({
      status: 'completed',
      reply: 'We are open Monday to Saturday, 9:00 to 18:00.',
    });
    const small = await chat(server, 'refund 30 on order 7', newSession());
    expect(small).toMatchObject({ status: 'completed', reply: 'Refunded 30.00 on order 7.' });
  });

  it('a refund over 100 waits for a person: approved, the graph refunds; rejected, it says why', async () => {
    const approvedSession = newSession();
    const paused = await chat(server, 'refund 250 on order 42', approvedSession);
    expect(paused).toMatchObject({
      status: 'awaiting_approval',
      approvals: [{ agent: 'returns', tool: 'refund', message: 'Refund 250.00 on order 42?', risk: 'high' }],
    });
    const approved = await decide(server, approvedSession, paused.approvals![0]!.id, { decision: 'approve' });
    expect(approved).toMatchObject({ status: 'completed', reply: 'Refunded 250.00 on order 42.' });

    const rejectedSession = newSession();
    const again = await chat(server, 'refund 500 on order 9', rejectedSession);
    const rejected = await decide(server, rejectedSession, again.approvals![0]!.id, {
      decision: 'reject',
      comment: 'order 9 was a gift',
    });
    expect(rejected).toMatchObject({
      status: 'completed',
      reply: 'The refund was not made (order 9 was a gift).',
    });
  });

  it('streams the graph messages as agent-delta events', async () => {
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'I want my money back: 12 for order 3', sessionId: newSession() }),
    });
    const events = parseEventStream(await response.text()).map((event) => event.data);
    const deltas = events.flatMap((event) => (event.type === 'agent-delta' ? [event] : []));
    expect(deltas.map((delta) => [delta.agent, delta.delta])).toEqual([
      ['returns', 'Refunded 12.00 on order 3.'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', status: 'completed' });
  });
});

describe('langgraph-agent example on Redis, two replicas', () => {
  const redis = useRedis();
  const replicas: { server: ServerHandle; disconnect: () => Promise<void> }[] = [];
  beforeAll(async () => {
    const keyPrefix = redis.prefix();
    for (let index = 0; index < 2; index += 1) {
      const { app, orchestrator, disconnect } = buildApp({
        redis: { url: REDIS_URL, keyPrefix },
        logLevel: 'silent',
      });
      replicas.push({ server: await app.start(orchestrator, { port: 0 }), disconnect });
    }
  });
  afterAll(async () => {
    for (const { server, disconnect } of replicas) {
      await server.close();
      await disconnect();
    }
  });

  it('a refund paused on one replica is approved on the other, which resumes the graph from Redis', async () => {
    const [a, b] = replicas.map((replica) => replica.server) as [ServerHandle, ServerHandle];
    const sessionId = newSession();
    const paused = await chat(a, 'refund 250 on order 42', sessionId);
    expect(paused.status).toBe('awaiting_approval');
    const approved = await decide(b, sessionId, paused.approvals![0]!.id, { decision: 'approve' });
    expect(approved).toMatchObject({ status: 'completed', reply: 'Refunded 250.00 on order 42.' });
  });
});
