import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { apiKeys } from '../../src/server/auth.js';
import { captureLogs } from '../../src/testing/log-capture.js';
import { recordSpans } from '../../src/testing/span-recorder.js';
import { buildApp, createApp, echoAgent, postJson, visitCounterAgent } from '../support/app-fixtures.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();

const ACME_KEY = 'sk-acme-0123456789abcdef0123456789abcdef';
const GLOBEX_KEY = 'sk-globex-0123456789abcdef0123456789abcdef';
const ADA_KEY = 'sk-ada-0123456789abcdef0123456789abcdef';
const auth = apiKeys({
  keys: {
    [ACME_KEY]: { tenantId: 'acme', name: 'acme-web' },
    [GLOBEX_KEY]: { tenantId: 'globex', name: 'globex-bot' },
    [ADA_KEY]: { tenantId: 'acme', name: 'ada-laptop', userId: 'ada' },
  },
});
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

function open(options: Parameters<typeof createApp>[0]) {
  const { app } = createApp(options);
  apps.push(app);
  return app;
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read response bodies loosely.
async function json(response: Response): Promise<any> {
  return response.json();
}

describe('API keys', () => {
  it('refuses requests without a key or with a wrong one (401), and serves the public routes without one', async () => {
    const app = open({ agents: [echoAgent()], auth });
    const none = await app.request('/v1/chat', postJson({ message: 'hi' }));
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await json(none)).error.code).toBe('unauthorized');
    const wrong = await app.request('/v1/chat', postJson({ message: 'hi' }, bearer(`${ACME_KEY}x`)));
    expect(wrong.status).toBe(401);
    expect((await app.request('/v1/agents')).status).toBe(401);
    expect((await app.request('/v1/sessions/s1')).status).toBe(401);
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      expect((await app.request(path)).status, path).toBe(200);
    }
    const ok = await app.request('/v1/chat', postJson({ message: 'hi' }, bearer(ACME_KEY)));
    expect(ok.status).toBe(200);
    expect((await json(ok)).reply).toBe('echo: hi');
  });

  it('logs the tenant and the key name of each request, never a key (right or wrong)', async () => {
    const logs = captureLogs();
    const app = open({ agents: [echoAgent()], auth, logger: logs.logger });
    await app.request('/v1/chat', postJson({ message: 'hi' }, bearer(ACME_KEY)));
    await app.request('/v1/chat', postJson({ message: 'hi' }, bearer(`${GLOBEX_KEY}-wrong`)));
    await app.request('/v1/agents', { headers: bearer(ADA_KEY) });
    const records = logs.records();
    expect(records.length).toBeGreaterThanOrEqual(3);
    expect(records.some((record) => record.tenantId === 'acme' && record.keyName === 'acme-web')).toBe(true);
    const everything = logs.lines.join('\n');
    for (const key of [ACME_KEY, GLOBEX_KEY, ADA_KEY]) expect(everything).not.toContain(key.slice(8));
  });

  it('traces the tenant and the key name, never the key', async () => {
    const recording = recordSpans();
    const app = open({ agents: [echoAgent()], auth });
    await app.request('/v1/chat', postJson({ message: 'hi' }, bearer(ACME_KEY)));
    const spans = recording.named('scripted').concat(recording.named('route 0'));
    expect(spans.length).toBeGreaterThan(0);
    const [turn] = recording.named('scripted');
    expect(turn!.attributes).toMatchObject({
      'switchboard.tenant.id': 'acme',
      'switchboard.auth.key_name': 'acme-web',
    });
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain(ACME_KEY);
    await recording.shutdown();
  });

  it('acts as the key’s own user when the key names one, whatever userId the body sends', async () => {
    const app = open({ agents: [visitCounterAgent('counter', 'user')], auth });
    const send = (key: string, userId: string, sessionId: string) =>
      app.request('/v1/chat', postJson({ message: 'counter: go', userId, sessionId }, bearer(key)));
    await send(ADA_KEY, 'mallory', 'a1');
    const second = await json(await send(ADA_KEY, 'someone-else', 'a2'));
    // Both requests counted in ada's user memory, across two sessions.
    expect(second.reply).toContain('visit 2');
  });
});

