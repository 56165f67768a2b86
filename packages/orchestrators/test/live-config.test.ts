import type { AgentMeta } from '@switchboard/core';
import {
  type Agent,
  App,
  agentMeta,
  apiKeys,
  defineAgent,
  type TurnRecord,
  type TurnResult,
} from '@switchboard/runtime';
import { recordSpans } from '@switchboard/runtime/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ACME_KEY, bearer, GLOBEX_KEY } from '../../runtime/test/support/two-tenants.js';
import { KeywordOrchestrator } from '../src/keyword-orchestrator.js';
import { MetaRouter } from '../src/meta-router.js';
import { RoundRobinOrchestrator } from '../src/round-robin-orchestrator.js';
import { withSteps } from '../src/step-rules.js';

const named = (name: string, keywords: string[] = []): Agent =>
  defineAgent({ name, description: `The ${name} agent`, keywords, run: (message) => `${name}: ${message}` });
const agents = [named('clock', ['time']), named('echo', ['echo']), named('alpha'), named('beta')];
const metas: AgentMeta[] = agents.map(agentMeta);
const keywordRouter = (only = ['clock', 'echo']) =>
  new KeywordOrchestrator({
    agents: metas.filter((meta) => only.includes(meta.name)),
    fallbackAgent: 'echo',
  });

