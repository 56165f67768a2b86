import { describe, expect, it } from 'vitest';
import { captureLogs } from '../../src/testing/log-capture.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';

/** `levels` objects, one inside the other, as JSON text (a client can send what no serialiser here would write). */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** `levels` arrays, one inside the other. */
const nestedArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

function setUp() {
  const logs = captureLogs();
  const { app, orchestrator } = createApp({
    agents: [echoAgent()],
    logger: logs.logger,
    a2a: true,
    mcp: true,
    maxBodyBytes: 2 * 1024 * 1024,
  });
  return { app, model: orchestrator.name, logs };
}

const a2aSend = (message: string) =>
  postJson(`{"jsonrpc":"2.0","id":"call-7","method":"SendMessage","params":{"message":${message}}}`, {
    'a2a-version': '1.0',
  });
const mcpCall = (params: string) =>
  postJson(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":${params}}`, {
    accept: 'application/json, text/event-stream',
  });

interface JsonRpcReply {
  jsonrpc: string;
  id: unknown;
  error?: { code: number; message: string };
  result?: unknown;
}

describe('JSON nested 10 000 levels deep, on every surface', () => {
  it.each([
    [
      'an A2A data part',
      a2aSend(`{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"},{"data":${nestedJson(10_000)}}]}`),
      /at params\.message\.parts\.1/,
    ],
    [
      'A2A message metadata',
      a2aSend(
        `{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":${nestedJson(10_000)}}`,
      ),
      /at params\.message\.metadata/,
    ],
  ])('in %s is a JSON-RPC -32602 naming where, and no server error', async (_case, request, where) => {
    const { app, logs } = setUp();
    const response = await app.request('/a2a', request);
    expect(response.status).toBe(200);
    const reply = (await response.json()) as JsonRpcReply;
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 'call-7', error: { code: -32602 } });
    expect(reply.error?.message).toMatch(/nest at most 32 levels/);
    expect(reply.error?.message).toMatch(where);
    expect(logs.withMessage('unexpected error')).toEqual([]);
    expect(logs.records().filter((record) => record.level >= 50)).toEqual([]);
  });

  it.each([
    [
      'MCP _meta (500 000 levels)',
      mcpCall(`{"name":"chat","arguments":{"message":"hi"},"_meta":${nestedArrays(500_000)}}`),
    ],
    ['MCP arguments', mcpCall(`{"name":"chat","arguments":{"message":"hi","extra":${nestedJson(10_000)}}}`)],
  ])('in %s is a JSON-RPC -32602, and no turn runs', async (_case, request) => {
    const { app, logs } = setUp();
    const response = await app.request('/mcp', request);
    const reply = (await response.json()) as JsonRpcReply;
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: 42, error: { code: -32602 } });
    expect(reply.error?.message).toMatch(/nest at most 32 levels/);
    expect(logs.withMessage('turn failed')).toEqual([]);
    expect((await (await app.request('/v1/sessions')).json()) as object).toEqual({ sessions: [] });
  });

  it("in OpenAI metadata is a 400 in OpenAI's error shape, naming the field", async () => {
    const { app, model } = setUp();
    const response = await app.request(
      '/v1/chat/completions',
      postJson(
        `{"model":"${model}","messages":[{"role":"user","content":"hi"}],"metadata":{"note":${nestedJson(10_000)}}}`,
      ),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'validation_error',
      param: expect.stringMatching(/^metadata\.note/),
    });
    expect(body.error.message).toMatch(/nest at most 32 levels/);
  });

  it('in a POST /v1/chat body is a 400 naming where, and the surfaces still serve ordinary requests', async () => {
    const { app, model } = setUp();
    const deep = await app.request('/v1/chat', postJson(`{"message":"hi","metadata":${nestedJson(10_000)}}`));
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: { message: string } }).error.message).toMatch(
      /metadata\.a\.a\.a: request JSON must nest at most 32 levels/,
    );

    const a2a = await app.request(
      '/a2a',
      a2aSend('{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"hi"},{"data":{"a":{"b":[1,2]}}}]}'),
    );
    expect(((await a2a.json()) as JsonRpcReply).result).toBeDefined();
    const mcp = await app.request(
      '/mcp',
      mcpCall('{"name":"chat","arguments":{"message":"hi"},"_meta":{"a":[[1]]}}'),
    );
    expect(((await mcp.json()) as JsonRpcReply).result).toMatchObject({
      structuredContent: { reply: 'echo: hi' },
    });
    const openAi = await app.request(
      '/v1/chat/completions',
      postJson({ model, messages: [{ role: 'user', content: 'hi' }], metadata: { note: 'x' } }),
    );
    expect(openAi.status).toBe(200);
  });
});
