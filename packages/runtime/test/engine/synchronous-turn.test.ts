import { createHook } from 'node:async_hooks';
import { defineAgent } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { SessionStore } from '../../src/stores/session-store.js';
import { createApp, relay } from '../support/app-fixtures.js';

/** An agent that records whether a microtask queued before the turn had run by the time it was called. */
function tickWatchingAgent() {
  const seen: boolean[] = [];
  let queuedRan = false;
  const agent = defineAgent({
    name: 'watcher',
    description: 'Notes whether the turn yielded before it ran',
    run: (message) => {
      seen.push(queuedRan);
      return `seen: ${message}`;
    },
  });
  const queue = () => {
    queuedRan = false;
    queueMicrotask(() => {
      queuedRan = true;
    });
  };
  return { agent, seen, queue };
}

describe('a turn of synchronous steps', () => {
  it('reaches its agent without yielding when the store, orchestrator and agent all answer at once', async () => {
    const { agent, seen, queue } = tickWatchingAgent();
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'watcher' }) });
    queue();
    const turn = app.chat({ message: 'hi', sessionId: 's' });
    expect(seen).toEqual([false]);
    expect((await turn).reply).toContain('seen: hi');
    await app.close();
  });

  it('waits where a step is pending, and still answers, with a store that answers only asynchronously', async () => {
    // Every method of the store answers with a promise, as a network store's would (listeners aside).
    const inner = new InMemorySessionStore();
    const asyncOnly = new Proxy(inner, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        if (property === 'onCancel') return value.bind(target);
        return (...args: unknown[]) => Promise.resolve().then(() => value.apply(target, args));
      },
    }) as SessionStore;
    const { agent, seen, queue } = tickWatchingAgent();
    const { app } = createApp({
      agents: [agent],
      handler: relay({ defaultAgent: 'watcher' }),
      sessionStore: asyncOnly,
    });
    queue();
    const turn = app.chat({ message: 'hi', sessionId: 's' });
    expect((await turn).reply).toContain('seen: hi');
    expect(seen).toEqual([true]);
    expect((await app.sessions.read('s')).map((message) => message.role)).toEqual([
      'user',
      'tool',
      'assistant',
    ]);
    await app.close();
  });

  it('makes few promises where its agent answers asynchronously: on Node 20 each runs the AsyncLocalStorage hook', async () => {
    const agent = defineAgent({
      name: 'later',
      description: 'Answers with a promise',
      run: (message) => Promise.resolve(`later: ${message}`),
    });
    const { app } = createApp({ agents: [agent], handler: relay({ defaultAgent: 'later' }) });
    await app.chat({ message: 'warm', sessionId: 'warm' });
    const turns = 20;
    let promises = 0;
    const counter = createHook({
      init(_id, type) {
        if (type === 'PROMISE') promises += 1;
      },
    });
    counter.enable();
    const replies = await Promise.all(
      Array.from({ length: turns }, (_, index) =>
        app.chat({ message: `hi ${index}`, sessionId: `s${index}` }),
      ),
    );
    counter.disable();
    expect(replies.map((result) => result.reply)).toEqual(
      Array.from({ length: turns }, (_, index) => `later: hi ${index}`),
    );
    // Less Promise.all's own: one a turn, one for itself and one for the await.
    const perTurn = (promises - 2) / turns - 1;
    // The agent's reply; the race against the call's abort (two); settling the reply; finishing the call;
    // the steps' driver (itself and its await); app.chat's. Eleven when the last three were async functions.
    expect(perTurn).toBeLessThanOrEqual(8);
    await app.close();
  });
});
