import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';
import { ACME_KEY, bearer, GLOBEX_KEY, twoTenants } from '../support/two-tenants.js';

const auth = twoTenants;

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

async function chat(app: App, key: string, body: Record<string, unknown>) {
  const response = await app.request('/v1/chat', postJson(body, bearer(key)));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('fair shares of the in-memory stores', () => {
  it("a tenant starting sessions past the cap never evicts another tenant's sessions", async () => {
    const app = open({
      agents: [echoAgent()],
      auth,
      sessionStore: new InMemorySessionStore({ maxSessions: 20 }),
    });
    const acme: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const { body } = await chat(app, ACME_KEY, { message: `acme ${index}` });
      acme.push(body.sessionId as string);
    }
    for (let index = 0; index < 60; index += 1) {
      expect((await chat(app, GLOBEX_KEY, { message: `flood ${index}` })).status).toBe(200);
    }
    for (const sessionId of acme) {
      const response = await app.request(`/v1/sessions/${sessionId}`, { headers: bearer(ACME_KEY) });
      expect(response.status, sessionId).toBe(200);
    }
    // Acme's sessions still continue.
    expect((await chat(app, ACME_KEY, { message: 'again', sessionId: acme[0] })).body.reply).toBe(
      'echo: again',
    );
  });

  it('stops a flood of turns waiting for approval at maxPendingApprovalsPerTenant with 429, other tenants unaffected', async () => {
    const refunds = defineAgent({
      name: 'echo',
      description: 'Refunds an order',
      requiresApproval: true,
      run: (message) => `refunded: ${message}`,
    });
    const app = open({
      agents: [refunds],
      auth,
      sessionStore: new InMemorySessionStore({ maxSessions: 100, maxPendingApprovalsPerTenant: 5 }),
    });
    const statuses: number[] = [];
    for (let index = 0; index < 8; index += 1) {
      const { status, body } = await chat(app, GLOBEX_KEY, { message: `refund ${index}` });
      statuses.push(status);
      if (status === 200) expect(body.status).toBe('awaiting_approval');
      else
        expect(body.error).toMatchObject({
          code: 'too_many_pending_approvals',
          message: expect.stringContaining('5 sessions are already waiting for approval'),
        });
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect((await chat(app, ACME_KEY, { message: 'refund mine' })).body.status).toBe('awaiting_approval');
  });
});