describe.each([
  ['in memory', () => ({})],
  ['on Redis, two replicas', () => ({ prefix: redis.prefix() })],
] as const)('tenants (%s)', (_name, setUp) => {
  /** Two apps sharing one store when on Redis (replicas), or one app twice in memory. */
  function replicas(
    options: Omit<Parameters<typeof createApp>[0], 'agents'> & {
      agents?: Parameters<typeof createApp>[0]['agents'];
    } = {},
  ) {
    const { prefix } = setUp() as { prefix?: string };
    const make = () =>
      open({
        agents: options.agents ?? [echoAgent()],
        auth,
        ...options,
        ...(prefix ? createRedisStores(REDIS_URL, { keyPrefix: prefix }) : {}),
      });
    const a = make();
    return [a, prefix ? make() : a] as const;
  }

  it("cannot read, continue, delete or cancel another tenant's session: it is not there (404)", async () => {
    const [a, b] = replicas();
    const first = await a.request(
      '/v1/chat',
      postJson({ message: 'echo: secret plan', sessionId: 'shared-id' }, bearer(ACME_KEY)),
    );
    expect(first.status).toBe(200);
    const { turnId } = await json(first);

    expect((await b.request('/v1/sessions/shared-id', { headers: bearer(GLOBEX_KEY) })).status).toBe(404);
    const deleted = await b.request('/v1/sessions/shared-id', {
      method: 'DELETE',
      headers: bearer(GLOBEX_KEY),
    });
    expect(deleted.status).toBe(404);
    const cancel = await b.request(`/v1/sessions/shared-id/turns/${turnId}/cancel`, {
      method: 'POST',
      headers: bearer(GLOBEX_KEY),
    });
    expect(cancel.status).toBe(404);
    const approval = await b.request(
      '/v1/sessions/shared-id/approvals/apr_x',
      postJson({ decision: 'approve' }, bearer(GLOBEX_KEY)),
    );
    expect(approval.status).toBe(404);

    // Writing to the same id makes globex a session of its own: acme's history is untouched, and globex sees none of it.
    const theirs = await b.request(
      '/v1/chat',
      postJson({ message: 'echo: hello', sessionId: 'shared-id' }, bearer(GLOBEX_KEY)),
    );
    expect(theirs.status).toBe(200);
    const acme = await json(await a.request('/v1/sessions/shared-id', { headers: bearer(ACME_KEY) }));
    const globex = await json(await b.request('/v1/sessions/shared-id', { headers: bearer(GLOBEX_KEY) }));
    expect(acme.messages.map((message: { content: string }) => message.content)).toEqual([
      'echo: secret plan',
      'echo: secret plan',
      'echo: secret plan',
    ]);
    expect(globex.messages.map((message: { content: string }) => message.content)).toEqual([
      'echo: hello',
      'echo: hello',
      'echo: hello',
    ]);
    expect(JSON.stringify(globex)).not.toContain('secret plan');

    // The owner deletes it; the other tenant's session of the same id stays.
    expect(
      (await a.request('/v1/sessions/shared-id', { method: 'DELETE', headers: bearer(ACME_KEY) })).status,
    ).toBe(204);
    expect((await b.request('/v1/sessions/shared-id', { headers: bearer(GLOBEX_KEY) })).status).toBe(200);
  });

  it('deletes the session memory of a tenant’s session with the session', async () => {
    const [a] = replicas({ agents: [visitCounterAgent('counter', 'session')] });
    const send = () =>
      a.request('/v1/chat', postJson({ message: 'counter: go', sessionId: 'mem' }, bearer(ACME_KEY)));
    await send();
    expect((await json(await send())).reply).toContain('visit 2');
    expect(
      (await a.request('/v1/sessions/mem', { method: 'DELETE', headers: bearer(ACME_KEY) })).status,
    ).toBe(204);
    // A new session of the same id starts from nothing: the old session memory is gone.
    expect((await json(await send())).reply).toContain('visit 1');
  });

  it('counts requests per key per minute: the request past the limit gets 429 with Retry-After, on either replica', async () => {
    const [a, b] = replicas({ rateLimit: { requestsPerMinute: 4 } });
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) {
      const app = index % 2 === 0 ? a : b;
      statuses.push((await app.request('/v1/agents', { headers: bearer(ACME_KEY) })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200]);
    const over = await b.request('/v1/agents', { headers: bearer(ACME_KEY) });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(over)).error.code).toBe('rate_limited');
    // Another key has its own budget.
    expect((await a.request('/v1/agents', { headers: bearer(GLOBEX_KEY) })).status).toBe(200);
  });
});

