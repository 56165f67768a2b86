import { App, type ServerHandle } from '@switchboard/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greeter, reverser } from '../src/agents.js';
import { KeywordRouter } from '../src/keyword-router.js';

describe('custom orchestrator example over HTTP', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    server = await new App({
      name: 'custom-orchestrator',
      agents: [greeter, reverser],
      logLevel: 'silent',
    }).start(KeywordRouter, { port: 0 });
  });
  afterAll(() => server.close());

  const chat = async (body: object) => {
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('routes to the agent whose keyword matches and returns its answer', async () => {
    const { status, body } = await chat({ message: 'please reverse abc def' });
    expect(status).toBe(200);
    expect(body.reply).toBe('fed cba');
    expect(body.steps).toMatchObject([{ kind: 'call', calls: [{ agent: 'reverser' }] }, { kind: 'answer' }]);
  });

  it('keeps the conversation of a session', async () => {
    const first = await chat({ message: 'hello there' });
    expect(first.body.reply).toBe('Hello! Nice to meet you.');
    await chat({ message: 'what can you do?', sessionId: first.body.sessionId });
    const history = (await fetch(`${server.url}/v1/sessions/${first.body.sessionId}`).then((r) =>
      r.json(),
    )) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(history.messages.map((m) => m.role)).toEqual(['user', 'tool', 'assistant', 'user', 'assistant']);
    expect(history.messages.at(-1)?.content).toBe('I can route to: greeter, reverser. What would you like?');
  });
});
