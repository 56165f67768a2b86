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
});
