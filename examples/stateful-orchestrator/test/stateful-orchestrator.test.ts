import { randomUUID } from 'node:crypto';
import type { ServerHandle } from '@switchboard/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';

interface ChatReply {
  sessionId: string;
  reply: string;
  status: string;
  steps: Array<{ kind: string; calls: Array<{ agent: string }> }>;
}

describe('stateful orchestrator example over HTTP', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    const { app, orchestrator } = buildApp({ logLevel: 'silent' });
    server = await app.start(orchestrator, { port: 0 });
  });
  afterAll(() => server.close());

  const chat = async (sessionId: string, message: string, userId?: string): Promise<ChatReply> => {
    const response = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, sessionId, userId }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as ChatReply;
    expect(body.status).toBe('completed');
    return body;
  };
  const newSession = () => `ses-${randomUUID()}`;

  it('remembers what the user said in earlier turns of a session', async () => {
    const session = newSession();
    expect((await chat(session, 'hello')).reply).toBe(`Welcome! What's your name? (Say "my name is …")`);

    const introduced = await chat(session, 'my name is ada');
    expect(introduced.reply).toBe('Nice to meet you, Ada! Do you prefer metric or imperial units?');
    expect(introduced.steps.map((step) => [step.kind, step.calls[0]?.agent])).toEqual([
      ['call', 'greeter'],
      ['answer', 'route_to_user'],
    ]);

    expect((await chat(session, 'hi again')).reply).toBe('Hi Ada! Do you prefer metric or imperial units?');
    expect((await chat(session, 'imperial please')).reply).toBe(
      "Got it, Ada: I'll use imperial units from now on.",
    );
    expect((await chat(session, "what's the weather in Cairo?")).reply).toBe('Cairo: 88 °F, sunny.');
    expect((await chat(session, 'what do you know about me?')).reply).toBe(
      "You're Ada; you prefer imperial units; this is message 6 of our conversation number 1.",
    );
  });

  it('keeps sessions apart', async () => {
    const first = newSession();
    await chat(first, 'call me grace');
    const second = newSession();
    expect((await chat(second, 'who am i?')).reply).toBe(
      `I don't know your name yet (say "my name is …"); you have not chosen units yet (metric until you do); this is message 1 of our conversation number 1.`,
    );
    expect((await chat(first, 'who am i?')).reply).toMatch(/^You're Grace; .* message 2 of/);
  });

  it('shares user memory across the sessions of one userId, and only theirs', async () => {
    const userId = `user-${randomUUID()}`;
    await chat(newSession(), 'my name is Linus', userId);
    await chat(newSession(), 'I prefer fahrenheit', userId);

    const later = newSession();
    expect((await chat(later, 'weather in Oslo?', userId)).reply).toBe('Oslo: 39 °F, snow.');
    expect((await chat(later, 'what do you know about me', userId)).reply).toBe(
      `I don't know your name yet (say "my name is …"); you prefer imperial units; this is message 2 of our conversation number 3.`,
    );

    const stranger = `user-${randomUUID()}`;
    expect((await chat(newSession(), 'weather in Oslo?', stranger)).reply).toBe('Oslo: 4 °C, snow.');
    expect((await chat(newSession(), 'the weather in Tokyo in fahrenheit', stranger)).reply).toBe(
      'Tokyo: 72 °F, cloudy.',
    );
    expect((await chat(newSession(), 'weather in Tokyo', stranger)).reply).toBe('Tokyo: 22 °C, cloudy.');
  });

  it('forgets session memory when the session is deleted, but keeps user memory', async () => {
    const userId = `user-${randomUUID()}`;
    const session = newSession();
    await chat(session, 'my name is Margaret', userId);
    await chat(session, 'metric', userId);
    expect((await chat(session, 'who am i', userId)).reply).toMatch(
      /^You're Margaret; you prefer metric units; this is message 3 /,
    );

    const deleted = await fetch(`${server.url}/v1/sessions/${session}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect((await fetch(`${server.url}/v1/sessions/${session}`)).status).toBe(404);

    expect((await chat(session, 'who am i', userId)).reply).toBe(
      `I don't know your name yet (say "my name is …"); you prefer metric units; this is message 1 of our conversation number 2.`,
    );
  });
});
