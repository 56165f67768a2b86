import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { apiKeys } from '../../src/server/auth.js';
import { createApp, echoAgent, postJson, type TestAppOptions } from '../support/app-fixtures.js';
import { REDIS_URL, storeSetups, useRedis } from '../support/redis.js';

const redis = useRedis();
const setups = storeSetups(redis);

const ALICE = 'sk-alice-0123456789abcdef0123456789';
const BOB = 'sk-bob-0123456789abcdef0123456789ab';
const ADMIN = 'sk-admin-0123456789abcdef012345678';
const CAROL = 'sk-carol-0123456789abcdef012345678';
const ALICE_DECIDES = 'sk-alice-decides-0123456789abcdef';
const DAVE = 'sk-dave-0123456789abcdef0123456789';
const keys = {
  [ALICE]: { tenantId: 'acme', name: 'alice-web', userId: 'alice' },
  [BOB]: { tenantId: 'acme', name: 'bob-web', userId: 'bob' },
  [ADMIN]: { tenantId: 'acme', name: 'acme-admin' },
  [CAROL]: { tenantId: 'acme', name: 'carol-desk', userId: 'carol', scopes: ['approvals:decide' as const] },
  [DAVE]: { tenantId: 'acme', name: 'dave-desk', userId: 'dave', scopes: ['approvals:decide' as const] },
  [ALICE_DECIDES]: {
    tenantId: 'acme',
    name: 'alice-decides',
    userId: 'alice',
    scopes: ['chat' as const, 'approvals:decide' as const],
  },
};
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Refunds whatever it is asked to, after a person approved it; records each refund it made. */
function refundAgent(runs: string[]) {
  return defineAgent({
    name: 'refunds',
    description: 'Refunds an order',
    requiresApproval: true,
    run: (message) => {
      runs.push(message);
      return `refunded ${message}`;
    },
  });
}

let apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read response bodies loosely.
type Body = any;

