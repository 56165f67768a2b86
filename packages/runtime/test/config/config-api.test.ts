import { afterAll, describe, expect, it } from 'vitest';
import { agentMeta } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { apiKeys } from '../../src/server/auth.js';
import { echoAgent } from '../support/app-fixtures.js';
import { Relay } from '../support/relay-orchestrator.js';
import { ACME_KEY, bearer, GLOBEX_KEY } from '../support/two-tenants.js';

const READER_KEY = 'sk-acme-reader-0123456789abcdef0123';
const CHAT_KEY = 'sk-acme-chat-0123456789abcdef012345';
const agents = [echoAgent('echo'), echoAgent('clock')];
const app = new App({
  name: 'config-api',
  agents,
  logLevel: 'silent',
  auth: apiKeys({
    keys: {
      [ACME_KEY]: { tenantId: 'acme', name: 'acme-web' },
      [GLOBEX_KEY]: { tenantId: 'globex', name: 'globex-bot' },
      [READER_KEY]: { tenantId: 'acme', name: 'acme-reader', scopes: ['config:read'] },
      [CHAT_KEY]: { tenantId: 'acme', name: 'acme-chat', scopes: ['chat'] },
    },
  }),
}).mount(new Relay({ name: 'relay', agents: agents.map(agentMeta) }));
afterAll(() => app.close());

