import type { MessageItem } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { InMemoryMemoryStore } from '../../src/stores/in-memory-memory-store.js';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import type { AppendOptions, SessionLease } from '../../src/stores/session-store.js';
import { createApp, echoAgent } from '../support/app-fixtures.js';
import { describeMemoryStoreContract } from './memory-store.contract.js';
import {
  describeSessionStoreContract,
  runningTurn,
  turnRecord,
  userMessage,
} from './session-store.contract.js';

describeSessionStoreContract(
  'in-memory',
  ({ idleTtlSeconds }) => new InMemorySessionStore({ idleTtlSeconds }),
);
// The same contract with every session compacted before each call: whatever a compacted session is
// asked, it answers as if it had never been compacted.
describeSessionStoreContract('in-memory, compacted between calls', ({ idleTtlSeconds }) => {
  const store = new InMemorySessionStore({ idleTtlSeconds });
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        target.compactSessions();
        return value.apply(target, args);
      };
    },
  });
});
describeMemoryStoreContract('in-memory', () => new InMemoryMemoryStore());

describe('InMemorySessionStore answers at once', () => {
  it('answers the turn path with values, not promises, and a busy session with a promise that waits', async () => {
    const store = new InMemorySessionStore();
    const first = store.acquireLease('s', { ttlMs: 1000, waitMs: 1000 });
    expect(first).not.toBeInstanceOf(Promise);
    const lease = first as SessionLease;
    const asked: MessageItem = { id: 'm1', role: 'user', content: 'hi', createdAt: new Date().toISOString() };
    const opened = store.openTurn('s', asked, { turn: runningTurn('m1'), limit: 5, lease });
    expect(opened).toMatchObject({ kind: 'opened', messages: [asked] });
    expect(store.append('s', [], { lease })).toBeUndefined();
    const waiting = store.acquireLease('s', { ttlMs: 1000, waitMs: 1000 });
    expect(waiting).toBeInstanceOf(Promise);
    lease.release();
    // Queued waiters come first: the session is not free for a newcomer while one waits.
    const second = await waiting;
    expect(second.token).not.toBe(lease.token);
    expect(store.acquireLease('s', { ttlMs: 1000, waitMs: 1000 })).toBeInstanceOf(Promise);
    await second.release();
    await store.close();
  });

  it('lets a subclass override a turn-path method (even asynchronously): turns go through the override', async () => {
    const seen: string[] = [];
    class AuditedStore extends InMemorySessionStore {
      override openTurn(...args: Parameters<InMemorySessionStore['openTurn']>) {
        seen.push(`open: ${args[1].content}`);
        return super.openTurn(...args);
      }
      override append(sessionId: string, messages: readonly MessageItem[], options?: AppendOptions) {
        seen.push(...messages.map((message) => message.content));
        return super.append(sessionId, messages, options);
      }
    }
    const { app } = createApp({ agents: [echoAgent()], sessionStore: new AuditedStore() });
    const result = await app.chat({ message: 'hello', sessionId: 's' });
    expect(result.reply).toBe('echo: hello');
    // The user message through openTurn; the agent's reply and the answer through append.
    expect(seen).toEqual(['open: hello', 'echo: hello', 'echo: hello']);
    await app.close();
  });
});

describe('InMemorySessionStore maxSessions', () => {
  /** Stores one finished turn in `sessionId`, as a turn without a lease would. */
  const write = (store: InMemorySessionStore, sessionId: string) => {
    const asked = userMessage(`hello ${sessionId}`);
    store.append(sessionId, [asked], { turn: turnRecord(asked.id) });
  };
  const kept = (store: InMemorySessionStore, ids: readonly string[]) => ids.filter((id) => store.exists(id));

  it('forgets the least recently written session past the cap', () => {
    const store = new InMemorySessionStore({ maxSessions: 3 });
    for (const id of ['a', 'b', 'c']) write(store, id);
    // Writing to `a` makes `b` the least recently written.
    write(store, 'a');
    write(store, 'd');
    expect(kept(store, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    // Reading does not count: `c` was written before `a` and `d`.
    store.read('c');
    write(store, 'e');
    expect(kept(store, ['a', 'b', 'c', 'd', 'e'])).toEqual(['a', 'd', 'e']);
    store.close();
  });

  it('never forgets a session whose lease is held or whose turn awaits approval', () => {
    const store = new InMemorySessionStore({ maxSessions: 2 });
    const lease = store.acquireLease('held', { ttlMs: 60_000, waitMs: 0 }) as SessionLease;
    store.append('held', [userMessage('long turn')], { lease });
    const asked = userMessage('refund 500');
    store.append('paused', [asked], {
      turn: { ...runningTurn(asked.id), status: 'awaiting_approval', approvals: [] },
    });
    write(store, 'x');
    write(store, 'y');
    expect(kept(store, ['held', 'paused', 'x', 'y'])).toEqual(['held', 'paused', 'y']);
    lease.release();
    write(store, 'z');
    expect(kept(store, ['held', 'paused', 'y', 'z'])).toEqual(['paused', 'z']);
    store.close();
  });

  it('rejects a maxSessions that is not a positive whole number', () => {
    for (const maxSessions of [0, -1, 2.5, Number.NaN]) {
      expect(() => new InMemorySessionStore({ maxSessions })).toThrow(/maxSessions/);
    }
  });
});
