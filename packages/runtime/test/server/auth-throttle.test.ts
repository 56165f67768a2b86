import { afterEach, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../src/app.js';
import type { RateLimitOptions } from '../../src/server/access.js';
import { apiKeys } from '../../src/server/auth.js';
import { RedisRateLimiter } from '../../src/stores/redis/redis-rate-limiter.js';
import { buildApp, echoAgent } from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();
const KEY = 'sk-acme-0123456789abcdef0123456789abcdef';
const auth = apiKeys({ keys: { [KEY]: { tenantId: 'acme', name: 'acme-web' } } });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server on a real port (the client address comes from the socket), behind "proxies" on loopback. */
async function serve(rateLimit: RateLimitOptions, onRedis = false): Promise<ServerHandle> {
  const rateLimiter = onRedis ? new RedisRateLimiter(REDIS_URL, { keyPrefix: redis.prefix() }) : undefined;
  const { app, orchestrator } = buildApp({
    agents: [echoAgent()],
    auth,
    rateLimit,
    ...(rateLimiter ? { rateLimiter } : {}),
  });
  const server = await app.start(orchestrator, { port: 0 });
  cleanups.push(() => server.close());
  return server;
}

/** A chat from `address` (as the trusted proxy says) with `key`: its status. */
async function chatFrom(server: ServerHandle, address: string, key: string): Promise<Response> {
  const response = await fetch(`${server.url}/v1/chat`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      'x-forwarded-for': `${address}, 127.0.0.1`,
    },
    body: JSON.stringify({ message: 'hi' }),
  });
  await response.arrayBuffer();
  return response;
}

const LOOPBACK = ['127.0.0.1', '::1'];

describe.each([
  { name: 'in memory', onRedis: false },
  { name: 'on Redis', onRedis: true },
])('failed authentication is limited per client address ($name)', ({ onRedis }) => {
  it('answers 429 to wrong keys from one address past failedAuthPerMinute, while a right key from another address still works', async () => {
    const server = await serve({ failedAuthPerMinute: 5, trustedProxies: LOOPBACK }, onRedis);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt += 1)
      statuses.push((await chatFrom(server, '203.0.113.7', `${KEY}-wrong-${attempt}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    // Throttled for the minute, whatever it sends: the right key tells it nothing.
    const throttled = await chatFrom(server, '203.0.113.7', KEY);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await chatFrom(server, '198.51.100.9', KEY)).status).toBe(200);
    expect((await chatFrom(server, '198.51.100.9', `${KEY}-wrong`)).status).toBe(401);
  });
});

describe('the client address', () => {
  it('ignores X-Forwarded-For from peers that are not trusted proxies', async () => {
    const server = await serve({ failedAuthPerMinute: 3 });
    for (let attempt = 0; attempt < 3; attempt += 1)
      expect((await chatFrom(server, `203.0.113.${attempt}`, `${KEY}-wrong`)).status).toBe(401);
    // Every request came from 127.0.0.1, whatever the header claimed.
    expect((await chatFrom(server, '198.51.100.9', `${KEY}-wrong`)).status).toBe(429);
  });

  it('limits the public routes per address too', async () => {
    const server = await serve({ publicRequestsPerMinute: 4, trustedProxies: ['127.0.0.0/8', '::1'] });
    const get = (address: string) =>
      fetch(`${server.url}/healthz`, { headers: { 'x-forwarded-for': address } }).then(
        (response) => response.status,
      );
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) statuses.push(await get('203.0.113.7'));
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(await get('198.51.100.9')).toBe(200);
  });

  it('refuses a trusted proxy that is neither an address nor a range when the app is made', () => {
    for (const trustedProxies of [['10.0.0.0/33'], ['proxy.internal'], ['10.0.0.1/8/2']]) {
      expect(() => buildApp({ agents: [echoAgent()], auth, rateLimit: { trustedProxies } })).toThrow(
        /trustedProxies/,
      );
    }
  });
});
