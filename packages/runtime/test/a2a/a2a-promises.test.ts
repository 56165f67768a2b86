import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../../src/a2a/a2a-parts.js';
import { taskIdOf } from '../../src/a2a/a2a-task.js';
import { a2aAgent } from '../../src/a2a.js';
import { defineAgent } from '../../src/agents/agent.js';
import { App, type ServerHandle } from '../../src/app.js';
import { buildApp, echoAgent, relay } from '../support/app-fixtures.js';
import { Relay } from '../support/relay-orchestrator.js';
import { a2aClient, asTask, userMessage } from './a2a-client.js';

/** The question the remote asks while its turn awaits approval (its `approvalMessage`). */
const QUESTION = 'May I refund order 42? A person has to approve it first.';

/** A remote Switchboard app served over A2A whose only agent needs approval: every turn pauses. */
async function serveApprovingRemote() {
  const refund = defineAgent({
    name: 'refund',
    description: 'Refunds orders',
    keywords: ['refund'],
    requiresApproval: true,
    run: (message) => `refunded ${message}`,
  });
  const { app, orchestrator } = buildApp({
    agents: [refund],
    handler: relay({ defaultAgent: 'refund' }),
    approvalMessage: QUESTION,
    a2a: true,
  });
  const server = await app.start(orchestrator, { port: 0 });
  return { app, server };
}

