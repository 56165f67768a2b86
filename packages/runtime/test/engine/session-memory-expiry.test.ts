import { AbstractOrchestrator, type Conversation, RequestContext, routeToUser } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { App, defineAgent, InMemoryMemoryStore } from '../../src/index.js';

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

describe('session memory lifetime', () => {
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
