import type { MessageItem } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { InMemoryMemoryStore } from '../../src/stores/in-memory-memory-store.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { AppendOptions, SessionLease, SessionStore } from '../../src/stores/session-store.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';
import { describeMemoryStoreContract } from './memory-store.contract.js';
import { describeSessionStoreContract } from './session-store.contract.js';

/**
 * The in-memory store driven through its `synchronous` access wherever it
 * offers one, as the turn engine drives it: the same contract must hold.
 */
function throughSynchronousAccess(store: InMemorySessionStore): SessionStore {
  const sync = store.synchronous;
  if (!sync) throw new Error('the in-memory store should offer synchronous access');
  const wrap = (lease: SessionLease): SessionLease => ({
    sessionId: lease.sessionId,
    token: lease.token,
    renew: () => lease.renew(),
    release: async () => sync.release(lease),
  });
  return {
    specificationVersion: 'v1',
    append: async (sessionId, messages, options) => sync.append(sessionId, messages, options),
    appendAndRead: async (sessionId, messages, options) => sync.appendAndRead(sessionId, messages, options),
    read: (sessionId, options) => store.read(sessionId, options),
    listTurns: (sessionId) => store.listTurns(sessionId),
    exists: (sessionId) => store.exists(sessionId),
    delete: (sessionId) => store.delete(sessionId),
    acquireLease: async (sessionId, options) => {
      const free = options.signal?.aborted ? undefined : sync.tryAcquireLease(sessionId, options);
      return wrap(free ?? (await store.acquireLease(sessionId, options)));
    },
    close: () => store.close(),
  };
}

describeSessionStoreContract(
  'in-memory',
  ({ idleTtlSeconds }) => new InMemorySessionStore({ idleTtlSeconds }),
);
describeSessionStoreContract('in-memory, synchronous access', ({ idleTtlSeconds }) =>
  throughSynchronousAccess(new InMemorySessionStore({ idleTtlSeconds })),
);
describeMemoryStoreContract('in-memory', () => new InMemoryMemoryStore());

describe('InMemorySessionStore synchronous access', () => {
  it('gives no lease at once while the session is held; the waiter gets it on release', async () => {
    const store = new InMemorySessionStore();
    const sync = store.synchronous!;
    const first = sync.tryAcquireLease('s', { ttlMs: 1000 });
    expect(first).toBeDefined();
    expect(sync.tryAcquireLease('s', { ttlMs: 1000 })).toBeUndefined();
    const waiting = store.acquireLease('s', { ttlMs: 1000, waitMs: 1000 });
    sync.release(first!);
    // Queued waiters come first: the session is not free for a newcomer while one waits.
    const second = await waiting;
    expect(second.token).not.toBe(first!.token);
    expect(sync.tryAcquireLease('s', { ttlMs: 1000 })).toBeUndefined();
    sync.release(second);
    expect(sync.tryAcquireLease('s', { ttlMs: 1000 })).toBeDefined();
    await store.close();
  });

  it('is withdrawn from a subclass that overrides a turn-path method, so turns go through the override', async () => {
    const seen: string[] = [];
    class AuditedStore extends InMemorySessionStore {
      override async append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions) {
        seen.push(...messages.map((message) => message.content));
        return super.append(sessionId, messages, options);
      }
    }
    class QuietStore extends InMemorySessionStore {
      override async ping() {}
    }
    expect(new AuditedStore().synchronous).toBeUndefined();
    expect(new QuietStore().synchronous).toBeDefined();

    const { app } = createApp({ agents: [echoAgent()], sessionStore: new AuditedStore() });
    const result = await app.chat({ message: 'hello', sessionId: 's' });
    expect(result.reply).toBe('echo: hello');
    // The user message goes through appendAndRead (not overridden); the agent's reply and the answer through append.
    expect(seen).toEqual(['echo: hello', 'echo: hello']);
    await app.close();
  });
});
