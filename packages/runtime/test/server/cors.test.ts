import { ConfigurationError } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { App, type AppOptions } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';

const ORIGIN = 'https://desk.example.com';
const KEY = 'sk-cors-0123456789abcdef0123456789';

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

function open(options: Partial<AppOptions> = {}) {
  const { app } = createApp({ agents: [echoAgent()], ...options });
  apps.push(app);
  return app;
}

/** What a browser sends before `fetch('/v1/chat', { method: 'POST', headers: { 'content-type', authorization } })`. */
const preflight = (origin = ORIGIN): RequestInit => ({
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type, authorization',
  },
});

const listed = (value: string | null) => (value ?? '').split(',').map((item) => item.trim().toLowerCase());

describe('CORS', () => {
  it('is off by default: no Access-Control headers, and OPTIONS is not answered as a preflight', async () => {
    const app = open();
    const answer = await app.request('/v1/chat', preflight());
    expect(answer.status).toBe(405);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const chat = await app.request('/v1/chat', postJson({ message: 'hi' }, { origin: ORIGIN }));
    expect(chat.status).toBe(200);
    expect(chat.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers the preflight of a POST /v1/chat with content-type and authorization', async () => {
    const app = open({ cors: { origins: [ORIGIN] } });
    const answer = await app.request('/v1/chat', preflight());
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(listed(answer.headers.get('access-control-allow-methods'))).toContain('post');
    expect(listed(answer.headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(['content-type', 'authorization']),
    );
    expect(answer.headers.get('access-control-max-age')).toBe('600');
    expect(listed(answer.headers.get('vary'))).toContain('origin');
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('lets the browser read the reply and the x-session-id and x-request-id headers', async () => {
    const app = open({ cors: { origins: [ORIGIN] } });
    const chat = await app.request(
      '/v1/chat',
      postJson({ message: 'hi' }, { origin: ORIGIN, 'x-request-id': 'r-1' }),
    );
    expect(chat.status).toBe(200);
    expect(chat.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(listed(chat.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['x-session-id', 'x-request-id']),
    );
    expect(chat.headers.get('x-request-id')).toBe('r-1');
    expect(listed(chat.headers.get('vary'))).toContain('origin');
  });

  it('does not allow an origin that is not listed', async () => {
    const app = open({ cors: { origins: [ORIGIN] } });
    const answer = await app.request('/v1/chat', preflight('https://evil.example.net'));
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const chat = await app.request(
      '/v1/chat',
      postJson({ message: 'hi' }, { origin: 'https://evil.example.net' }),
    );
    expect(chat.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("allows any origin with '*', and extra headers when asked", async () => {
    const app = open({ cors: { origins: '*', allowHeaders: ['x-tenant-hint'], maxAgeSeconds: 60 } });
    const answer = await app.request('/v1/chat', preflight('https://anywhere.example.org'));
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(listed(answer.headers.get('access-control-allow-headers'))).toContain('x-tenant-hint');
    expect(answer.headers.get('access-control-max-age')).toBe('60');
  });

  it('answers preflights before auth (they carry no key) and lets the browser read a 401', async () => {
    const app = open({
      cors: { origins: [ORIGIN] },
      auth: apiKeys({ keys: { [KEY]: { tenantId: 'acme', name: 'web' } } }),
    });
    const answer = await app.request('/v1/chat', preflight());
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const refused = await app.request('/v1/chat', postJson({ message: 'hi' }, { origin: ORIGIN }));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const served = await app.request(
      '/v1/chat',
      postJson({ message: 'hi' }, { origin: ORIGIN, authorization: `Bearer ${KEY}` }),
    );
    expect(served.status).toBe(200);
    expect(served.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('refuses credentials with any origin when the app is built', () => {
    let error: unknown;
    try {
      new App({ name: 'cors', agents: [echoAgent()], cors: { origins: '*', credentials: true } });
    } catch (thrown) {
      error = thrown;
    }
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('credentials');
  });
});
