import {
  currentUserMessage,
  latestToolResults,
  type MessageItem,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { SessionStore } from '../../src/stores/session-store.js';
import type { ApprovalRecord, TurnRecord, TurnStatus } from '../../src/turns/turn-record.js';
import {
  createApp,
  type DecisionHandler,
  echoAgent,
  postJson,
  sleep,
  type TestAppOptions,
} from '../support/app-fixtures.js';
import { storeSetups, useRedis } from '../support/redis.js';
import { ACME_KEY, bearer, GLOBEX_KEY, twoTenants } from '../support/two-tenants.js';

const redis = useRedis();

const auth = twoTenants;

/** The answer of `GET /v1/sessions`. */
interface SessionList {
  sessions: Array<{ sessionId: string; updatedAt: string; messageCount: number }>;
  nextCursor?: string;
}

/** The answer of `GET /v1/sessions/:id`. */
interface SessionPage {
  sessionId: string;
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: ApprovalRecord[];
  activeTurn?: { turnId: string; status: TurnStatus };
  before?: string;
}

/**
 * Echoes the user's text; `refund <n>` instead calls a refund agent that
 * waits for a person's approval, so the turn pauses.
 */
const deskHandler: DecisionHandler = (conversation) => {
  const results = latestToolResults(conversation);
  if (results.length > 0) return routeToUser(results.map((result) => result.content).join('\n'));
  const text = currentUserMessage(conversation).content;
  if (text.startsWith('refund ')) return toolCall('refunds', text);
  return toolCall('echo', text);
};

const refunds = defineAgent({
  name: 'refunds',
  description: 'Refunds an order, once a person approved',
  requiresApproval: () => ({ required: true, risk: 'high', reason: 'refunds need a person' }),
  run: (message) => `done: ${message}`,
});

/** For each message of a whole history, the id of the turn it belongs to (the turn of the last user message so far). */
function ownersOf(messages: readonly MessageItem[], turns: readonly TurnRecord[]): string[] {
  const turnOfUserMessage = new Map(turns.map((turn) => [turn.userMessageId, turn.turnId]));
  let owner = '';
  return messages.map((message) => {
    if (message.role === 'user') owner = turnOfUserMessage.get(message.id) ?? 'unknown';
    return owner;
  });
}

describe.each(storeSetups(redis))('session list and history pages over HTTP with $name', (setup) => {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  function serve(options: Partial<TestAppOptions> = {}) {
    const { app } = createApp({
      agents: [echoAgent(), refunds],
      handler: deskHandler,
      ...setup.stores(),
      ...options,
    });
    apps.push(app);
    return app;
  }

  async function chat(app: App, sessionId: string, message: string, headers: Record<string, string> = {}) {
    const response = await app.request('/v1/chat', postJson({ sessionId, message }, headers));
    expect(response.status).toBe(200);
    return (await response.json()) as { turnId: string; status: TurnStatus };
  }

  async function get<T>(app: App, path: string, headers: Record<string, string> = {}) {
    const response = await app.request(path, { headers });
    return { status: response.status, body: (await response.json()) as T & { error?: { code: string } } };
  }

  /** Every page of `GET /v1/sessions`, following `nextCursor`. */
  async function listAll(app: App, limit: number, headers: Record<string, string> = {}) {
    const pages: SessionList[] = [];
    let path = `/v1/sessions?limit=${limit}`;
    for (;;) {
      const { status, body } = await get<SessionList>(app, path, headers);
      expect(status).toBe(200);
      expect(body.sessions.length).toBeLessThanOrEqual(limit);
      pages.push(body);
      if (!body.nextCursor) return pages;
      expect(pages.length).toBeLessThan(50);
      path = `/v1/sessions?limit=${limit}&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
  }

  it('lists sessions most recently active first, page by page with the cursor', async () => {
    const app = serve();
    for (const sessionId of ['s1', 's2', 's3', 's4', 's5']) {
      await chat(app, sessionId, `hello from ${sessionId}`);
      await sleep(3);
    }
    await chat(app, 's2', 'back again');

    const pages = await listAll(app, 2);
    expect(pages.map((page) => page.sessions.map((session) => session.sessionId))).toEqual([
      ['s2', 's5'],
      ['s4', 's3'],
      ['s1'],
    ]);
    const [first] = pages[0]!.sessions;
    expect(first).toMatchObject({ sessionId: 's2', messageCount: 6 });
    expect(Date.parse(first!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(pages[0]!.sessions[1]!.updatedAt));
    expect(pages[1]!.sessions.map((session) => session.messageCount)).toEqual([3, 3]);

    // Without a limit: one page of them all (the default page size is 50).
    const { body } = await get<SessionList>(app, '/v1/sessions');
    expect(body.sessions.map((session) => session.sessionId)).toEqual(['s2', 's5', 's4', 's3', 's1']);
    expect(body.nextCursor).toBeUndefined();
  });

  it('lists every session exactly once when paging one at a time, even those active in the same millisecond', async () => {
    const app = serve();
    const ids = Array.from({ length: 7 }, (_, index) => `burst-${index}`);
    await Promise.all(ids.map((sessionId) => chat(app, sessionId, 'hi')));
    const listed = (await listAll(app, 1)).flatMap((page) =>
      page.sessions.map((session) => session.sessionId),
    );
    expect(listed).toHaveLength(ids.length);
    expect([...listed].sort()).toEqual([...ids].sort());
  });

  it('drops a deleted session from the list at once', async () => {
    const app = serve();
    for (const sessionId of ['keep-1', 'gone', 'keep-2']) await chat(app, sessionId, 'hi');
    expect((await app.request('/v1/sessions/gone', { method: 'DELETE' })).status).toBe(204);
    const listed = (await listAll(app, 1)).flatMap((page) =>
      page.sessions.map((session) => session.sessionId),
    );
    expect([...listed].sort()).toEqual(['keep-1', 'keep-2']);
  });

  it('shows each tenant only its own sessions when auth is on, whatever cursor it sends', async () => {
    const app = serve({ auth });
    await chat(app, 'a-1', 'hi', bearer(ACME_KEY));
    await chat(app, 'shared', 'hi from acme', bearer(ACME_KEY));
    await chat(app, 'shared', 'more from acme', bearer(ACME_KEY));
    await chat(app, 'g-1', 'hi', bearer(GLOBEX_KEY));
    await chat(app, 'shared', 'hi from globex', bearer(GLOBEX_KEY));

    const acme = (await listAll(app, 1, bearer(ACME_KEY))).flatMap((page) => page.sessions);
    const globex = (await listAll(app, 1, bearer(GLOBEX_KEY))).flatMap((page) => page.sessions);
    expect(acme.map(({ sessionId, messageCount }) => [sessionId, messageCount]).sort()).toEqual([
      ['a-1', 3],
      ['shared', 6],
    ]);
    expect(globex.map(({ sessionId, messageCount }) => [sessionId, messageCount]).sort()).toEqual([
      ['g-1', 3],
      ['shared', 3],
    ]);

    // A cursor handed to acme, replayed by globex, never shows acme's sessions: in memory the cursor is
    // sealed for acme (400); on Redis it is a position in globex's own list.
    const acmeFirst = await get<SessionList>(app, '/v1/sessions?limit=1', bearer(ACME_KEY));
    const replayed = await get<SessionList>(
      app,
      `/v1/sessions?cursor=${acmeFirst.body.nextCursor}`,
      bearer(GLOBEX_KEY),
    );
    expect(replayed.status).toBe(setup.name === 'in-memory stores' ? 400 : 200);
    for (const session of replayed.body.sessions ?? [])
      expect(['g-1', 'shared']).toContain(session.sessionId);

    expect((await app.request('/v1/sessions')).status).toBe(401);
    // A tenant's deleted session leaves only its list.
    expect(
      (await app.request('/v1/sessions/shared', { method: 'DELETE', headers: bearer(GLOBEX_KEY) })).status,
    ).toBe(204);
    const after = await get<SessionList>(app, '/v1/sessions', bearer(ACME_KEY));
    expect(after.body.sessions.map((session) => session.sessionId).sort()).toEqual(['a-1', 'shared']);
    const globexAfter = await get<SessionList>(app, '/v1/sessions', bearer(GLOBEX_KEY));
    expect(globexAfter.body.sessions.map((session) => session.sessionId)).toEqual(['g-1']);
  });

  it('refuses a bad limit or cursor with 400', async () => {
    const app = serve();
    await chat(app, 'bad-input', 'hi');
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=ten',
      'limit=-1',
      'cursor=%21%21',
      'cursor=bm90LWpzb24',
    ]) {
      const { status, body } = await get(app, `/v1/sessions?${query}`);
      expect(status, query).toBe(400);
      expect(body.error?.code, query).toBe('validation_error');
    }
    for (const query of ['limit=0', 'limit=500', 'before=%24%24', 'before=WzAsMF0', 'before=bm90LWpzb24']) {
      const { status, body } = await get(app, `/v1/sessions/bad-input?${query}`);
      expect(status, query).toBe(400);
      expect(body.error?.code, query).toBe('validation_error');
    }
    expect((await get(app, '/v1/sessions/nobody?limit=5')).status).toBe(404);
  });

  it('pages a long history newest first; each page carries its own turns and the session state', async () => {
    const app = serve();
    for (let turn = 1; turn <= 18; turn++) await chat(app, 'long', `message ${turn}`);
    const paused = await chat(app, 'long', 'refund order 7');
    expect(paused.status).toBe('awaiting_approval');

    const whole = await get<SessionPage>(app, '/v1/sessions/long?limit=200');
    expect(whole.status).toBe(200);
    expect(whole.body.before).toBeUndefined();
    const all = whole.body.messages;
    expect(all).toHaveLength(18 * 3 + 1);
    expect(whole.body.turns).toHaveLength(19);
    const owners = ownersOf(all, whole.body.turns);

    // The default page: the newest 50 messages, and a cursor to older ones.
    const first = await get<SessionPage>(app, '/v1/sessions/long');
    expect(first.body.messages).toEqual(all.slice(-50));
    expect(first.body.before).toEqual(expect.any(String));

    // Walk back 7 at a time: newest page first, every message once, in order.
    const pages: SessionPage[] = [];
    let path = '/v1/sessions/long?limit=7';
    for (;;) {
      const { status, body } = await get<SessionPage>(app, path);
      expect(status).toBe(200);
      pages.push(body);
      if (!body.before) break;
      expect(pages.length).toBeLessThan(20);
      path = `/v1/sessions/long?limit=7&before=${body.before}`;
    }
    expect(pages).toHaveLength(Math.ceil(all.length / 7));
    expect(pages.map((page) => page.messages.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 6]);
    expect(pages[0]!.messages.at(-1)!.content).toBe('refund order 7');
    expect([...pages].reverse().flatMap((page) => page.messages)).toEqual(all);

    let offset = all.length;
    for (const page of pages) {
      offset -= page.messages.length;
      const expectedTurns = [...new Set(owners.slice(offset, offset + page.messages.length))];
      expect(page.turns.map((turn) => turn.turnId)).toEqual(expectedTurns);
      // The session's state is on every page, the oldest included.
      expect(page.activeTurn).toEqual({ turnId: paused.turnId, status: 'awaiting_approval' });
      expect(page.pendingApprovals).toHaveLength(1);
      expect(page.pendingApprovals[0]).toMatchObject({ agent: 'refunds', status: 'pending' });
    }
    // A page that starts inside a turn carries that turn too (its user message is on an older page).
    const middle = pages[1]!;
    expect(middle.messages[0]!.role).not.toBe('user');
    expect(middle.turns[0]!.userMessageId).not.toBe(middle.messages[0]!.id);
  });

  it('reads only the page asked for, never the whole session', async () => {
    let wholeReads = 0;
    const { sessionStore } = setup.stores();
    const app = serve({ sessionStore: countWholeReads(sessionStore, () => wholeReads++) });
    for (let turn = 1; turn <= 4; turn++) await chat(app, 'ranged', `message ${turn}`);
    wholeReads = 0;
    const first = await get<SessionPage>(app, '/v1/sessions/ranged?limit=4');
    const second = await get<SessionPage>(app, `/v1/sessions/ranged?limit=4&before=${first.body.before}`);
    // 12 messages (user, tool, assistant per turn): the second page of 4 is messages 5 to 8.
    expect(second.body.messages.map((message) => [message.role, message.content])).toEqual([
      ['tool', 'echo: message 2'],
      ['assistant', 'echo: message 2'],
      ['user', 'message 3'],
      ['tool', 'echo: message 3'],
    ]);
    expect(second.body.turns).toHaveLength(2);
    expect(second.body.turns[1]!.userMessageId).toBe(second.body.messages[2]!.id);
    expect(wholeReads).toBe(0);
  });
});

/** The store (or the default in-memory one), counting the calls that read a whole session: `read` without a limit and `listTurns`. */
function countWholeReads(
  store: SessionStore = new InMemorySessionStore(),
  onWholeRead: () => void,
): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'listTurns') {
        return (...args: unknown[]) => {
          onWholeRead();
          return value.apply(target, args);
        };
      }
      if (property === 'read') {
        return (sessionId: string, options?: { limit?: number }) => {
          if (options?.limit === undefined) onWholeRead();
          return value.call(target, sessionId, options);
        };
      }
      return value.bind(target);
    },
  });
}
