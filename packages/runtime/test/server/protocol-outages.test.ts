import { createServer } from 'node:net';
import { StoreUnavailableError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App, AppOptions } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { apiKeys } from '../../src/server/auth.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { RateLimiter } from '../../src/stores/rate-limiter.js';
import type { SessionStore } from '../../src/stores/session-store.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';
import { useRedis } from '../support/redis.js';

useRedis();

const KEY = 'sk-acme-0123456789abcdef0123456789abcdef';
const HOST = '10.0.0.9:6379';

/** A rate limiter whose store is down. */
const downLimiter: RateLimiter = {
  hit: () => {
    throw new StoreUnavailableError({ message: `Redis at ${HOST} is unavailable (count a request)` });
  },
};

/** A session store that cannot open a turn: its store is down. */
class DownSessionStore extends InMemorySessionStore {
  override openTurn(): never {
    throw new StoreUnavailableError({ message: `Redis at ${HOST} is unavailable (open a turn)` });
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What a client of each surface reads during the outage. */
async function askEverySurface(app: App, model: string, headers: Record<string, string>) {
  const a2a = await app.request(
    '/a2a',
    postJson(
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'SendMessage',
        params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      },
      { ...headers, 'a2a-version': '1.0' },
    ),
  );
  const mcp = await app.request(
    '/mcp',
    postJson(
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'chat', arguments: { message: 'hi' } } },
      { ...headers, accept: 'application/json, text/event-stream' },
    ),
  );
  const openAi = await app.request(
    '/v1/chat/completions',
    postJson({ model, messages: [{ role: 'user', content: 'hi' }] }, headers),
  );
  return {
    a2a: { status: a2a.status, text: await a2a.text() },
    mcp: { status: mcp.status, text: await mcp.text() },
    openAi: { status: openAi.status, text: await openAi.text() },
  };
}

function expectEachInItsShape(answers: Awaited<ReturnType<typeof askEverySurface>>, leaked: RegExp) {
  for (const surface of ['a2a', 'mcp'] as const) {
    const reply = JSON.parse(answers[surface].text) as Record<string, unknown>;
    expect(reply, surface).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32603, message: expect.stringMatching(/store/) },
    });
    expect(answers[surface].text, surface).not.toMatch(leaked);
  }
  expect(answers.openAi.status).toBe(503);
  const body = JSON.parse(answers.openAi.text) as { error: Record<string, unknown> };
  expect(body.error).toMatchObject({
    message: expect.stringMatching(/store/),
    type: 'server_error',
    code: 'store_unavailable',
    param: null,
  });
  expect(answers.openAi.text).not.toMatch(leaked);
}

describe('a store outage on the JSON-RPC and OpenAI surfaces', () => {
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const start = (options: Partial<AppOptions>) => {
    const created = createApp({ agents: [echoAgent()], a2a: true, mcp: true, ...options });
    app = created.app;
    return { app: created.app, model: created.orchestrator.name };
  };

  it('met by the rate limiter, before any handler: JSON-RPC errors and OpenAI shape (in memory)', async () => {
    const { app, model } = start({
      auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme', name: 'web' } } }),
      rateLimit: { requestsPerMinute: 100 },
      rateLimiter: downLimiter,
    });
    expectEachInItsShape(
      await askEverySurface(app, model, { authorization: `Bearer ${KEY}` }),
      /Redis|10\.0\.0\.9/,
    );
  });

  it("met by the turn: JSON-RPC errors that never name the store's host (in memory)", async () => {
    const { app, model } = start({ sessionStore: new DownSessionStore() as SessionStore });
    expectEachInItsShape(await askEverySurface(app, model, {}), /Redis|10\.0\.0\.9/);
  });

  it('of Redis itself, with and without auth', async () => {
    const port = await closedPort();
    const leaked = new RegExp(`Redis|ECONNREFUSED|127\\.0\\.0\\.1:${port}`);
    for (const withAuth of [false, true]) {
      const { app: current, model } = start({
        ...createRedisStores({ host: '127.0.0.1', port }, { commandTimeoutMs: 300 }),
        ...(withAuth
          ? {
              auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme', name: 'web' } } }),
              rateLimit: { requestsPerMinute: 100 },
            }
          : {}),
      });
      const headers: Record<string, string> = withAuth ? { authorization: `Bearer ${KEY}` } : {};
      expectEachInItsShape(await askEverySurface(current, model, headers), leaked);
      await current.close();
      app = undefined;
    }
  });
});