const call = async (method: string, path: string, key: string, body?: unknown) => {
  const response = await app.request(path, {
    method,
    headers: { ...bearer(key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whichever fields each answer has
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

describe('the config API', () => {
  it('puts, reads, lists, versions, diffs and rolls back an item of the key’s tenant', async () => {
    const created = await call('PUT', '/v1/config/keywords/clock', ACME_KEY, {
      value: { keywords: ['time'] },
      comment: 'first',
      expectedVersion: 0,
    });
    expect(created).toEqual({
      status: 200,
      body: {
        type: 'keywords',
        name: 'clock',
        version: 1,
        value: { keywords: ['time'] },
        updatedAt: expect.any(String),
        updatedBy: 'acme-web',
        comment: 'first',
      },
    });
    const changed = await call('PUT', '/v1/config/keywords/clock', ACME_KEY, {
      value: { keywords: ['time', 'date'] },
      expectedVersion: 1,
    });
    expect(changed.body.version).toBe(2);
    expect((await call('GET', '/v1/config/keywords/clock', ACME_KEY)).body.value).toEqual({
      keywords: ['time', 'date'],
    });
    expect((await call('GET', '/v1/config/keywords/clock?version=1', ACME_KEY)).body.value).toEqual({
      keywords: ['time'],
    });
    expect(
      (await call('GET', '/v1/config/keywords/clock/diff?from=1&to=2', ACME_KEY)).body.differences,
    ).toEqual([{ path: 'keywords', before: ['time'], after: ['time', 'date'] }]);
    const rolledBack = await call('POST', '/v1/config/keywords/clock/rollback', ACME_KEY, { version: 1 });
    expect(rolledBack.body).toMatchObject({
      version: 3,
      value: { keywords: ['time'] },
      comment: 'rollback to version 1',
    });
    const versions = await call('GET', '/v1/config/keywords/clock/versions', ACME_KEY);
    expect(versions.body.versions.map((entry: { version: number }) => entry.version)).toEqual([3, 2, 1]);
    const listing = await call('GET', '/v1/config', ACME_KEY);
    expect(listing.body).toMatchObject({
      scope: 'tenant',
      version: 3,
      items: [{ type: 'keywords', name: 'clock', version: 3 }],
    });
    // Another tenant sees none of it; the app-wide scope neither.
    expect((await call('GET', '/v1/config', GLOBEX_KEY)).body).toMatchObject({ version: 0, items: [] });
    expect((await call('GET', '/v1/config/keywords/clock', GLOBEX_KEY)).status).toBe(404);
    expect((await call('GET', '/v1/config?scope=app', ACME_KEY)).body).toMatchObject({
      scope: 'app',
      items: [],
    });
    const deleted = await call(
      'DELETE',
      '/v1/config/keywords/clock?comment=done&expectedVersion=3',
      ACME_KEY,
    );
    expect(deleted.body).toMatchObject({ version: 4, deleted: true, comment: 'done' });
    expect((await call('GET', '/v1/config/keywords/clock', ACME_KEY)).status).toBe(404);
  });

  it('answers a bad item with 400 and the schema’s issues, changing nothing', async () => {
    const before = (await call('GET', '/v1/config', GLOBEX_KEY)).body.version;
    const bad = [
      ['keywords/clock', { keywords: [] }, 'keywords: Too small'],
      ['keywords/clock', { keywords: ['time'], extra: 1 }, 'Unrecognized key'],
      ['keywords/nobody', { keywords: ['time'] }, "'nobody' is not an agent of this app"],
      ['profile/careful', { maxHops: 0 }, 'maxHops'],
      [
        'step-rules/relay',
        { steps: [{ name: 'a', description: '', sequence: ['ghost'] }] },
        "'ghost' is not an agent",
      ],
      ['task-types/x', { description: 'x', patterns: ['p'] }, 'type must be one of'],
    ] as const;
    for (const [path, value, issue] of bad) {
      const response = await call('PUT', `/v1/config/${path}`, GLOBEX_KEY, { value });
      expect(response.status, path).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.issues.join('\n'), path).toContain(issue);
    }
    const tooBig = await call('PUT', '/v1/config/step-rules/relay', GLOBEX_KEY, {
      value: {
        steps: Array.from({ length: 20 }, (_, index) => ({
          name: `s${index}`,
          description: 'd'.repeat(2_000),
        })),
      },
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.issues[0]).toMatch(/more than 32768/);
    expect((await call('GET', '/v1/config', GLOBEX_KEY)).body.version).toBe(before);
  });

  it('refuses a concurrent edit with 409 and the current version (compare-and-set)', async () => {
    await call('PUT', '/v1/config/keywords/echo', GLOBEX_KEY, { value: { keywords: ['echo'] } });
    const current = (await call('GET', '/v1/config/keywords/echo', GLOBEX_KEY)).body.version as number;
    const edits = await Promise.all(
      ['repeat', 'say'].map((keyword) =>
        call('PUT', '/v1/config/keywords/echo', GLOBEX_KEY, {
          value: { keywords: [keyword] },
          expectedVersion: current,
        }),
      ),
    );
    expect(edits.map((edit) => edit.status).sort()).toEqual([200, 409]);
    const refused = edits.find((edit) => edit.status === 409)!;
    expect(refused.body.error).toMatchObject({ code: 'version_conflict', currentVersion: current + 1 });
    const created = await call('PUT', '/v1/config/keywords/echo', GLOBEX_KEY, {
      value: { keywords: ['x'] },
      expectedVersion: 0,
    });
    expect(created.status).toBe(409);
    expect((await call('GET', '/v1/config/keywords/echo/versions', GLOBEX_KEY)).body.versions).toHaveLength(
      2,
    );
  });

  it('answers a key without the scope with 403 insufficient_scope, naming it', async () => {
    const noRead = await call('GET', '/v1/config', CHAT_KEY);
    expect(noRead).toEqual({
      status: 403,
      body: {
        error: {
          code: 'insufficient_scope',
          message: "This API key lacks the 'config:read' scope this request needs",
          scope: 'config:read',
        },
      },
    });
    expect((await call('GET', '/v1/config', READER_KEY)).status).toBe(200);
    for (const [method, path, body] of [
      ['PUT', '/v1/config/keywords/echo', { value: { keywords: ['echo'] } }],
      ['DELETE', '/v1/config/keywords/echo', undefined],
      ['POST', '/v1/config/keywords/echo/rollback', { version: 1 }],
    ] as const) {
      const refused = await call(method, path, READER_KEY, body);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.error.scope).toBe('config:write');
    }
    expect((await call('GET', '/v1/config', ACME_KEY)).body.version).toBe(4);
  });

  it('is described in the OpenAPI document', async () => {
    const document = (await (await app.request('/openapi.json')).json()) as { paths: Record<string, object> };
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/v1/config'))).toEqual([
      '/v1/config',
      '/v1/config/{type}/{name}',
      '/v1/config/{type}/{name}/versions',
      '/v1/config/{type}/{name}/diff',
      '/v1/config/{type}/{name}/rollback',
    ]);
  });
});
