import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App, type ServerHandle } from '../../src/index.js';
import { RATE_LIMITED_ERROR_CODE } from '../../src/mcp/mcp-endpoint.js';
import { apiKeys } from '../../src/server/auth.js';
import type { RateLimiter } from '../../src/stores/rate-limiter.js';
import { RedisRateLimiter } from '../../src/stores/redis/redis-rate-limiter.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { ToAssistant } from './mcp-support.js';

const redis = useRedis();
const KEY = 'mcp-limit-key-0001';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server whose one agent counts the turns that reached it, limited to `requestsPerMinute`. */
async function serve(requestsPerMinute: number, rateLimiter?: RateLimiter) {
  const turns: string[] = [];
  const assistant = defineAgent({
    name: 'assistant',
    description: 'Counts its calls',
    run: (message) => {
      turns.push(message);
      return `echo: ${message}`;
    },
  });
  const app = new App({
    name: 'desk',
    agents: [assistant],
    logLevel: 'silent',
    mcp: { exposeAgents: true },
    auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme' } } }),
    rateLimit: { requestsPerMinute },
    ...(rateLimiter ? { rateLimiter } : {}),
  });
  const server: ServerHandle = await app.start(ToAssistant, { port: 0 });
  cleanups.push(() => server.close());
  return { server, turns };
}

const call = (id: number, name = 'chat') => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: { message: `call ${id}` } },
});

function post(server: ServerHandle, body: unknown): Promise<Response> {
  return fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${KEY}`,
    },
    body: JSON.stringify(body),
  });
}

interface JsonRpcAnswer {
  id: number;
  result?: { structuredContent?: { reply: string } };
  error?: {
    code: number;
    message: string;
    data?: { code: string; limit: number; retryAfterSeconds: number };
  };
}

describe.each([
  { name: 'in memory', limiter: () => undefined },
  { name: 'on Redis', limiter: () => new RedisRateLimiter(REDIS_URL, { keyPrefix: redis.prefix() }) },
])('MCP turns count against the rate limit ($name)', ({ limiter }) => {
  it('runs 5 of a batch of 100 tool calls with a limit of 5; the rest get JSON-RPC errors naming the limit', async () => {
    const rateLimiter = limiter();
    if (rateLimiter) cleanups.push(async () => rateLimiter.close?.());
    const { server, turns } = await serve(5, rateLimiter);
    const batch = Array.from({ length: 100 }, (_, index) =>
      call(index + 1, index % 2 ? 'chat' : 'assistant'),
    );
    const response = await post(server, batch);
    expect(response.status).toBe(200);
    const answers = (await response.json()) as JsonRpcAnswer[];
    expect(answers).toHaveLength(100);
    const ran = answers.filter((answer) => answer.result);
    const refused = answers.filter((answer) => answer.error);
    expect(ran).toHaveLength(5);
    expect(turns).toHaveLength(5);
    expect(refused).toHaveLength(95);
    for (const { error } of refused) {
      expect(error).toMatchObject({
        code: RATE_LIMITED_ERROR_CODE,
        message: expect.stringContaining('Rate limit of 5 turns'),
        data: { code: 'rate_limited', limit: 5 },
      });
      expect(error?.data?.retryAfterSeconds).toBeGreaterThan(0);
    }

    // Within the same minute nothing more runs: a lone call is refused with 429 and Retry-After.
    const next = await post(server, call(101));
    expect(next.status).toBe(429);
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(turns).toHaveLength(5);
  });
});
