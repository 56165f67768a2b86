import { CorruptRecordError, createId, type MessageItem } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { createRedisStores, RedisMemoryStore, RedisSessionStore } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { describeMemoryStoreContract } from './memory-store.contract.js';
import {
  describeSessionStoreContract,
  runningTurn,
  turnRecord,
  userMessage,
} from './session-store.contract.js';

const redis = useRedis();

describeSessionStoreContract(
  'redis',
  ({ idleTtlSeconds }) => new RedisSessionStore(REDIS_URL, { keyPrefix: redis.prefix(), idleTtlSeconds }),
);
describeMemoryStoreContract('redis', () => new RedisMemoryStore(REDIS_URL, { keyPrefix: redis.prefix() }));

function reply(role: 'tool' | 'assistant', content: string): MessageItem {
  const base = {
    id: createId('msg'),
    toolCallId: createId('call'),
    content,
    createdAt: new Date().toISOString(),
  };
  return role === 'tool' ? { ...base, role, name: 'echo', status: 'ok' } : { ...base, role };
}

describe('RedisSessionStore', () => {
  it('costs two Redis round trips for a single-hop turn: the lease rides on the opening, the release on the last write', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    const sessions = new RedisSessionStore(
      { host: '127.0.0.1', port: proxy.port },
      { keyPrefix: redis.prefix() },
    );
    try {
      await sessions.ping();
      proxy.resetCount();
      const question = userMessage('what is 2 + 2?') as Extract<MessageItem, { role: 'user' }>;
      const lease = await sessions.acquireLease('s1', { ttlMs: 30_000, waitMs: 1_000, withOpenTurn: true });
      expect(proxy.roundTrips).toBe(0);
      const opened = await sessions.openTurn('s1', question, {
        turn: runningTurn(question.id),
        limit: 50,
        lease,
      });
      // Another holder now finds the session busy.
      await expect(sessions.acquireLease('s1', { ttlMs: 30_000, waitMs: 0 })).rejects.toThrow(/busy/i);
      proxy.resetCount();
      // The agent's reply is sent without waiting; the answer follows it in the same round trip.
      const replied = sessions.append('s1', [reply('tool', '4')], { lease, turn: runningTurn(question.id) });
      await sessions.append('s1', [reply('assistant', '2 + 2 = 4')], {
        lease,
        turn: turnRecord(question.id),
        releaseLease: true,
      });
      await replied;
      await lease.release();
      expect(proxy.roundTrips).toBe(1);
      // Released by the last write: the next holder gets the session at once.
      const next = await sessions.acquireLease('s1', { ttlMs: 30_000, waitMs: 0 });
      await next.release();
      expect(opened).toEqual({ kind: 'opened', messages: [question] });
      expect(await sessions.read('s1')).toHaveLength(3);
    } finally {
      await sessions.close();
      await proxy.stop();
    }
  });

  it('writes compact records under its prefix, with every session key on the idle expiry', async () => {
    const prefix = redis.prefix();
    const sessions = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix, idleTtlSeconds: 600 });
    try {
      const lease = await sessions.acquireLease('a:b/c', { ttlMs: 30_000, waitMs: 0 });
      const hi = userMessage('hi');
      const finished = turnRecord('x');
      await sessions.append('a:b/c', [hi], { turn: finished });
      // Beside the session's keys, the replica's liveness key (its leases name it).
      const all = (await redis.keys(prefix)).sort();
      const keys = all.filter((key) => !key.startsWith(`${prefix}replica:`));
      expect(all).toHaveLength(keys.length + 1);
      expect(keys).toEqual(
        ['lease', 'messages', 'turns'].map((name) => `${prefix}session:{a%3Ab%2Fc}:${name}`),
      );
      const [, messagesKey, turnsKey] = keys as [string, string, string];
      // Compact: `[3, role, id, content, createdAt (ms), …]` and `[3, turnId, userMessageId, status, …]`.
      const message = JSON.parse((await redis.admin.lindex(messagesKey, 0)) ?? '');
      expect(message.slice(0, 4)).toEqual([3, 'u', expect.any(String), 'hi']);
      expect(typeof message[4]).toBe('number');
      const turn = JSON.parse((await redis.admin.lindex(turnsKey, 0)) ?? '');
      expect(turn.slice(0, 4)).toEqual([3, finished.turnId, 'x', 'completed']);
      // What was written reads back as written.
      expect(await sessions.read('a:b/c')).toEqual([hi]);
      expect(await sessions.listTurns('a:b/c')).toEqual([finished]);
      for (const key of [messagesKey, turnsKey]) {
        expect(await redis.admin.pttl(key)).toBeGreaterThan(590_000);
      }
      expect(await sessions.delete('a:b/c')).toBe(true);
      await lease.release();
      await sessions.close();
      // Closed, the replica removes its liveness key too.
      expect(await redis.keys(prefix)).toEqual([]);
    } finally {
      await sessions.close();
    }
  });

  it('reports a corrupt record as CorruptRecordError naming the key, and keeps serving other sessions', async () => {
    const prefix = redis.prefix();
    const sessions = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
    try {
      await sessions.append('broken', [userMessage('fine')], { turn: turnRecord('x') });
      await sessions.append('healthy', [userMessage('fine')]);
      const messagesKey = `${prefix}session:{broken}:messages`;
      await redis.admin.rpush(messagesKey, '{not json');
      const error = await sessions.read('broken').catch((caught: unknown) => caught);
      expect(CorruptRecordError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(messagesKey);
      expect((error as Error).message).toContain('not valid JSON');
      await expect(sessions.read('broken', { limit: 1 })).rejects.toThrow(/corrupt/);
      await expect(sessions.read('healthy')).resolves.toHaveLength(1);

      await redis.admin.rpush(`${prefix}session:{broken}:turns`, JSON.stringify({ v: 3, turn: {} }));
      await expect(sessions.listTurns('broken')).rejects.toThrow(/unsupported schema version 3/);
      await redis.admin.rpush(
        `${prefix}session:{healthy}:messages`,
        JSON.stringify({ v: 1, message: { role: 'user' } }),
      );
      await expect(sessions.read('healthy')).rejects.toMatchObject({ code: 'corrupt_record' });
      // Compact records are checked as closely: an unknown role, a newer frame, a turn that fails the schema.
      await sessions.delete('healthy');
      await redis.admin.rpush(`${prefix}session:{healthy}:messages`, '[3,"x","m1","hi",1]');
      await expect(sessions.read('healthy')).rejects.toThrow(/role must be u, t or a/);
      await sessions.delete('healthy');
      await redis.admin.rpush(`${prefix}session:{healthy}:messages`, '[4,"u","m1","hi",1]');
      await expect(sessions.read('healthy')).rejects.toThrow(/unsupported compact record version 4/);
      await redis.admin.rpush(`${prefix}session:{healthy}:turns`, '[3,"t1","m1","sleeping",1,null,null,[]]');
      await expect(sessions.listTurns('healthy')).rejects.toThrow(/status/);
      expect(await sessions.delete('broken')).toBe(true);
      await sessions.append('broken', [userMessage('fresh start')]);
      expect(await sessions.read('broken')).toHaveLength(1);
    } finally {
      await sessions.close();
    }
  });

  it('shares leases between stores on different connections, as replicas do', async () => {
    const keyPrefix = redis.prefix();
    const replicaA = new RedisSessionStore(REDIS_URL, { keyPrefix });
    const replicaB = new RedisSessionStore(REDIS_URL, { keyPrefix });
    try {
      const held = await replicaA.acquireLease('s1', { ttlMs: 5_000, waitMs: 0 });
      await expect(replicaB.acquireLease('s1', { ttlMs: 5_000, waitMs: 150 })).rejects.toMatchObject({
        code: 'session_busy',
      });
      const waiting = replicaB.acquireLease('s1', { ttlMs: 5_000, waitMs: 3_000 });
      await held.release();
      const taken = await waiting;
      expect(await held.renew()).toBe(false);
      await taken.release();
    } finally {
      await Promise.all([replicaA.close(), replicaB.close()]);
    }
  });
});

