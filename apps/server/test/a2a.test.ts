import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { useServerApps } from './support/server-apps.js';

const serve = useServerApps();

const sendMessage = (text: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text }] } },
  }),
});

describe('the demo server as an A2A agent', () => {
  it('is on by default: publishes its card and answers a message', async () => {
    const { app } = serve({});
    const card = (await (await app.request('/.well-known/agent-card.json')).json()) as {
      name: string;
      supportedInterfaces: { url: string }[];
      skills: { id: string }[];
    };
    expect(card.name).toBe('switchboard-demo');
    expect(card.supportedInterfaces[0]?.url).toBe('http://localhost/a2a');
    expect(card.skills.length).toBeGreaterThan(0);
    const answer = (await (await app.request('/a2a', sendMessage('what time is it?'))).json()) as {
      result: { task: { status: { state: string } } };
    };
    expect(answer.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('names A2A_PUBLIC_URL in the card', async () => {
    const { app } = serve({ A2A_PUBLIC_URL: 'https://desk.example.com' });
    const card = (await (await app.request('/.well-known/agent-card.json')).json()) as {
      supportedInterfaces: { url: string }[];
    };
    expect(card.supportedInterfaces[0]?.url).toBe('https://desk.example.com/a2a');
  });

  it('names the origin of a Host listed in A2A_TRUSTED_HOSTS, and of no other', async () => {
    const { app } = serve({ A2A_TRUSTED_HOSTS: 'desk.internal, desk.example.com:8443' });
    const cardUrl = async (origin: string) => {
      const response = await app.request(`${origin}/.well-known/agent-card.json`);
      return ((await response.json()) as { supportedInterfaces: { url: string }[] }).supportedInterfaces[0]
        ?.url;
    };
    expect(await cardUrl('http://desk.internal:3000')).toBe('http://desk.internal:3000/a2a');
    expect(await cardUrl('https://desk.example.com:8443')).toBe('https://desk.example.com:8443/a2a');
    expect(await cardUrl('https://desk.example.com:9999')).toBe('/a2a');
    expect(await cardUrl('http://evil.example')).toBe('/a2a');
  });

  it('is off with A2A=off', async () => {
    const { app } = serve({ A2A: 'off' });
    expect((await app.request('/.well-known/agent-card.json')).status).toBe(404);
    expect((await app.request('/a2a', sendMessage('hi'))).status).toBe(404);
  });

  it('refuses an A2A value it does not know', () => {
    expect(() => readConfig({ A2A: 'maybe' })).toThrow(ConfigurationError);
    expect(() => readConfig({ A2A: 'maybe' })).toThrow(/A2A must be on or off/);
  });
});
