import { describe, expect, it } from 'vitest';
import { useServerApps } from './support/server-apps.js';

const serve = useServerApps();

const callChat = (message: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'chat', arguments: { message } },
  }),
});

describe('the demo server over MCP', () => {
  it('is on by default: its chat tool answers like /v1/chat', async () => {
    const { app } = serve({});
    const response = await app.request('/mcp', callChat('what is 2 + 3?'));
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      result: { structuredContent: { reply: string; status: string } };
    };
    expect(body.result.structuredContent.status).toBe('completed');
    expect(body.result.structuredContent.reply).toContain('5');
  });

  it('MCP=off turns it off', async () => {
    const { app } = serve({ MCP: 'off' });
    expect((await app.request('/mcp', callChat('hello'))).status).toBe(404);
  });
});