describe.each(setups)('keys bound to a user, with $name', (setup) => {
  function open(options: Partial<TestAppOptions> = {}) {
    const runs: string[] = [];
    const { app } = createApp({
      agents: [echoAgent(), refundAgent(runs)],
      auth: apiKeys({ keys }),
      a2a: true,
      mcp: true,
      ...setup.stores(),
      ...options,
    });
    apps.push(app);
    const call = async (key: string, path: string, init: RequestInit = {}) => {
      const response = await app.request(path, { ...init, headers: { ...init.headers, ...bearer(key) } });
      const text = await response.text();
      return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as Body };
    };
    const chat = (key: string, body: Record<string, unknown>) => call(key, '/v1/chat', postJson(body));
    const messageCount = async (sessionId: string) =>
      (await call(ADMIN, `/v1/sessions/${sessionId}`)).body.messages.length as number;
    return { app, runs, call, chat, messageCount };
  }

  it("sees and acts on its own user's sessions only, on every route and surface", async () => {
    const { call, chat, messageCount } = open();
    const bobs = await chat(BOB, { message: 'refunds: order 7' });
    expect(bobs.body.status).toBe('awaiting_approval');
    const bobSession: string = bobs.body.sessionId;
    const approvalId: string = bobs.body.approvals[0].id;
    const alices = await chat(ALICE, { message: 'hello' });
    expect(alices.status).toBe(200);
    const before = await messageCount(bobSession);

    const listed = await call(ALICE, '/v1/sessions');
    expect(listed.body.sessions.map((session: Body) => session.sessionId)).toEqual([alices.body.sessionId]);
    expect((await call(ADMIN, '/v1/sessions')).body.sessions).toHaveLength(2);
    expect((await call(ALICE, `/v1/sessions/${bobSession}`)).status).toBe(404);
    expect((await call(ALICE, `/v1/sessions/${bobSession}`, { method: 'DELETE' })).status).toBe(404);
    expect((await chat(ALICE, { sessionId: bobSession, message: 'mine now' })).status).toBe(404);
    const cancel = await call(ALICE, `/v1/sessions/${bobSession}/turns/${bobs.body.turnId}/cancel`, {
      method: 'POST',
    });
    expect(cancel.status).toBe(404);
    expect((await call(ALICE, `/v1/sessions/${bobSession}/turns/${bobs.body.turnId}/events`)).status).toBe(
      404,
    );
    const approve = await call(
      ALICE,
      `/v1/sessions/${bobSession}/approvals/${approvalId}`,
      postJson({ decision: 'approve' }),
    );
    expect(approve.status).toBe(404);
    const completion = await call(
      ALICE,
      '/v1/chat/completions',
      postJson(
        { model: 'test-app', messages: [{ role: 'user', content: 'mine now' }] },
        { 'x-session-id': bobSession },
      ),
    );
    expect(completion.status).toBe(404);
    const mcp = await call(
      ALICE,
      '/mcp',
      postJson(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'chat', arguments: { message: 'mine now', sessionId: bobSession } },
        },
        { accept: 'application/json, text/event-stream' },
      ),
    );
    expect(JSON.stringify(mcp.body)).toMatch(/isError|not found/i);
    const a2a = await call(
      ALICE,
      '/a2a',
      postJson(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: {
              messageId: 'm1',
              role: 'ROLE_USER',
              parts: [{ text: 'mine now' }],
              contextId: bobSession,
            },
          },
        },
        { 'a2a-version': '1.0' },
      ),
    );
    expect(a2a.body.error).toBeDefined();
    expect(a2a.body.result).toBeUndefined();

    // Nothing of alice's reached bob's session, which is still there and still waits.
    expect(await messageCount(bobSession)).toBe(before);
    const bobReads = await call(BOB, `/v1/sessions/${bobSession}`);
    expect(bobReads.body.pendingApprovals.map((approval: Body) => approval.id)).toEqual([approvalId]);
    expect(bobReads.body.turns[0].userId).toBe('bob');
  });

  it('refuses self-approval with 403 (the call never runs); an approver key decides, under its own name', async () => {
    const { runs, call, chat } = open();
    const asked = await chat(ALICE_DECIDES, { message: 'refunds: order 9', userId: 'mallory' });
    const { sessionId } = asked.body;
    const approvalId: string = asked.body.approvals[0].id;
    const decide = (key: string, body: Record<string, unknown>) =>
      call(key, `/v1/sessions/${sessionId}/approvals/${approvalId}`, postJson(body));

    const self = await decide(ALICE_DECIDES, { decision: 'approve' });
    expect(self.status).toBe(403);
    expect(self.body.error).toMatchObject({ code: 'approval_forbidden', reason: 'self_approval' });
    const plainAlice = await decide(ALICE, { decision: 'approve' });
    expect(plainAlice.status).toBe(403);
    expect(plainAlice.body.error).toMatchObject({ code: 'insufficient_scope', scope: 'approvals:decide' });
    expect(runs).toEqual([]);

    const approved = await decide(CAROL, { decision: 'approve', userId: 'alice' });
    expect(approved.status).toBe(200);
    expect(runs).toEqual(['order 9']);
    const turn = (await call(ALICE, `/v1/sessions/${sessionId}`)).body.turns[0];
    expect(turn.userId).toBe('alice');
    expect(turn.approvals[0]).toMatchObject({
      status: 'approved',
      decidedBy: 'carol',
      requestedFor: 'alice',
    });
  });

  it("a tenant key's decision is recorded under the key's name, never a userId the body claims", async () => {
    const { call, chat } = open();
    const asked = await chat(ADMIN, { message: 'refunds: order 3', userId: 'dave' });
    const approvalId: string = asked.body.approvals[0].id;
    const path = `/v1/sessions/${asked.body.sessionId}/approvals/${approvalId}`;
    expect((await call(ADMIN, path, postJson({ decision: 'approve', userId: 'ceo' }))).status).toBe(200);
    const turn = (await call(ADMIN, `/v1/sessions/${asked.body.sessionId}`)).body.turns[0];
    expect(turn.approvals[0].decidedBy).toBe('acme-admin');
  });

  it('follows the app’s approvers: a list of users', async () => {
    const { runs, call, chat } = open({ approvers: { agents: { refunds: { users: ['dave'] } } } });
    const asked = await chat(ALICE, { message: 'refunds: order 5' });
    const path = `/v1/sessions/${asked.body.sessionId}/approvals/${asked.body.approvals[0].id}`;
    const carol = await call(CAROL, path, postJson({ decision: 'approve' }));
    expect(carol.status).toBe(403);
    expect(carol.body.error).toMatchObject({ code: 'approval_forbidden', reason: 'not_an_approver' });
    // A key without approvals:decide does not even see another user's approval.
    expect((await call(BOB, path, postJson({ decision: 'approve' }))).status).toBe(404);
    expect(runs).toEqual([]);
    expect((await call(DAVE, path, postJson({ decision: 'approve' }))).status).toBe(200);
    expect(runs).toEqual(['order 5']);
  });
});

