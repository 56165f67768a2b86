import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { StoreUnavailableError } from '@switchboard/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, textOf } from '../../src/a2a/a2a-parts.js';
import { turnOfTaskId } from '../../src/a2a/a2a-task.js';
import { defineAgent } from '../../src/agents/agent.js';
import type { ServerHandle } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import { buildApp, echoAgent } from '../support/app-fixtures.js';
import { a2aClient, asTask, describeEvent, userMessage } from './a2a-client.js';

const refunds = defineAgent({
  name: 'refund',
  description: 'Refunds orders',
  keywords: ['refund'],
  requiresApproval: true,
  run: (message) => `refunded ${message}`,
});

async function serve(options: Partial<Parameters<typeof buildApp>[0]> = {}) {
  const { app, orchestrator } = buildApp({ agents: [echoAgent(), refunds], a2a: true, ...options });
  const server = await app.start(orchestrator, { port: 0 });
  return { app, server };
}

describe('the app served as an A2A agent', () => {
  let server: ServerHandle;
  let app: Awaited<ReturnType<typeof serve>>['app'];
  beforeAll(async () => {
    ({ app, server } = await serve());
  });
  afterAll(() => server.close());

  it('publishes an agent card naming the endpoint at the host the client used, and the agents as skills', async () => {
    const response = await fetch(`${server.url}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'test-app',
      supportedInterfaces: [{ url: `${server.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true },
      skills: [
        { id: 'echo', name: 'echo', description: 'Repeats the message', tags: ['echo'] },
        { id: 'refund', name: 'refund', description: 'Refunds orders', tags: ['refund'] },
      ],
    });
    expect(card.securitySchemes).toBeUndefined();
    const viaLocalhost = await fetch(
      `${server.url.replace('127.0.0.1', 'localhost')}/.well-known/agent-card.json`,
    );
    const { supportedInterfaces } = (await viaLocalhost.json()) as { supportedInterfaces: { url: string }[] };
    expect(supportedInterfaces[0]?.url).toBe(`${server.url.replace('127.0.0.1', 'localhost')}/a2a`);
  });

  it('answers a message from an SDK client with a completed task: the turn, in the session of its context', async () => {
    const client = await a2aClient(server.url);
    const first = asTask(await client.sendMessage(userMessage({ text: 'hello there' })));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(first.artifacts.map((artifact) => textOf(artifact.parts))).toEqual(['echo: hello there']);
    const ids = turnOfTaskId(first.id);
    expect(ids?.sessionId).toBe(first.contextId);
    expect((await app.sessions.lastTurn(first.contextId))?.turnId).toBe(ids?.turnId);

    const second = asTask(
      await client.sendMessage(userMessage({ text: 'again', contextId: first.contextId })),
    );
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    const history = await app.sessions.read(first.contextId);
    expect(history.filter((item) => item.role === 'user').map((item) => item.content)).toEqual([
      'hello there',
      'again',
    ]);
    const read = await client.getTask({ tenant: '', id: first.id, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(read.artifacts[0]?.parts)).toBe('echo: hello there');

    // Hundreds of messages later, the first task still answers with its own reply, not another turn's.
    const later = Array.from({ length: 600 }, (_, index) => ({
      id: `later-${index}`,
      role: 'assistant' as const,
      toolCallId: `call-later-${index}`,
      content: `later ${index}`,
      createdAt: new Date().toISOString(),
    }));
    await app.sessions.append(first.contextId, later);
    const old = await client.getTask({ tenant: '', id: first.id, historyLength: undefined });
    expect(textOf(old.artifacts[0]?.parts)).toBe('echo: hello there');
  });

  it('streams the task: working, each agent call, then the answer and the final state', async () => {
    const client = await a2aClient(server.url);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(userMessage({ text: 'stream me' })))
      events.push(event);
    expect(events.map(describeEvent)).toEqual([
      'task TASK_STATE_WORKING',
      'status TASK_STATE_WORKING: Asking the echo agent',
      'status TASK_STATE_WORKING: The echo agent answered',
      'artifact echo: stream me',
      'status TASK_STATE_COMPLETED',
    ]);
    const [first] = events;
    expect(
      first?.payload?.$case === 'task' && first.payload.value.history.map((m) => textOf(m.parts)),
    ).toEqual(['stream me']);
  });

  it('asks for input while the turn awaits approval, and a data part with the decision completes it', async () => {
    const client = await a2aClient(server.url);
    const paused = asTask(await client.sendMessage(userMessage({ text: 'refund: order 42' })));
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [request] = dataOf(paused.status?.message?.parts) as {
      approvalId: string;
      agent: string;
      message: string;
    }[];
    expect(request).toMatchObject({ type: 'approval-request', agent: 'refund', message: 'order 42' });

    // Plain text on the waiting task is refused with what to send instead.
    await expect(
      client.sendMessage(userMessage({ text: 'yes please', taskId: paused.id, contextId: paused.contextId })),
    ).rejects.toThrow(/awaits approval: answer with a data part/);

    const done = asTask(
      await client.sendMessage(
        userMessage({ data: [{ approvalId: request!.approvalId, decision: 'approve' }], taskId: paused.id }),
      ),
    );
    expect(done.id).toBe(paused.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done.artifacts[0]?.parts)).toBe('refunded order 42');

    await expect(
      client.sendMessage(
        userMessage({ data: [{ approvalId: request!.approvalId, decision: 'approve' }], taskId: paused.id }),
      ),
    ).rejects.toThrow(/takes no input: it has ended/);
  });

  it('streams the continuation of a rejected approval to its end', async () => {
    const client = await a2aClient(server.url);
    const paused = asTask(await client.sendMessage(userMessage({ text: 'refund: order 7' })));
    const [request] = dataOf(paused.status?.message?.parts) as { approvalId: string }[];
    const events: StreamResponse[] = [];
    const decision = { approvalId: request!.approvalId, decision: 'reject', comment: 'not eligible' };
    for await (const event of client.sendMessageStream(userMessage({ data: [decision], taskId: paused.id })))
      events.push(event);
    expect(events.map(describeEvent)[0]).toBe('task TASK_STATE_WORKING');
    expect(events.at(-1)?.payload?.$case).toBe('statusUpdate');
    expect(describeEvent(events.at(-1)!)).toBe('status TASK_STATE_COMPLETED');
    expect(describeEvent(events.at(-2)!)).toMatch(/^artifact Sorry, the refund agent failed: .*not eligible/);
  });

  it('refuses an unknown task, a file part and a missing protocol version with A2A errors', async () => {
    const client = await a2aClient(server.url);
    await expect(
      client.getTask({ tenant: '', id: 'ses_nobody~turn_1', historyLength: undefined }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
    const withFile = userMessage({ text: 'look' });
    withFile.message?.parts.push({
      content: { $case: 'url', value: 'http://example.com/a.png' },
      metadata: undefined,
      filename: 'a.png',
      mediaType: 'image/png',
    });
    await expect(client.sendMessage(withFile)).rejects.toThrow(/text and data parts only/);

    const unversioned = await fetch(`${server.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
    });
    const body = (await unversioned.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/A2A-Version: 1.0/);
  });
});

describe('the A2A endpoint with auth', () => {
  const key = 'sk-a2a-test-key-0123456789';
  let server: ServerHandle;
  beforeAll(async () => {
    ({ server } = await serve({
      auth: apiKeys({ keys: { [key]: { tenantId: 'acme', name: 'acme-bot' } } }),
    }));
  });
  afterAll(() => server.close());

  it('keeps the card public, naming the Bearer scheme, and refuses a call without a key with 401', async () => {
    const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'An API key of the app' } },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }]);

    const anonymous = await fetch(`${server.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      }),
    });
    expect(anonymous.status).toBe(401);

    const client = await a2aClient(server.url, { authorization: `Bearer ${key}` });
    const task = asTask(await client.sendMessage(userMessage({ text: 'with a key' })));
    expect(textOf(task.artifacts[0]?.parts)).toBe('echo: with a key');
  });
});

describe('A2A errors follow the HTTP routes', () => {
  it('tells a client that the store is down, without naming it, and does not hide it as an internal error', async () => {
    class DownStore extends InMemorySessionStore {
      override openTurn(): never {
        throw new StoreUnavailableError({ message: 'redis 10.0.0.5:6379 refused the connection' });
      }
    }
    const logged: unknown[] = [];
    const { server } = await serve({ sessionStore: new DownStore(), logger: (entry) => logged.push(entry) });
    try {
      const client = await a2aClient(server.url);
      const error = await client.sendMessage(userMessage({ text: 'hello' })).catch((caught: Error) => caught);
      expect((error as Error).message).toMatch(/unavailable/i);
      expect((error as Error).message).not.toMatch(/10\.0\.0\.5|6379|Internal server error/);
      expect(logged.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});
