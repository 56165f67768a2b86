import type { MessageItem } from '@switchboard/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { ServerHandle } from '../../src/app.js';
import { buildApp, echoAgent, postJson, sleep } from '../support/app-fixtures.js';

/** Streams five chunks 30 ms apart. */
const narrator = defineAgent({
  name: 'narrator',
  description: 'Tells a story slowly',
  async *run(_message, { signal }) {
    for (let index = 0; index < 5; index++) {
      await sleep(30, signal);
      yield `part ${index}. `;
    }
  },
});

async function historyOf(server: ServerHandle, sessionId: string): Promise<MessageItem[]> {
  const response = await fetch(`${server.url}/v1/sessions/${sessionId}`);
  return response.status === 200 ? ((await response.json()) as { messages: MessageItem[] }).messages : [];
}

describe('a streaming client that disconnects mid-turn', () => {
  let server: ServerHandle | undefined;
  afterEach(async () => {
    await server?.close();
    vi.restoreAllMocks();
  });

  it('leaves a complete stored turn, a free session and a server that keeps serving, without error logs', async () => {
    const consoleErrors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const logged: unknown[] = [];
    const { app, orchestrator } = buildApp({
      agents: [narrator, echoAgent()],
      logger: (error) => logged.push(error),
    });
    server = await app.start(orchestrator, { port: 0 });

    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat`, {
      ...postJson({ message: 'narrator: once upon a time', sessionId: 'hung-up', stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('turn-start');
    controller.abort();

    let messages: MessageItem[] = [];
    for (let waited = 0; messages.length < 3 && waited < 2000; waited += 20) {
      await sleep(20);
      messages = await historyOf(server, 'hung-up');
    }
    expect(messages.map((message) => message.role)).toEqual(['user', 'tool', 'assistant']);

    const next = await fetch(
      `${server.url}/v1/chat`,
      postJson({ message: 'echo: still here?', sessionId: 'hung-up' }),
    );
    expect(next.status).toBe(200);
    expect(((await next.json()) as { reply: string }).reply).toBe('echo: still here?');
    expect(logged).toEqual([]);
    expect(consoleErrors).not.toHaveBeenCalled();
  });
});