describe('API keys: hashes, expiry, rotation, scopes', () => {
  const open = (options: Parameters<typeof apiKeys>[0]) => {
    const { app } = createApp({ agents: [echoAgent()], auth: apiKeys(options) });
    apps.push(app);
    return (key: string, path = '/v1/chat') =>
      Promise.resolve(app.request(path, postJson({ message: 'hi' }, bearer(key))));
  };

  it('accepts a key given as its sha256 digest, and two keys of one tenant at once', async () => {
    const digest = createHash('sha256').update(ALICE).digest('hex');
    const send = open({
      keys: {
        [`sha256:${digest}`]: { tenantId: 'acme', name: 'old' },
        [BOB]: { tenantId: 'acme', name: 'new' },
      },
    });
    expect((await send(ALICE)).status).toBe(200);
    expect((await send(BOB)).status).toBe(200);
    expect((await send(`sha256:${digest}`)).status).toBe(401);
  });

  it('refuses a key past its expiresAt with 401', async () => {
    const send = open({
      keys: {
        [ALICE]: { tenantId: 'acme', expiresAt: new Date(Date.now() - 1000).toISOString() },
        [BOB]: { tenantId: 'acme', expiresAt: new Date(Date.now() + 3_600_000) },
      },
    });
    expect((await send(ALICE)).status).toBe(401);
    expect((await send(BOB)).status).toBe(200);
  });

  it('refuses a key without the scope a route needs with 403 naming the scope', async () => {
    const send = open({ keys: { [ALICE]: { tenantId: 'acme', scopes: ['sessions:read'] } } });
    const refused = await send(ALICE);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'insufficient_scope', scope: 'chat' } });
  });
});

describe('keys bound to a user, across two replicas on one Redis', () => {
  it('confines a user to its sessions and refuses self-approval, whichever replica answers', async () => {
    const prefix = redis.prefix();
    const runs: string[] = [];
    const [first, second] = [0, 1].map(() => {
      const { app } = createApp({
        agents: [echoAgent(), refundAgent(runs)],
        auth: apiKeys({ keys }),
        ...createRedisStores(REDIS_URL, { keyPrefix: prefix }),
      });
      apps.push(app);
      return app;
    }) as [App, App];
    const send = async (app: App, key: string, path: string, body: Record<string, unknown>) => {
      const response = await app.request(path, postJson(body, bearer(key)));
      return { status: response.status, body: (await response.json()) as Body };
    };
    const bobs = await send(first, BOB, '/v1/chat', { message: 'refunds: order 1' });
    expect(
      (await second.request(`/v1/sessions/${bobs.body.sessionId}`, { headers: bearer(ALICE) })).status,
    ).toBe(404);
    const intrusion = await send(second, ALICE, '/v1/chat', {
      sessionId: bobs.body.sessionId,
      message: 'hi',
    });
    expect(intrusion.status).toBe(404);

    const alices = await send(first, ALICE_DECIDES, '/v1/chat', { message: 'refunds: order 2' });
    const path = `/v1/sessions/${alices.body.sessionId}/approvals/${alices.body.approvals[0].id}`;
    const self = await send(second, ALICE_DECIDES, path, { decision: 'approve' });
    expect(self.status).toBe(403);
    expect(runs).toEqual([]);
    expect((await send(second, CAROL, path, { decision: 'approve' })).status).toBe(200);
    expect(runs).toEqual(['order 2']);
  });
});
