import { readFileSync } from 'node:fs';
import { App, agentMeta, defineAgent } from '@switchboard/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { KeywordOrchestrator } from '../src/keyword-orchestrator.js';
import { MetaRouter } from '../src/meta-router.js';
import { withSteps } from '../src/step-rules.js';

const page = readFileSync(new URL('../../../docs/guides/configuration.md', import.meta.url), 'utf8');
/** Every ```http block of the page: its request line and its JSON body, if any. */
const requests = [...page.matchAll(/```http\n([A-Z]+) (\S+)\n([\s\S]*?)```/g)].map(
  ([, method, path, body]) => ({
    method: method as string,
    path: path as string,
    body: body?.trim() ? (JSON.parse(body) as unknown) : undefined,
  }),
);

const agents = ['clock', 'weather', 'support', 'echo'].map((name) =>
  defineAgent({
    name,
    description: `The ${name} agent`,
    keywords: [name],
    run: (message) => `${name}: ${message}`,
  }),
);
const metas = agents.map(agentMeta);
const keyword = (names: string[]) =>
  new KeywordOrchestrator({
    agents: metas.filter((meta) => names.includes(meta.name)),
    fallbackAgent: 'echo',
  });
const router = withSteps(
  new MetaRouter({
    agents: metas,
    taskTypes: [{ name: 'chat', description: 'Anything', patterns: ['chat'] }],
    patterns: {
      chat: keyword(['clock', 'weather', 'support', 'echo']),
      research: keyword(['weather', 'clock', 'echo']),
    },
    choose: ({ message, taskTypes }) => ({
      taskType: taskTypes.find((type) => message.includes(type.name))?.name ?? 'chat',
    }),
  }),
  { name: 'desk', steps: [{ name: 'any', description: 'Anything', isDefault: true }] },
);
const app = new App({ name: 'docs', agents, logLevel: 'silent' }).mount(router);
afterAll(() => app.close());

describe('docs/guides/configuration.md', () => {
  it('has requests the API accepts, in order, and that route the next turn', async () => {
    expect(requests.map(({ method, path }) => `${method} ${path}`)).toEqual([
      'PUT /v1/config/task-type/refunds',
      'PUT /v1/config/pattern/research',
      'PUT /v1/config/step-rules/desk',
      'PUT /v1/config/keywords/clock',
      'PUT /v1/config/profile/careful',
      'PUT /v1/config/keywords/clock',
      'GET /v1/config/keywords/clock/diff?from=4&to=6',
      'POST /v1/config/keywords/clock/rollback',
      'GET /v1/config/keywords/clock/versions',
    ]);
    const answers: unknown[] = [];
    for (const { method, path, body } of requests) {
      const response = await app.request(path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBe(200);
      answers.push(await response.json());
    }
    expect(answers[6]).toMatchObject({
      differences: [
        { path: 'keywords', before: ['time', 'calendar'], after: ['time', 'calendar', 'agenda'] },
      ],
    });
    expect(answers[7]).toMatchObject({ version: 7, value: { keywords: ['time', 'calendar'] } });
    const reply = await app.chat({ message: 'what is on my calendar', sessionId: 'docs' });
    expect(reply.reply).toBe('clock: what is on my calendar');
    expect((await app.sessions.listTurns('docs'))[0]?.configVersion).toEqual({ app: 7 });
  });
});
