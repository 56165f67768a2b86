import {
  type AgentMeta,
  type Conversation,
  type MessageItem,
  RequestContext,
  toolCall,
} from '@switchboard/core';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { AppendOptions } from '../../src/stores/session-store.js';
import { captureLogs } from '../../src/testing/log-capture.js';
import {
  buildApp,
  createApp,
  echoAgent,
  postJson,
  readEventStream,
  STACK_LINE,
  streamingAgent,
} from '../support/app-fixtures.js';
import { useSpanRecording } from '../support/span-recording.js';

/** Text that must reach the logs (it is the detail an operator needs) and never a client. */
const DETAIL = 'backend 10.0.0.9:5432 refused the password for svc_router';

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

function logged(options: Omit<Parameters<typeof createApp>[0], 'logger'>) {
  const logs = captureLogs();
  const { app } = createApp({ ...options, logger: logs.logger });
  apps.push(app);
  return { app, logs };
}

const requestLines = (logs: ReturnType<typeof captureLogs>) => logs.withMessage('request completed');
const failureLines = (logs: ReturnType<typeof captureLogs>) => logs.withMessage('turn failed');

describe('one line per request', () => {
  it('logs method, route, status, duration, request id and session as JSON, and echoes x-request-id', async () => {
    const { app, logs } = logged({ agents: [echoAgent()] });
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'ses-log-1' }, { 'x-request-id': 'client-req-42' }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('client-req-42');

    // Every line is one JSON object.
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const line of logs.lines) expect(() => JSON.parse(line)).not.toThrow();
    const [line, ...others] = requestLines(logs);
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      level: 30,
      method: 'POST',
      route: '/v1/chat',
      status: 200,
      requestId: 'client-req-42',
      sessionId: 'ses-log-1',
    });
    expect(line?.durationMs).toEqual(expect.any(Number));
    expect(line?.durationMs).toBeGreaterThanOrEqual(0);
    // Without auth and tracing there is no tenant and no trace.
    expect(line).not.toHaveProperty('tenantId');
    expect(line).not.toHaveProperty('traceId');
  });

  it('names the route pattern, not the path, and the session from the path', async () => {
    const { app, logs } = logged({ agents: [echoAgent()] });
    await app.request('/v1/chat', postJson({ message: 'hi', sessionId: 'ses-pattern' }));
    const session = await app.request('/v1/sessions/ses-pattern');
    expect(session.status).toBe(200);
    const missing = await app.request('/v1/nothing-here');
    expect(missing.status).toBe(404);
    const wrongMethod = await app.request('/v1/chat');
    expect(wrongMethod.status).toBe(405);
    const wrongOnSession = await app.request('/v1/sessions/ses-pattern', { method: 'PUT' });
    expect(wrongOnSession.status).toBe(405);
    expect(wrongOnSession.headers.get('allow')).toBe('GET, DELETE');
    // A trailing slash is another path, as Hono routes it.
    expect((await app.request('/v1/chat/')).status).toBe(404);

    expect(
      requestLines(logs).map(({ method, route, status, sessionId }) => ({
        method,
        route,
        status,
        sessionId,
      })),
    ).toEqual([
      { method: 'POST', route: '/v1/chat', status: 200, sessionId: 'ses-pattern' },
      { method: 'GET', route: '/v1/sessions/:id', status: 200, sessionId: 'ses-pattern' },
      { method: 'GET', route: null, status: 404, sessionId: undefined },
      { method: 'GET', route: '/v1/chat', status: 405, sessionId: undefined },
      { method: 'PUT', route: '/v1/sessions/:id', status: 405, sessionId: 'ses-pattern' },
      { method: 'GET', route: null, status: 404, sessionId: undefined },
    ]);
  });

  it('echoes x-request-id over a real port too, on JSON, streamed and error responses', async () => {
    const logs = captureLogs();
    const { app, orchestrator } = buildApp({ agents: [echoAgent()], logger: logs.logger });
    apps.push(app);
    const server = await app.start(orchestrator, { port: 0 });
    const send = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/chat`, postJson(body, headers));
    const named = await send({ message: 'hi' }, { 'x-request-id': 'port-req-1' });
    expect(named.headers.get('x-request-id')).toBe('port-req-1');
    const streamed = await send({ message: 'hi', stream: true }, { 'x-request-id': 'port-req-2' });
    expect(streamed.headers.get('x-request-id')).toBe('port-req-2');
    await streamed.text();
    const refused = await send('{oops', { 'x-request-id': 'port-req-3' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-request-id')).toBe('port-req-3');
    const anonymous = await send({ message: 'hi' });
    const fresh = anonymous.headers.get('x-request-id');
    expect(fresh).toMatch(/^req_/);
    for (const response of [named, refused, anonymous]) await response.text();
    // Exactly one header, not the client's and a fresh one side by side.
    expect(named.headers.get('x-request-id')).not.toContain(',');
    expect(requestLines(logs).map((line) => line.requestId)).toEqual([
      'port-req-1',
      'port-req-2',
      'port-req-3',
      fresh,
    ]);
  });

  it('takes the session of an OpenAI-compatible request from its x-session-id', async () => {
    const { app, logs } = logged({ agents: [echoAgent()] });
    const response = await app.request(
      '/v1/chat/completions',
      postJson({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(response.status).toBe(200);
    const sessionId = response.headers.get('x-session-id');
    expect(sessionId).toBeTruthy();
    expect(requestLines(logs)).toEqual([
      expect.objectContaining({ route: '/v1/chat/completions', status: 200, sessionId }),
    ]);
  });

  it('gives the turn the request id it echoes, and makes one when the client sends none', async () => {
    const seen: Array<string | undefined> = [];
    const witness = defineAgent({
      name: 'echo',
      description: 'Records the request id',
      run: (message) => {
        seen.push(RequestContext.current().requestId);
        return message;
      },
    });
    const { app, logs } = logged({ agents: [witness] });
    const response = await app.request('/v1/chat', postJson({ message: 'hi' }));
    const echoed = response.headers.get('x-request-id');
    expect(echoed).toMatch(/^req_/);
    expect(seen).toEqual([echoed]);
    expect(requestLines(logs)[0]?.requestId).toBe(echoed);
  });

  it('replaces an x-request-id that is too long or not visible ASCII with a fresh one', async () => {
    const { app, logs } = logged({ agents: [echoAgent()] });
    const tooLong = 'r'.repeat(129);
    for (const bad of [tooLong, 'has space', 'caf\u00e9', '']) {
      const response = await app.request('/v1/chat', postJson({ message: 'hi' }, { 'x-request-id': bad }));
      expect(response.status).toBe(200);
      const echoed = response.headers.get('x-request-id');
      expect(echoed).toMatch(/^req_/);
      expect(echoed).not.toBe(bad);
    }
    const longest = 'r'.repeat(128);
    const accepted = await app.request('/v1/chat', postJson({ message: 'hi' }, { 'x-request-id': longest }));
    expect(accepted.headers.get('x-request-id')).toBe(longest);
    expect(logs.lines.join('\n')).not.toContain(tooLong);
  });

  it('echoes x-request-id on errors too: a malformed body, an unknown route, an unknown session', async () => {
    const { app, logs } = logged({ agents: [echoAgent()] });
    const headers = { 'x-request-id': 'err-req-1' };
    const malformed = await app.request('/v1/chat', postJson('{not json', headers));
    expect(malformed.status).toBe(400);
    const unknownRoute = await app.request('/v1/nope', { headers });
    const unknownSession = await app.request('/v1/sessions/ses-none', { headers });
    for (const response of [malformed, unknownRoute, unknownSession]) {
      expect(response.headers.get('x-request-id')).toBe('err-req-1');
    }
    expect(requestLines(logs).map((line) => [line.status, line.requestId])).toEqual([
      [400, 'err-req-1'],
      [404, 'err-req-1'],
      [404, 'err-req-1'],
    ]);
  });

  it('echoes x-request-id through app.fetch on every surface, the MCP endpoint too, and logs it', async () => {
    const { app, logs } = logged({ agents: [echoAgent()], mcp: true });
    const headers = { 'x-request-id': 'mcp-req-1', accept: 'application/json, text/event-stream' };
    const listed = await app.request(
      '/mcp',
      postJson({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers),
    );
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-request-id')).toBe('mcp-req-1');
    expect(requestLines(logs)).toEqual([expect.objectContaining({ route: '/mcp', requestId: 'mcp-req-1' })]);
  });

  it('logs a streamed request once, when its stream ends, with the whole duration', async () => {
    const { app, logs } = logged({ agents: [streamingAgent('streamer')] });
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'streamer: go', sessionId: 'ses-stream', stream: true }),
    );
    const events = await readEventStream(response);
    expect(events.at(-1)?.event).toBe('turn-end');
    const lines = requestLines(logs);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ route: '/v1/chat', status: 200, sessionId: 'ses-stream' });
    // The agent streams three chunks 2 ms apart: the line covers them, not just the first byte.
    expect(lines[0]?.durationMs).toBeGreaterThanOrEqual(4);
  });
});

describe('tenant and trace on the request line', () => {
  const recording = useSpanRecording();
  const KEY = 'sk-logging-0123456789abcdef0123456789';
  const auth = apiKeys({ keys: { [KEY]: { tenantId: 'acme', name: 'acme-web' } } });

  it('names the tenant and key name, carries the trace id, and never the key', async () => {
    const { app, logs } = logged({ agents: [echoAgent()], auth });
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'ses-tenant' }, { authorization: `Bearer ${KEY}` }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { traceId?: string };
    expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(recording().spans.length).toBeGreaterThan(0);

    const stream = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'ses-tenant', stream: true }, { authorization: `Bearer ${KEY}` }),
    );
    const end = (await readEventStream(stream)).at(-1);
    const streamedTrace = (end?.data as { traceId?: string } | undefined)?.traceId;
    expect(streamedTrace).toMatch(/^[0-9a-f]{32}$/);

    // A wrong key and a missing one are refused, and logged without the key either.
    const wrong = await app.request(
      '/v1/chat',
      postJson({ message: 'hi' }, { authorization: `Bearer ${KEY}x` }),
    );
    expect(wrong.status).toBe(401);

    expect(requestLines(logs)).toEqual([
      expect.objectContaining({ status: 200, tenantId: 'acme', keyName: 'acme-web', traceId: body.traceId }),
      expect.objectContaining({ status: 200, tenantId: 'acme', keyName: 'acme-web', traceId: streamedTrace }),
      expect.objectContaining({ status: 401, route: '/v1/chat' }),
    ]);
    expect(requestLines(logs)[2]).not.toHaveProperty('tenantId');
    const everything = logs.lines.join('\n');
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain(KEY.slice(3, 19));
    expect(everything.toLowerCase()).not.toContain('bearer');
  });
});

/** Fails the turn with an error whose message is {@link DETAIL}. */
const failWithDetail = () => ({ error: new Error(DETAIL) });

describe('failed turns', () => {
  it('log one line with the code and the whole error, which the client never sees', async () => {
    const { app, logs } = logged({ agents: [echoAgent()], handler: failWithDetail });
    const response = await app.request('/v1/chat', postJson({ message: 'hi', sessionId: 'ses-fail' }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: 'failed' });
    expect(text).not.toContain('10.0.0.9');

    const [line, ...others] = failureLines(logs);
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      level: 50,
      sessionId: 'ses-fail',
      turnId: expect.stringMatching(/^turn_/),
      requestId: requestLines(logs)[0]?.requestId,
      orchestrator: 'scripted',
      code: 'internal_error',
      err: { type: 'Error', message: DETAIL, stack: expect.stringMatching(STACK_LINE) },
    });
  });

  it('log one line when the turn is streamed', async () => {
    const { app, logs } = logged({ agents: [echoAgent()], handler: failWithDetail });
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'ses-fail-stream', stream: true }),
    );
    const text = await response.text();
    expect(text).toContain('event: error');
    expect(text).not.toContain('10.0.0.9');
    expect(failureLines(logs)).toEqual([
      expect.objectContaining({
        sessionId: 'ses-fail-stream',
        err: expect.objectContaining({ message: DETAIL }),
      }),
    ]);
    expect(requestLines(logs)).toEqual([
      expect.objectContaining({ status: 200, sessionId: 'ses-fail-stream' }),
    ]);
  });

  it('log one line when an orchestrator built on AbstractOrchestrator throws', async () => {
    const { app, logs } = logged({
      agents: [echoAgent()],
      handler: () => {
        throw new Error(DETAIL);
      },
    });
    const result = await app.chat({ message: 'hi', sessionId: 'ses-abstract-throw' });
    expect(result.status).toBe('failed');
    expect(JSON.stringify(result)).not.toContain('10.0.0.9');
    const [line, ...others] = failureLines(logs);
    expect(others).toEqual([]);
    expect(line?.err).toMatchObject({
      message: expect.stringContaining(DETAIL),
      stack: expect.stringMatching(STACK_LINE),
    });
  });

  it('log one line when a hand-written orchestrator throws, with its code and the cause', async () => {
    const logs = captureLogs();
    const agents = [echoAgent()];
    const metas: AgentMeta[] = agents.map(({ name, description }) => ({ name, description }));
    const app = new App({ name: 'raw', agents, logger: logs.logger }).mount({
      name: 'raw-router',
      agents: metas,
      decide(_conversation: Conversation) {
        throw new Error(DETAIL);
      },
    });
    apps.push(app);
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'ses-raw', stream: true }),
    );
    const text = await response.text();
    expect(text).not.toContain('10.0.0.9');
    const [line, ...others] = failureLines(logs);
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      code: 'orchestrator_error',
      orchestrator: 'raw-router',
      sessionId: 'ses-raw',
    });
    // The cause's message and stack are in the line: pino's serializer follows `cause`.
    expect(line?.err).toMatchObject({ type: 'OrchestratorError', message: expect.stringContaining(DETAIL) });
    expect(String((line?.err as { stack?: string } | undefined)?.stack)).toContain(
      `caused by: Error: ${DETAIL}`,
    );
  });

  it('log one line when a streamed turn throws after its stream started (the store failed)', async () => {
    class FailingStore extends InMemorySessionStore {
      override async append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions) {
        if (messages.some((message) => message.role === 'tool')) throw new Error(DETAIL);
        return super.append(sessionId, messages, options);
      }
    }
    const { app, logs } = logged({
      agents: [streamingAgent('streamer')],
      sessionStore: new FailingStore(),
      handler: () => toolCall('streamer', 'go'),
    });
    const response = await app.request(
      '/v1/chat',
      postJson({ message: 'hi', sessionId: 'ses-store', stream: true }),
    );
    const text = await response.text();
    expect(text).toContain('event: error');
    expect(text).not.toContain('10.0.0.9');
    expect(failureLines(logs)).toEqual([
      expect.objectContaining({
        code: 'internal_error',
        sessionId: 'ses-store',
        requestId: requestLines(logs)[0]?.requestId,
        err: expect.objectContaining({ message: DETAIL }),
      }),
    ]);
  });
});

describe('the logger option', () => {
  it('takes a pino logger and its children as they are', async () => {
    const logs = captureLogs();
    const { app } = createApp({ agents: [echoAgent()], logger: logs.logger.child({ service: 'desk' }) });
    apps.push(app);
    expect(app.logger).not.toBe(logs.logger);
    await app.request('/healthz');
    expect(requestLines(logs)).toEqual([expect.objectContaining({ service: 'desk', route: '/healthz' })]);
  });

  it('still accepts the deprecated error callback: it gets the errors, not the request lines', async () => {
    const errors: unknown[] = [];
    const { app } = createApp({
      agents: [echoAgent()],
      handler: failWithDetail,
      logger: (error) => errors.push(error),
    });
    apps.push(app);
    await app.request('/healthz');
    await app.request('/v1/chat', postJson({ message: 'hi' }));
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe(DETAIL);
  });

  it('defaults to a pino logger at logLevel', () => {
    const app = new App({ name: 'levels', agents: [echoAgent()], logLevel: 'warn' });
    expect((app.logger as pino.Logger).level).toBe('warn');
    expect((new App({ name: 'default', agents: [] }).logger as pino.Logger).level).toBe('info');
    expect(pino.version).toMatch(/^10\./);
  });
});
