import { AbstractOrchestrator, type Conversation, RequestContext, routeToUser } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import {
  App,
  defineAgent,
  InMemoryMemoryStore,
  InMemorySessionStore,
  type MemoryStore,
} from '../../src/index.js';
import { createRedisStores } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const redis = useRedis();

/** Remembers the first message of a session and answers with it. */
class Remembering extends AbstractOrchestrator {
  protected async handleMessage(conversation: Conversation) {
    const memory = RequestContext.current().getMemory('session');
    const user = RequestContext.current().getMemory('user');
    const text = conversation.messages[conversation.turnStart]?.content ?? '';
    const first = await memory.getContent<string>('first');
    if (first.success && first.data === undefined) await memory.setContent('first', text);
    await user.updateContent('turns', (n: number) => n + 1, 0);
    const remembered = await memory.getContent<string>('first');
    return routeToUser(remembered.success ? String(remembered.data) : 'memory failed');
  }
}

// Each test waits out a 1 s idle time on an app of its own: the three wait side by side.
describe.concurrent('session memory lifetime', () => {
  it('expires with the session idle time, while user memory stays', async () => {
    const memoryStore = new InMemoryMemoryStore();
    const agent = defineAgent({ name: 'noop', description: 'Unused', run: () => 'unused' });
    const app = new App({ name: 'expiry', agents: [agent], memoryStore, sessionIdleTtlSeconds: 1 });
    app.mount(Remembering);
    try {
      expect((await app.chat({ sessionId: 's', userId: 'u', message: 'alpha' })).reply).toBe('alpha');
      expect((await app.chat({ sessionId: 's', userId: 'u', message: 'beta' })).reply).toBe('alpha');
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      // The session itself expired too, so this is a fresh session that remembers its own first message.
      expect((await app.chat({ sessionId: 's', userId: 'u', message: 'gamma' })).reply).toBe('gamma');
      expect(await memoryStore.get('user:u', 'turns')).toBe(3);
    } finally {
      await app.close();
    }
  });
});

describe.concurrent.each([
  [
    'in memory',
    () => ({
      memoryStore: new InMemoryMemoryStore() as MemoryStore,
      sessionStore: new InMemorySessionStore({ idleTtlSeconds: 1 }),
    }),
  ],
  ['in Redis', () => createRedisStores(REDIS_URL, { keyPrefix: redis.prefix(), idleTtlSeconds: 1 })],
])('session memory of a session in use (%s)', (_name, stores) => {
  it('outlives one idle time after its last write while turns keep coming', async () => {
    const agent = defineAgent({ name: 'noop', description: 'Unused', run: () => 'unused' });
    const app = new App({ name: 'in-use', agents: [agent], ...stores(), sessionIdleTtlSeconds: 1 });
    app.mount(Remembering);
    try {
      expect((await app.chat({ sessionId: 'busy', message: 'alpha' })).reply).toBe('alpha');
      // 2.4 s of turns, one every 300 ms, and no memory write after the first: 'first' must survive.
      for (let turn = 0; turn < 8; turn++) {
        await sleep(300);
        expect((await app.chat({ sessionId: 'busy', message: `turn ${turn}` })).reply).toBe('alpha');
      }
    } finally {
      await app.close();
    }
  });
});