describe('removing a user’s data', () => {
  it('deletes the sessions the user started and the user’s memory, in the caller’s tenant only', async () => {
    const app = open({ agents: [visitCounterAgent('counter', 'user'), echoAgent()], auth });
    const send = (key: string, sessionId: string, message = 'counter: go') =>
      app.request('/v1/chat', postJson({ message, sessionId, userId: 'grace' }, bearer(key)));
    await send(ACME_KEY, 'g1');
    await send(ACME_KEY, 'g2');
    await send(GLOBEX_KEY, 'g1');
    // globex has its own grace: two visits for acme's, one for globex's.
    expect((await json(await send(ACME_KEY, 'g2'))).reply).toContain('visit 3');

    const removed = await app.request('/v1/users/grace', { method: 'DELETE', headers: bearer(ACME_KEY) });
    expect(removed.status).toBe(200);
    expect(await json(removed)).toEqual({ deletedSessions: 2 });
    for (const sessionId of ['g1', 'g2']) {
      expect((await app.request(`/v1/sessions/${sessionId}`, { headers: bearer(ACME_KEY) })).status).toBe(
        404,
      );
    }
    // Her user memory is gone with them; globex's grace kept hers.
    expect((await json(await send(ACME_KEY, 'g3'))).reply).toContain('visit 1');
    expect((await app.request('/v1/sessions/g1', { headers: bearer(GLOBEX_KEY) })).status).toBe(200);
    expect((await json(await send(GLOBEX_KEY, 'g1'))).reply).toContain('visit 2');
  });

  it('lets a key bound to one user remove that user only', async () => {
    const app = open({ agents: [echoAgent()], auth });
    const other = await app.request('/v1/users/grace', { method: 'DELETE', headers: bearer(ADA_KEY) });
    expect(other.status).toBe(404);
    const own = await app.request('/v1/users/ada', { method: 'DELETE', headers: bearer(ADA_KEY) });
    expect(own.status).toBe(200);
  });
});

describe('what the HTTP layer accepts', () => {
  it.each([
    ['application/x-www-form-urlencoded', 'message=hi'],
    ['text/plain', '{"message":"hi"}'],
  ])('refuses a %s body with 415 and stores nothing', async (type, body) => {
    const app = open({ agents: [echoAgent()] });
    const response = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    });
    expect(response.status).toBe(415);
    expect((await json(response)).error.code).toBe('unsupported_media_type');
  });

  it('answers a request with a non-numeric Content-Length with the JSON error shape (400)', async () => {
    const { app, orchestrator } = buildApp({ agents: [echoAgent()] });
    const handle = await app.start(orchestrator, { port: 0 });
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(`${handle.url}/v1/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': 'ten' },
        });
        request.on('response', (response) => {
          let text = '';
          response.on('data', (chunk) => {
            text += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        });
        request.on('error', reject);
        request.end('{"message":"hi"}');
      });
      expect(status).toBe(400);
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'bad_request' } });
    } finally {
      await handle.close();
    }
  });
});
