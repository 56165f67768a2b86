import type { MessageItem } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { RedisSessionStore } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { runningTurn, turnRecord, userMessage } from './session-store.contract.js';

const redis = useRedis();

/** The session's lease key under `prefix` (see redis-keys.ts: one hash tag per session). */
function leaseKey(prefix: string, sessionId: string): string {
  return `${prefix}session:{${sessionId}}:lease`;
}

async function openedTurn(sessions: RedisSessionStore, sessionId: string) {
  const question = userMessage('what is 2 + 2?') as Extract<MessageItem, { role: 'user' }>;
  const lease = await sessions.acquireLease(sessionId, { ttlMs: 30_000, waitMs: 0 });
  await sessions.openTurn(sessionId, question, { turn: runningTurn(question.id), limit: 10, lease });
  return { question, lease };
}

describe('a Redis lease renewal', () => {
  it('sent while the closing write is on its way leaves no lease behind: the next holder gets the session at once', async () => {
    // The race two replicas hit under plain load: the shared renewal timer fires after the turn's last write
    // (which releases the lease) was sent, and before its reply came back. On one connection the renewal
    // reaches Redis after the release, finds no key, and must not set it again.
    const prefix = redis.prefix();
    const sessions = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
    const other = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
    try {
      const { question, lease } = await openedTurn(sessions, 'raced');
      const answer: MessageItem = {
        id: 'msg_answer',
        role: 'assistant',
        toolCallId: 'call_answer',
        content: '4',
        createdAt: new Date().toISOString(),
      };
      const closing = sessions.append('raced', [answer], {
        lease,
        turn: turnRecord(question.id),
        releaseLease: true,
      });
      const renewing = lease.renew();
      await closing;
      await lease.release();
      await renewing;
      expect(await redis.admin.exists(leaseKey(prefix, 'raced'))).toBe(0);
      // Another replica's next message finds the session free without waiting.
      const next = await other.acquireLease('raced', { ttlMs: 30_000, waitMs: 0 });
      await next.release();
    } finally {
      await sessions.close();
      await other.close();
    }
  });

  it('extends only a lease that still holds its token: a missing key is reported lost, never created again', async () => {
    const prefix = redis.prefix();
    const sessions = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
    try {
      const { lease } = await openedTurn(sessions, 'expired');
      const key = leaseKey(prefix, 'expired');
      expect(await redis.admin.pttl(key)).toBeGreaterThan(0);
      expect(await lease.renew()).toBe(true);
      // As if it expired while Redis was unreachable, with nobody taking it.
      await redis.admin.del(key);
      expect(await lease.renew()).toBe(false);
      expect(await redis.admin.exists(key)).toBe(0);
      // Taken by another holder: lost too, and the other holder keeps it.
      await redis.admin.set(key, 'someone-else', 'PX', 30_000);
      expect(await lease.renew()).toBe(false);
      expect(await redis.admin.get(key)).toBe('someone-else');
      await lease.release();
      expect(await redis.admin.get(key)).toBe('someone-else');
    } finally {
      await sessions.close();
    }
  });

  it('that is gone fences the writer too: a holder that stalled past its lease writes nothing once it wakes', async () => {
    // Stalled past its ttl, the holder's lease expired; another turn took the session and released it again.
    const prefix = redis.prefix();
    const sessions = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix });
    try {
      const { question, lease } = await openedTurn(sessions, 'stalled');
      await redis.admin.del(leaseKey(prefix, 'stalled'));
      const late: MessageItem = {
        id: 'msg_late',
        role: 'assistant',
        toolCallId: 'call_late',
        content: 'too late',
        createdAt: new Date().toISOString(),
      };
      await expect(
        sessions.append('stalled', [late], { lease, turn: turnRecord(question.id), releaseLease: true }),
      ).rejects.toThrow(/was taken over by another turn/);
      expect((await sessions.read('stalled')).map((message) => message.content)).toEqual([question.content]);
      expect(await redis.admin.exists(leaseKey(prefix, 'stalled'))).toBe(0);
    } finally {
      await sessions.close();
    }
  });
});