describe('RedisMemoryStore', () => {
  it('reports a corrupt value as CorruptRecordError naming the key', async () => {
    const prefix = redis.prefix();
    const memory = new RedisMemoryStore(REDIS_URL, { keyPrefix: prefix });
    try {
      await memory.set('app', 'counter', 1);
      const key = `${prefix}memory:{app}:counter`;
      expect(JSON.parse((await redis.admin.get(key)) ?? '')).toEqual({ v: 1, value: 1 });
      await redis.admin.set(key, '{"value":1}');
      await expect(memory.get('app', 'counter')).rejects.toThrow(`Stored record '${key}' is corrupt`);
      await expect(memory.update('app', 'counter', (n: number) => n + 1, 0)).rejects.toMatchObject({
        code: 'corrupt_record',
      });
      await memory.set('app', 'counter', 5);
      expect(await memory.update('app', 'counter', (n: number) => n + 1, 0)).toBe(6);
    } finally {
      await memory.close();
    }
  });

  it('leaves no key behind once a namespace is cleared, and expires the index with its values', async () => {
    const prefix = redis.prefix();
    const memory = new RedisMemoryStore(REDIS_URL, { keyPrefix: prefix });
    try {
      await memory.set('session:s1', 'a', 1);
      await memory.update('session:s1', 'b', (n: number) => n + 1, 0);
      await memory.clear('session:s1');
      expect(await redis.keys(prefix)).toEqual([]);
      await memory.set('session:s2', 'short', 1, { ttlSeconds: 0.2 });
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(await redis.keys(prefix)).toEqual([]);
    } finally {
      await memory.close();
    }
  });

  it('works through createRedisStores, whose stores share one client closed by the last close()', async () => {
    const { sessionStore, memoryStore } = createRedisStores(REDIS_URL, { keyPrefix: redis.prefix() });
    await sessionStore.append('s1', [userMessage('hi')]);
    await memoryStore.set('app', 'k', 'v');
    await sessionStore.close();
    expect(await memoryStore.get('app', 'k')).toBe('v');
    await memoryStore.close();
    await expect(memoryStore.ping()).rejects.toMatchObject({ code: 'store_unavailable' });
  });
});
