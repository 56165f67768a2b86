import { currentUserMessage, latestToolResults, routeToUser, toolCall } from '@switchboard/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createApp, type DecisionHandler, echoAgent } from '../support/app-fixtures.js';

describe('the history window the orchestrator sees', () => {
  let app: App | undefined;
  afterEach(() => app?.close());

  it('with historyWindow 3, the 5th turn sees at most 3 earlier messages plus the whole current turn', async () => {
    const created = createApp({ agents: [echoAgent()], historyWindow: 3 });
    app = created.app;
    for (let turn = 1; turn <= 5; turn++) await app.chat({ sessionId: 'windowed', message: `turn ${turn}` });

    // The 5th turn's two decisions: on the user message, then on the echo reply.
    const [first, second] = created.orchestrator.seen.slice(-2);
    expect(first!.messages.map((message) => message.content)).toEqual([
      'turn 4',
      'echo: turn 4',
      'echo: turn 4',
      'turn 5',
    ]);
    expect(first!.turnStart).toBe(3);
    expect(currentUserMessage(first!).content).toBe('turn 5');
    expect(second!.messages.map((message) => message.content)).toEqual([
      'turn 4',
      'echo: turn 4',
      'echo: turn 4',
      'turn 5',
      'echo: turn 5',
    ]);
    expect(second!.turnStart).toBe(3);
    expect(second!.hop).toBe(1);

    // The stored history is complete all the same.
    expect(await app.sessions.read('windowed')).toHaveLength(15);
  });

  it('never cuts the current turn, however long it gets', async () => {
    // Calls echo three times in a row, then answers.
    const chain: DecisionHandler = (conversation) =>
      conversation.hop < 3
        ? toolCall('echo', `step ${conversation.hop}`)
        : routeToUser(latestToolResults(conversation).at(-1)!.content);
    const created = createApp({ agents: [echoAgent()], handler: chain, historyWindow: 2 });
    app = created.app;
    await app.chat({ sessionId: 'long-turn', message: 'first' });
    await app.chat({ sessionId: 'long-turn', message: 'second' });

    const last = created.orchestrator.seen.at(-1)!;
    expect(last.hop).toBe(3);
    expect(last.messages.map((message) => message.content)).toEqual([
      'echo: step 2',
      'echo: step 2',
      'second',
      'echo: step 0',
      'echo: step 1',
      'echo: step 2',
    ]);
    expect(last.turnStart).toBe(2);
    expect(currentUserMessage(last).content).toBe('second');
  });

  it('on the first turn of a session, turnStart is 0 and there is no earlier history', async () => {
    const created = createApp({ agents: [echoAgent()] });
    app = created.app;
    await app.chat({ message: 'hello' });
    expect(created.orchestrator.seen[0]).toMatchObject({ turnStart: 0, hop: 0 });
    expect(created.orchestrator.seen[0]!.messages.map((message) => message.role)).toEqual(['user']);
  });

  it('defaults to a window of 50 earlier messages', async () => {
    const created = createApp({ agents: [echoAgent()] });
    app = created.app;
    for (let turn = 1; turn <= 20; turn++)
      await app.chat({ sessionId: 'default-window', message: `turn ${turn}` });
    await app.chat({ sessionId: 'default-window', message: 'turn 21' });

    const first = created.orchestrator.seen.at(-2)!;
    expect(first.messages).toHaveLength(51);
    expect(first.turnStart).toBe(50);
    // 60 earlier messages exist; the oldest 10 (turns 1 to 3 and part of 4) fall outside the window.
    expect(first.messages[0]!.content).toBe('echo: turn 4');
    expect(currentUserMessage(first).content).toBe('turn 21');
  });
});