const spans = recordSpans();
afterAll(() => spans.shutdown());
const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  spans.reset();
});
const open = (app: App) => {
  apps.push(app);
  return app;
};
const agentOf = (result: TurnResult) => result.reply.split(':')[0];
const put = async (app: App, path: string, value: unknown, key?: string) => {
  const response = await app.request(`/v1/config/${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...(key ? bearer(key) : {}) },
    body: JSON.stringify({ value }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { version: number };
};

describe('live configuration seen by the routers', () => {
  it('routes the next message by a keyword added through the API, and the turn records the version', async () => {
    const app = open(new App({ name: 'desk', agents, logLevel: 'silent' }).mount(keywordRouter()));
    expect(agentOf(await app.chat({ message: 'show my calendar', sessionId: 's1' }))).toBe('echo');
    const { version } = await put(app, 'keywords/clock', { keywords: ['time', 'calendar'] });
    const next = await app.chat({ message: 'show my calendar', sessionId: 's1' });
    expect(agentOf(next)).toBe('clock');
    const turns = await app.sessions.listTurns('s1');
    expect(turns.map((turn) => turn.configVersion)).toEqual([undefined, { app: version }]);
    const turnSpans = spans.named('keyword');
    expect(turnSpans.map((span) => span.attributes['switchboard.config.app_version'])).toEqual([
      undefined,
      1,
    ]);
  });

  it('gives a tenant the app-wide items, under its own overrides, and no other tenant’s', async () => {
    const auth = apiKeys({
      keys: { [ACME_KEY]: { tenantId: 'acme', name: 'acme-web' }, [GLOBEX_KEY]: { tenantId: 'globex' } },
    });
    const app = open(new App({ name: 'desk', agents, auth, logLevel: 'silent' }).mount(keywordRouter()));
    await app.config.put('keywords', 'clock', { keywords: ['calendar'] }, { updatedBy: 'deploy' });
    await put(app, 'keywords/clock', { keywords: ['agenda'] }, ACME_KEY);
    const routed = async (tenantId: string, message: string) =>
      agentOf(await app.chat({ message, tenantId, sessionId: `${tenantId}-${message.replace(' ', '-')}` }));
    const turnOf = async (key: string, sessionId: string) => {
      const response = await app.request(`/v1/sessions/${sessionId}`, { headers: bearer(key) });
      return ((await response.json()) as { turns: TurnRecord[] }).turns[0];
    };
    expect(await routed('acme', 'my agenda')).toBe('clock');
    expect(await routed('acme', 'my calendar')).toBe('echo');
    expect(await routed('globex', 'my calendar')).toBe('clock');
    expect(await routed('globex', 'my agenda')).toBe('echo');
    expect((await turnOf(ACME_KEY, 'acme-my-agenda'))?.configVersion).toEqual({ app: 1, tenant: 1 });
    expect((await turnOf(GLOBEX_KEY, 'globex-my-calendar'))?.configVersion).toEqual({ app: 1, tenant: 0 });
  });

  it('applies a step-rules change to new sessions, and to running ones from their next turn', async () => {
    const router = withSteps(keywordRouter(), {
      name: 'desk',
      steps: [{ name: 'open', description: 'Anything goes', isDefault: true }],
    });
    const app = open(new App({ name: 'desk', agents, logLevel: 'silent' }).mount(router));
    expect(agentOf(await app.chat({ message: 'what time is it', sessionId: 'running' }))).toBe('clock');
    await app.config.put('step-rules', 'desk', {
      steps: [{ name: 'closed', description: 'No clock after hours', isDefault: true, denied: ['clock'] }],
    });
    // The clock is no candidate any more: the keyword router falls back to echo.
    expect(agentOf(await app.chat({ message: 'what time is it', sessionId: 'new' }))).toBe('echo');
    expect(agentOf(await app.chat({ message: 'what time is it', sessionId: 'running' }))).toBe('echo');
    const [turn] = await app.sessions.listTurns('new');
    expect(turn?.steps[0]?.annotations).toMatchObject({ activeStep: 'closed', allowedAgents: ['echo'] });
    const [bad] = [
      await app.config
        .put('step-rules', 'desk', { steps: [{ name: 'x', description: '', allowed: ['ghost*'] }] })
        .catch((error: Error) => error),
    ];
    expect(bad).toMatchObject({ code: 'validation_error' });
  });

  it('chooses a task type added at run time on the next turn, and a rollback restores the old routing', async () => {
    const chat = keywordRouter();
    const rotation = new RoundRobinOrchestrator({
      agents: metas.filter((meta) => ['alpha', 'beta'].includes(meta.name)),
    });
    const router = new MetaRouter({
      agents: metas,
      taskTypes: [{ name: 'chat', description: 'Anything', patterns: ['chat'] }],
      patterns: { chat, rotation },
      // Offline: the task type whose name the message says, else chat.
      choose: ({ message, taskTypes }) => ({
        taskType: taskTypes.find((type) => message.includes(type.name))?.name ?? 'chat',
      }),
    });
    const app = open(new App({ name: 'desk', agents, logLevel: 'silent' }).mount(router));
    expect(agentOf(await app.chat({ message: 'please rotate', sessionId: 'm' }))).toBe('echo');
    const first = await app.config.put('task-type', 'rotate', {
      description: 'Rotations',
      patterns: ['chat'],
    });
    const second = await app.config.put('task-type', 'rotate', {
      description: 'Rotations',
      patterns: ['rotation'],
    });
    expect(agentOf(await app.chat({ message: 'please rotate', sessionId: 'm' }))).toBe('alpha');
    await app.config.rollback('task-type', 'rotate', first.version);
    expect(agentOf(await app.chat({ message: 'please rotate', sessionId: 'm' }))).toBe('echo');
    const turns = await app.sessions.listTurns('m');
    expect(turns.map((turn) => [turn.configVersion?.app, turn.steps[0]?.annotations?.taskType])).toEqual([
      [undefined, 'chat'],
      [second.version, 'rotate'],
      [3, 'rotate'],
    ]);
    // A pattern item narrows a pattern to some of its agents.
    await app.config.put('pattern', 'rotation', { agents: ['beta'] });
    await app.config.put('task-type', 'rotate', { description: 'Rotations', patterns: ['rotation'] });
    expect(agentOf(await app.chat({ message: 'please rotate', sessionId: 'm' }))).toBe('beta');
    const refused = await app.config
      .put('task-type', 'rotate', { description: 'Rotations', patterns: ['nowhere'] })
      .catch((error: { issues?: string[] }) => error.issues);
    expect(refused).toEqual(["patterns.0: 'nowhere' is not a pattern (chat, rotation)"]);
  });

  it('applies a profile item to the next turn’s limits', async () => {
    const app = open(
      new App({
        name: 'desk',
        agents,
        logLevel: 'silent',
        profiles: { desk: { maxHops: 5 } },
        profile: 'desk',
      }).mount(keywordRouter()),
    );
    expect((await app.chat({ message: 'echo one', sessionId: 'p' })).status).toBe('completed');
    await app.config.put('profile', 'desk', { maxHops: 1, onLimit: 'partial' });
    expect((await app.chat({ message: 'echo two', sessionId: 'p' })).status).toBe('limited');
  });
});