/** Serves the card of the agent at `remoteUrl`, saying it does not stream; resolves with the card's URL. */
async function nonStreamingCard(remoteUrl: string): Promise<{ url: string; server: Server }> {
  const server = createServer(async (_request, response) => {
    const card = (await (await fetch(`${remoteUrl}/.well-known/agent-card.json`)).json()) as Record<
      string,
      unknown
    >;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ ...card, capabilities: { streaming: false } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/card.json`, server };
}

/** A local app routing every message to the A2A agent, answering `<status>: <reply>`. */
function front(agent: Awaited<ReturnType<typeof a2aAgent>>) {
  return new App({ name: 'front', agents: [agent], agentTimeoutMs: 5_000, logger: () => {} }).mount(Relay);
}

describe('a2aAgent, when the remote task needs input', () => {
  let remote: Awaited<ReturnType<typeof serveApprovingRemote>>;
  beforeAll(async () => {
    remote = await serveApprovingRemote();
  });
  afterAll(() => remote.server.close());

  it('answers with the remote agent’s question when the card says it streams, streamed as agent deltas', async () => {
    const agent = await a2aAgent({ url: remote.server.url, name: 'refunds' });
    const app = front(agent);
    const deltas: string[] = [];
    const result = await app.chat({
      sessionId: 'ask-streamed',
      message: 'order 42',
      onEvent: (event) => {
        if (event.type === 'agent-delta') deltas.push(event.delta);
      },
    });
    // The orchestrator got the question as the agent's (successful) reply, and the user sees it.
    expect(result.status).toBe('completed');
    expect(result.reply).toBe(`ok: ${QUESTION}`);
    expect(deltas.join('')).toBe(QUESTION);
    // The remote's task is indeed waiting for input: its turn awaits approval.
    expect((await remote.app.sessions.lastTurn('ask-streamed.refunds'))?.status).toBe('awaiting_approval');
    await app.close();
  });

  it('answers with the remote agent’s question when the card says it does not stream', async () => {
    const card = await nonStreamingCard(remote.server.url);
    try {
      const app = front(await a2aAgent({ url: card.url, name: 'refunds' }));
      const deltas: string[] = [];
      const result = await app.chat({
        sessionId: 'ask-sent',
        message: 'order 42',
        onEvent: (event) => {
          if (event.type === 'agent-delta') deltas.push(event.delta);
        },
      });
      expect(result.status).toBe('completed');
      expect(result.reply).toBe(`ok: ${QUESTION}`);
      expect(deltas).toEqual([]);
      expect((await remote.app.sessions.lastTurn('ask-sent.refunds'))?.status).toBe('awaiting_approval');
      await app.close();
    } finally {
      card.server.close();
    }
  });
});

/** A promise and the functions that settle it. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * An agent that says it started, then answers only once the test releases
 * it, ignoring its abort signal; it keeps the signal of its last run.
 */
function waitingAgent() {
  let started = deferred();
  let release = deferred<string>();
  let returned = deferred();
  const runs: { signal: AbortSignal }[] = [];
  const agent = defineAgent({
    name: 'waiter',
    description: 'Answers when told to',
    async run(_message, { signal }) {
      runs.push({ signal });
      started.resolve();
      const reply = await release.promise;
      returned.resolve();
      return reply;
    },
  });
  return {
    agent,
    runs,
    started: () => started.promise,
    returned: () => returned.promise,
    release: (reply: string) => release.resolve(reply),
    reset: () => {
      started = deferred();
      release = deferred<string>();
      returned = deferred();
    },
  };
}

/** A raw JSON-RPC call to the app's A2A endpoint: the body a client reads. */
async function rpc(url: string, method: string, params: unknown) {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return (await response.json()) as {
    id: number;
    result?: unknown;
    error?: { code: number; message: string };
  };
}

describe('CancelTask on the app served as an A2A agent', () => {
  const waiter = waitingAgent();
  let server: ServerHandle;
  let app: ReturnType<typeof buildApp>['app'];
  beforeAll(async () => {
    const built = buildApp({
      agents: [waiter.agent, echoAgent()],
      handler: relay({ defaultAgent: 'waiter' }),
      a2a: true,
    });
    app = built.app;
    server = await app.start(built.orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  it('cancels a running task: the answer and GetTask say canceled, the agent is aborted, its late reply is not kept', async () => {
    waiter.reset();
    const client = await a2aClient(server.url);
    const contextId = 'cancel-running';
    const sent = client.sendMessage(userMessage({ text: 'take your time', contextId }));
    await waiter.started();
    const turn = await app.sessions.lastTurn(contextId);
    expect(turn?.status).toBe('running');
    const taskId = taskIdOf(contextId, turn!.turnId);

    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.id).toBe(taskId);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(waiter.runs.at(-1)?.signal.aborted).toBe(true);

    // The client that sent the message gets the canceled task too.
    const answer = asTask(await sent);
    expect(answer.id).toBe(taskId);
    expect(answer.status?.state).toBe(TaskState.TASK_STATE_CANCELED);

    const read = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(read.artifacts).toEqual([]);

    // The agent answers after all; the next turn in the context runs, and the late reply is nowhere.
    waiter.release('late reply');
    await waiter.returned();
    const next = asTask(await client.sendMessage(userMessage({ text: 'echo: still there?', contextId })));
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(next.artifacts[0]?.parts)).toBe('echo: still there?');
    const history = await app.sessions.read(contextId);
    expect(history.map((item) => item.content)).not.toContain('late reply');
    expect(JSON.stringify(history)).not.toContain('late reply');
    const again = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('cancels a task whose answer is streaming: the stream ends with the canceled state', async () => {
    waiter.reset();
    const client = await a2aClient(server.url);
    const states: TaskState[] = [];
    let taskId = '';
    for await (const event of client.sendMessageStream(userMessage({ text: 'stream slowly' }))) {
      const payload = event.payload;
      if (payload?.$case === 'task') {
        taskId = payload.value.id;
        await waiter.started();
        const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
        expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
      if (payload?.$case === 'statusUpdate') states.push(payload.value.status!.state);
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(waiter.runs.at(-1)?.signal.aborted).toBe(true);
    const read = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    waiter.release('late streamed reply');
    await waiter.returned();
  });

  it('refuses to cancel an unknown task with the A2A task-not-found error', async () => {
    const client = await a2aClient(server.url);
    await expect(
      client.cancelTask({ tenant: '', id: 'ses_nobody~turn_1', metadata: undefined }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(
      client.cancelTask({ tenant: '', id: 'not-a-task-id', metadata: undefined }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);

    // On the wire: a JSON-RPC error with A2A's TaskNotFound code (-32001), and no result.
    const body = await rpc(server.url, 'CancelTask', { id: 'ses_nobody~turn_1' });
    expect(body.id).toBe(7);
    expect(body.result).toBeUndefined();
    expect(body.error?.code).toBe(-32001);
    expect(body.error?.message).toMatch(/No task ses_nobody~turn_1/);
  });

  it('refuses to cancel a completed task with the A2A task-not-cancelable error naming its state, and the task stays completed', async () => {
    const client = await a2aClient(server.url);
    const done = asTask(await client.sendMessage(userMessage({ text: 'echo: finished' })));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    await expect(client.cancelTask({ tenant: '', id: done.id, metadata: undefined })).rejects.toThrow(
      /is not running \(it is completed\)/,
    );
    const body = await rpc(server.url, 'CancelTask', { id: done.id });
    expect(body.result).toBeUndefined();
    expect(body.error?.message).toMatch(/is not running \(it is completed\)/);
    // A2A's TaskNotCancelableError, not a malformed request.
    expect(body.error?.code).toBe(-32002);

    const read = await client.getTask({ tenant: '', id: done.id, historyLength: undefined });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(read.artifacts[0]?.parts)).toBe('echo: finished');
  });
});
