/**
 * The A2A Technology Compatibility Kit's (a2aproject/a2a-tck) mandatory
 * JSON-RPC checks that concern the server, reproduced over HTTP: each test
 * names the kit's check(s) it stands for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskIdOf } from '../../src/a2a/a2a-task.js';
import { defineAgent } from '../../src/agents/agent.js';
import type { ServerHandle } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { buildApp, echoAgent, sleep } from '../support/app-fixtures.js';

/** An agent that answers when the test lets it. */
function gatedAgent() {
  const gates: Array<() => void> = [];
  const agent = defineAgent({
    name: 'gated',
    description: 'Answers when let through',
    async run(message) {
      await new Promise<void>((resolve) => gates.push(resolve));
      return `let through: ${message}`;
    },
  });
  const open = async () => {
    while (gates.length === 0) await sleep(5);
    gates.shift()?.();
  };
  return { agent, open };
}

type Reply = { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: { code: number } };

let counter = 0;
const message = (text: string, contextId?: string) => ({
  message: {
    messageId: `conformance-${++counter}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(contextId ? { contextId } : {}),
  },
});

describe('the A2A endpoint, as the A2A TCK reads it', () => {
  let server: ServerHandle;
  let app: ReturnType<typeof buildApp>['app'];
  const gated = gatedAgent();
  /** Posts a raw body to the endpoint, naming the version as a query parameter (as the spec allows). */
  const post = (body: unknown, { version = '?A2A-Version=1.0', headers = {} } = {}) =>
    fetch(`${server.url}/a2a${version}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const call = async (method: string, params: unknown, id: unknown = `req-${++counter}`) =>
    (await (await post({ jsonrpc: '2.0', id, method, params })).json()) as Reply;
  const send = async (text: string, contextId?: string) => {
    const reply = await call('SendMessage', message(text, contextId));
    return (reply.result?.task ?? {}) as { id: string; contextId: string };
  };

  beforeAll(async () => {
    const refunds = defineAgent({
      name: 'refunds',
      description: 'Refunds an order, once a person approves',
      requiresApproval: true,
      run: (message) => `refunded ${message}`,
    });
    const built = buildApp({ agents: [echoAgent(), gated.agent, refunds], a2a: true });
    app = built.app;
    server = await app.start(built.orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  it('test_rejects_malformed_json, test_raw_invalid_json: a body that is not JSON is -32700', async () => {
    const reply = (await (
      await post('{"jsonrpc": "2.0", "method": "SendMessage", "params": {"foo": "bar"}')
    ).json()) as Reply;
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('test_rejects_invalid_json_rpc_requests, test_invalid_jsonrpc_version, test_missing_method_field: -32600, with the request id', async () => {
    const cases: Array<[unknown, number, unknown]> = [
      [{ jsonrpc: 'aaa', method: 'SendMessage', params: {} }, -32600, null],
      [{ jsonrpc: '1.0', method: 'SendMessage', params: {}, id: 'v1' }, -32600, 'v1'],
      [{ jsonrpc: '2.0', params: {} }, -32600, null],
      [{ jsonrpc: '2.0', params: message('hi'), id: 7 }, -32600, 7],
      [{ jsonrpc: '2.0', method: 'SendMessageXXX', id: '3', params: {} }, -32601, '3'],
      [{ jsonrpc: '2.0', method: 'SendMessage', params: {}, id: { bad: 'type' } }, -32600, null],
      [{ jsonrpc: '2.0', method: 'SendMessage', id: '4', params: { '': 'not_a_dict' } }, -32602, '4'],
    ];
    for (const [body, code, id] of cases) {
      const response = await post(body);
      expect(response.status).toBe(200);
      expect(await response.json(), JSON.stringify(body)).toMatchObject({ id, error: { code } });
    }
  });

  it('a batch is an invalid request (-32600): one request per call', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x~y' } },
      { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'x~z' } },
    ];
    expect(await (await post(batch)).json()).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await (await post([])).json()).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('honours the version given as ?A2A-Version=1.0 as it does the header, and refuses a request naming none (0.3) with -32009', async () => {
    const request = { jsonrpc: '2.0', id: 'v', method: 'GetTask', params: { id: 'none~none' } };
    expect(await (await post(request)).json()).toMatchObject({ id: 'v', error: { code: -32001 } });
    expect(
      await (await post(request, { version: '', headers: { 'A2A-Version': '1.0' } })).json(),
    ).toMatchObject({ id: 'v', error: { code: -32001 } });
    expect(await (await post(request, { version: '' })).json()).toMatchObject({
      id: 'v',
      error: { code: -32009 },
    });
    const legacy = { jsonrpc: '2.0', id: 'old', method: 'message/send', params: message('hi') };
    expect(await (await post(legacy, { version: '' })).json()).toMatchObject({
      id: 'old',
      error: { code: -32009 },
    });
  });

  it('answers errors of the streaming methods with the request id, not null', async () => {
    const streamed = await call(
      'SendStreamingMessage',
      { message: { ...message('hi').message, taskId: 'none~none' } },
      'stream-1',
    );
    expect(streamed).toMatchObject({ id: 'stream-1', error: { code: -32001 } });
    expect(await call('SubscribeToTask', { id: 'none~none' }, 'sub-1')).toMatchObject({
      id: 'sub-1',
      error: { code: -32001 },
    });
  });

  it('test_tasks_get_with_history_length: GetTask returns the last historyLength messages of the task', async () => {
    const task = await send('echo: remember me');
    const history = async (historyLength?: number) => {
      const params = historyLength === undefined ? { id: task.id } : { id: task.id, historyLength };
      const reply = await call('GetTask', params);
      const messages = (reply.result?.history ?? []) as Array<{
        role: string;
        parts: Array<{ text: string }>;
      }>;
      return messages.map((item) => `${item.role} ${item.parts[0]?.text}`);
    };
    expect(await history()).toEqual(['ROLE_USER echo: remember me', 'ROLE_AGENT echo: remember me']);
    expect(await history(1)).toEqual(['ROLE_AGENT echo: remember me']);
    expect(await history(0)).toEqual([]);
    expect(await call('GetTask', { id: task.id, historyLength: -1 })).toMatchObject({
      error: { code: -32602 },
    });
  });

  it('carries out a notification (a request without id) and answers nothing', async () => {
    const response = await post({
      jsonrpc: '2.0',
      method: 'SendMessage',
      params: message('echo: quiet', 'notified'),
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const stored = await app.sessions.read('notified');
    expect(
      stored.filter((item) => item.role !== 'tool').map((item) => `${item.role} ${item.content}`),
    ).toEqual(['user echo: quiet', 'assistant echo: quiet']);
    const streamed = await post({
      jsonrpc: '2.0',
      method: 'SendStreamingMessage',
      params: message('echo: streamed quietly', 'notified-stream'),
    });
    expect(streamed.status).toBe(204);
    expect(await streamed.text()).toBe('');
    expect((await app.sessions.lastTurn('notified-stream'))?.status).toBe('completed');
  });

  it('test_list_all_tasks, test_filter_by_context_id, test_list_tasks_sorted_by_timestamp_descending, test_list_tasks_empty_when_none_exist: ListTasks, newest first, paged', async () => {
    const first = await send('echo: one', 'listed');
    const second = await send('echo: two', 'listed');
    const other = await send('echo: three', 'listed-other');
    const all = await call('ListTasks', {});
    const ids = ((all.result?.tasks ?? []) as Array<{ id: string }>).map((task) => task.id);
    expect(ids).toEqual(expect.arrayContaining([first.id, second.id, other.id]));
    expect(ids.indexOf(other.id)).toBeLessThan(ids.indexOf(second.id));
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    expect(all.result).toMatchObject({ totalSize: ids.length, pageSize: ids.length, nextPageToken: '' });

    const byContext = await call('ListTasks', { contextId: 'listed', pageSize: 1 });
    expect(byContext.result).toMatchObject({
      tasks: [{ id: second.id, contextId: 'listed' }],
      totalSize: 2,
      pageSize: 1,
    });
    const next = await call('ListTasks', {
      contextId: 'listed',
      pageSize: 1,
      pageToken: byContext.result?.nextPageToken,
    });
    expect(next.result).toMatchObject({ tasks: [{ id: first.id }], nextPageToken: '', pageSize: 1 });

    const completed = await call('ListTasks', { contextId: 'listed', status: 'TASK_STATE_FAILED' });
    expect(completed.result).toMatchObject({ tasks: [], totalSize: 0, pageSize: 0, nextPageToken: '' });
    expect(await call('ListTasks', { contextId: 'no-such-context' })).toMatchObject({
      result: { tasks: [], totalSize: 0, pageSize: 0, nextPageToken: '' },
    });
    expect(await call('ListTasks', { pageToken: 'not-a-token' })).toMatchObject({ error: { code: -32602 } });
    expect(await call('ListTasks', { pageSize: 101 })).toMatchObject({ error: { code: -32602 } });
  });

  it('SubscribeToTask: the running task first, then its progress, its answer and its end; an ended task is -32004', async () => {
    const sent = post({
      jsonrpc: '2.0',
      id: 'slow',
      method: 'SendMessage',
      params: message('gated: wait', 'subscribed'),
    });
    let turnId: string | undefined;
    while (!turnId) {
      const last = await app.sessions.lastTurn('subscribed');
      if (last?.status === 'running') turnId = last.turnId;
      else await sleep(5);
    }
    const taskId = taskIdOf('subscribed', turnId);
    const stream = await post({
      jsonrpc: '2.0',
      id: 'sub',
      method: 'SubscribeToTask',
      params: { id: taskId },
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    await gated.open();
    const events = (await stream.text())
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as Reply);
    expect(events.every((event) => event.id === 'sub')).toBe(true);
    const described = events.map(({ result = {} }) => {
      if ('task' in result) return `task ${(result.task as { status: { state: string } }).status.state}`;
      if ('artifactUpdate' in result)
        return `artifact ${(result.artifactUpdate as { artifact: { parts: Array<{ text: string }> } }).artifact.parts[0]?.text}`;
      return `status ${(result.statusUpdate as { status: { state: string } }).status.state}`;
    });
    expect(described[0]).toBe('task TASK_STATE_WORKING');
    expect(described.slice(-2)).toEqual(['artifact let through: wait', 'status TASK_STATE_COMPLETED']);
    await sent;
    expect(await call('SubscribeToTask', { id: taskId }, 'ended')).toMatchObject({
      id: 'ended',
      error: { code: -32004 },
    });
  });

  it('SubscribeToTask on a task awaiting input: the task as it stands, then the stream closes (an interrupted state ends a stream)', async () => {
    const paused = await send('refunds: order 7', 'interrupted');
    const approvalId = (await app.sessions.lastTurn('interrupted'))?.approvals?.[0]?.id;
    expect(approvalId).toBeDefined();
    const stream = await post({
      jsonrpc: '2.0',
      id: 'sub-paused',
      method: 'SubscribeToTask',
      params: paused,
    });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    // Only once the first event is in does the task go on: a stream still open would carry the rest of it.
    const done = await app.resolveApproval({
      sessionId: 'interrupted',
      approvalId: approvalId!,
      decision: 'approve',
    });
    expect(done.status).toBe('completed');
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += read.value;
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as Reply);
    expect(events.map(({ id, result }) => [id, Object.keys(result ?? {})])).toEqual([
      ['sub-paused', ['task']],
    ]);
    expect(events[0]?.result?.task).toMatchObject({
      id: paused.id,
      status: { state: 'TASK_STATE_INPUT_REQUIRED' },
    });
  });
});

describe('ListTasks with auth', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    const built = buildApp({
      agents: [echoAgent()],
      a2a: true,
      auth: apiKeys({
        keys: {
          'acme-key-0123456789abcdef': { tenantId: 'acme' },
          'acme-ann-key-0123456789abcdef': { tenantId: 'acme', userId: 'ann' },
          'globex-key-0123456789abcdef': { tenantId: 'globex' },
          'acme-chat-key-0123456789abcdef': { tenantId: 'acme', scopes: ['chat'] },
        },
      }),
    });
    server = await built.app.start(built.orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  it("lists only the caller's tenant's tasks, a user-bound key's user's, and none without sessions:read", async () => {
    const call = async (key: string, method: string, params: unknown) =>
      (await (
        await fetch(`${server.url}/a2a`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${key}`,
            'A2A-Version': '1.0',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).json()) as Reply;
    const listed = async (key: string) =>
      (((await call(key, 'ListTasks', {})).result?.tasks ?? []) as Array<{ contextId: string }>).map(
        (task) => task.contextId,
      );
    await call('acme-key-0123456789abcdef', 'SendMessage', message('echo: a', 'acme-ctx'));
    await call('acme-ann-key-0123456789abcdef', 'SendMessage', message('echo: b', 'ann-ctx'));
    await call('globex-key-0123456789abcdef', 'SendMessage', message('echo: c', 'globex-ctx'));
    expect((await listed('acme-key-0123456789abcdef')).sort()).toEqual(['acme-ctx', 'ann-ctx']);
    expect(await listed('acme-ann-key-0123456789abcdef')).toEqual(['ann-ctx']);
    expect(await listed('globex-key-0123456789abcdef')).toEqual(['globex-ctx']);
    // A key that may chat but not read sessions lists nothing, as it could not GET /v1/sessions.
    const refused = await call('acme-chat-key-0123456789abcdef', 'ListTasks', {});
    expect(refused.result).toBeUndefined();
    expect(refused.error?.code).toBeLessThan(0);
  });
});
