import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp, echoAgent, postJson, sleep } from '../support/app-fixtures.js';
import { storeSetups, useRedis } from '../support/redis.js';
import { ACME_KEY, bearer, GLOBEX_KEY, twoTenants } from '../support/two-tenants.js';

const redis = useRedis();

const auth = twoTenants;

interface SessionList {
  sessions: Array<{ sessionId: string; updatedAt: string }>;
  nextCursor?: string;
}

async function chat(app: App, key: string, sessionId: string) {
  const response = await app.request('/v1/chat', postJson({ sessionId, message: 'hi' }, bearer(key)));
  expect(response.status).toBe(200);
  await sleep(2);
}

async function list(app: App, key: string, cursor?: string) {
  const query = cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`;
  const response = await app.request(`/v1/sessions?limit=1${query}`, { headers: bearer(key) });
  return { status: response.status, body: (await response.json()) as SessionList };
}

/** What a client could read in a cursor: its JSON when it is base64url JSON, else nothing. */
function readable(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

describe.each(storeSetups(redis))('session-list cursors between tenants with $name', (setup) => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  function serve() {
    const { app } = createApp({ agents: [echoAgent()], auth, ...setup.stores() });
    apps.push(app);
    return app;
  }

  it("carry nothing of another tenant's activity, and stay the same while it writes", async () => {
    const app = serve();
    await chat(app, ACME_KEY, 'a-1');
    for (let turn = 0; turn < 5; turn++) await chat(app, GLOBEX_KEY, `g-${turn}`);
    await chat(app, ACME_KEY, 'a-2');
    for (let turn = 5; turn < 10; turn++) await chat(app, GLOBEX_KEY, `g-${turn}`);
    await chat(app, ACME_KEY, 'a-3');

    const first = await list(app, ACME_KEY);
    const second = await list(app, ACME_KEY, first.body.nextCursor);
    const third = await list(app, ACME_KEY, second.body.nextCursor);
    expect([first, second, third].map((page) => page.body.sessions.map((s) => s.sessionId))).toEqual([
      ['a-3'],
      ['a-2'],
      ['a-1'],
    ]);
    expect(third.body.nextCursor).toBeUndefined();

    // What a cursor says, if anything, is where acme's own last listed session is: never a number that
    // counts globex's writes.
    for (const page of [first, second]) {
      const [listed] = page.body.sessions;
      const said = readable(page.body.nextCursor!);
      if (said !== undefined)
        expect(said).toEqual([
          Date.parse(listed!.updatedAt),
          expect.stringMatching(new RegExp(`${listed!.sessionId}$`)),
        ]);
    }

    // Globex writes on: acme's cursor for the same page says the same, and still leads to the same page.
    for (let turn = 10; turn < 13; turn++) await chat(app, GLOBEX_KEY, `g-${turn}`);
    const again = await list(app, ACME_KEY);
    expect(readable(again.body.nextCursor!)).toEqual(readable(first.body.nextCursor!));
    const next = await list(app, ACME_KEY, first.body.nextCursor);
    expect(next.body.sessions.map((session) => session.sessionId)).toEqual(['a-2']);
  });
});

describe('session-list cursors in memory', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('are sealed for their tenant: another tenant, or a cursor written or changed by hand, gets a 400', async () => {
    app = createApp({ agents: [echoAgent()], auth }).app;
    for (const sessionId of ['a-1', 'a-2']) await chat(app, ACME_KEY, sessionId);
    await chat(app, GLOBEX_KEY, 'g-1');
    const cursor = (await list(app, ACME_KEY)).body.nextCursor!;

    expect((await list(app, GLOBEX_KEY, cursor)).status).toBe(400);
    const changed = `${cursor.slice(0, 20)}${cursor[20] === 'A' ? 'B' : 'A'}${cursor.slice(21)}`;
    for (const forged of [Buffer.from('3').toString('base64url'), changed])
      expect((await list(app, ACME_KEY, forged)).status).toBe(400);
    expect((await list(app, ACME_KEY, cursor)).body.sessions.map((session) => session.sessionId)).toEqual([
      'a-1',
    ]);
  });
});
