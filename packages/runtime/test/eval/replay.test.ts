import { type Conversation, currentUserMessage, routeToUser, toolCall } from '@switchboard/core';
import { afterAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import { App } from '../../src/app.js';
import { replaySessions } from '../../src/eval/replay.js';
import { parseSessionExport, readRecordedSession } from '../../src/eval/session-export.js';
import { apiKeys } from '../../src/server/auth.js';
import { tenantSessions } from '../../src/stores/tenant-sessions.js';
import { AGENTS, KnownRouter } from './eval-fixtures.js';

const ACME = 'sk-acme-0123456789abcdef0123456789abcdef';
const ADA = 'sk-ada-0123456789abcdef0123456789abcdef';
const GLOBEX = 'sk-globex-0123456789abcdef0123456789abcdef';
const auth = apiKeys({
  keys: {
    [ACME]: { tenantId: 'acme', name: 'acme-web' },
    [ADA]: { tenantId: 'acme', name: 'ada-laptop', userId: 'ada' },
    [GLOBEX]: { tenantId: 'globex', name: 'globex-bot' },
  },
});
const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

let runs = 0;
const counted = AGENTS.map((agent) =>
  defineAgent({
    ...agent,
    run: (message, context) => {
      runs += 1;
      return agent.run(message, context);
    },
  }),
);

/** Sends weather to the weather agent and, on a second thought, sums to the clock. */
class NextRouter extends KnownRouter {
  protected override handleMessage(conversation: Conversation) {
    const text = currentUserMessage(conversation).content;
    if (conversation.hop > 0) return super.handleMessage(conversation);
    if (text.includes('weather')) return toolCall('weather', text, { reason: 'matched weather' });
    if (text.includes('sum'))
      return toolCall('clock', text, { reason: 'sums are times now', thought: 'why not' });
    if (text === 'hello') return routeToUser('hi!');
    return super.handleMessage(conversation);
  }
}

describe('session export and replay', async () => {
  const app = new App({ name: 'desk', agents: counted, auth, logLevel: 'silent' }).mount(KnownRouter);
  afterAll(() => app.close());
  const post = (key: string, sessionId: string, message: string) =>
    app.request('/v1/chat', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, message }),
    });
  for (const message of ['what time is it', 'weather today', 'chain', 'sum 2 and 2', 'hello'])
    expect((await post(ACME, 'team-1', message)).status).toBe(200);
  expect((await post(ADA, 'ada-1', 'time please')).status).toBe(200);

  it('exports a whole session as JSONL, scoped like the other session routes', async () => {
    const response = await app.request('/v1/sessions/team-1/export', bearer(ACME));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const [session] = parseSessionExport(await response.text());
    expect(session?.sessionId).toBe('team-1');
    expect(session?.turns).toHaveLength(5);
    expect(session?.messages.filter((message) => message.role === 'user')).toHaveLength(5);
    // Another tenant, and another user of the same tenant, do not see it; its own user does.
    expect((await app.request('/v1/sessions/team-1/export', bearer(GLOBEX))).status).toBe(404);
    expect((await app.request('/v1/sessions/team-1/export', bearer(ADA))).status).toBe(404);
    expect((await app.request('/v1/sessions/ada-1/export', bearer(ADA))).status).toBe(200);
    expect((await app.request('/v1/sessions/nope/export', bearer(ACME))).status).toBe(404);
    expect((await app.request('/v1/sessions/team-1/export')).status).toBe(401);
  });

  it('re-decides every recorded decision with another router, without running agents', async () => {
    const exported = parseSessionExport(
      await (await app.request('/v1/sessions/team-1/export', bearer(ACME))).text(),
    );
    const before = runs;
    const same = await replaySessions(KnownRouter, exported, { agents: app.agentMetas });
    // Two decisions per turn (an agent, then the answer), three for the chain, one for "hello".
    expect(same).toMatchObject({ sessions: 1, decisions: 10, agreed: 10, agreement: 1, disagreements: [] });
    const next = await replaySessions(NextRouter, exported, { agents: app.agentMetas });
    expect(runs).toBe(before);
    expect(next.decisions).toBe(10);
    expect(next.agreement).toBe(8 / 10);
    expect(next.disagreements).toEqual([
      {
        sessionId: 'team-1',
        turnId: expect.any(String),
        hop: 0,
        message: 'weather today',
        recorded: 'calculator',
        replayed: 'weather',
        recordedReason: 'weather looks like numbers',
        replayedReason: 'matched weather',
      },
      {
        sessionId: 'team-1',
        turnId: expect.any(String),
        hop: 0,
        message: 'sum 2 and 2',
        recorded: 'calculator',
        replayed: 'clock',
        recordedReason: 'matched sum',
        replayedReason: 'sums are times now',
        replayedThought: 'why not',
      },
    ]);
  });

  it('feeds the recorded replies back: the chain re-decides its second link from the clock reply', async () => {
    const exported = parseSessionExport(
      await (await app.request('/v1/sessions/team-1/export', bearer(ACME))).text(),
    );
    const chain = exported[0]?.turns[2];
    expect(chain?.steps.map((step) => step.calls.map((call) => call.agent))).toEqual([
      ['clock'],
      ['calculator'],
      ['route_to_user'],
    ]);
    const seen: number[] = [];
    class Watching extends KnownRouter {
      protected override handleMessage(conversation: Conversation) {
        if (currentUserMessage(conversation).content === 'chain')
          seen.push(conversation.lastResults?.length ?? -1);
        return super.handleMessage(conversation);
      }
    }
    const replay = await replaySessions(Watching, exported, { agents: app.agentMetas });
    expect(replay.agreement).toBe(1);
    expect(seen).toEqual([0, 1, 1]);
  });

  it('reads a recorded session straight from a store, as the export has it', async () => {
    const exported = parseSessionExport(
      await (await app.request('/v1/sessions/team-1/export', bearer(ACME))).text(),
    );
    // With keys, the store holds each session under its tenant: read through the tenant's view.
    const acme = tenantSessions(app.sessions, 'acme');
    expect(await readRecordedSession(acme, 'team-1')).toEqual(exported[0]);
    expect(await readRecordedSession(acme, 'nope')).toBeUndefined();
    expect(await readRecordedSession(tenantSessions(app.sessions, 'globex'), 'team-1')).toBeUndefined();
  });

  it('refuses a malformed export line with its number', () => {
    expect(() =>
      parseSessionExport('{"type":"session","version":1,"sessionId":"s"}\n{"type":"message"}'),
    ).toThrow(/^export:2: message: /);
    expect(() => parseSessionExport('{"type":"message","message":{}}')).toThrow(/^export:1: /);
  });
});
