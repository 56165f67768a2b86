import { type MessageItem, SessionBusyError } from '@switchboard/core';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisSessionStore } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { lapse, settlesBefore } from '../support/settles-before.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { runningTurn, toolMessage, userMessage } from './session-store.contract.js';

const redis = useRedis();

/** A 30 s lease: long enough that a takeover before it lapses can only come from the replica’s liveness. */
const LEASE = { ttlMs: 30_000, waitMs: 8_000 } as const;
const LIVENESS_TTL_MS = 300;

describe('a lease whose replica is gone', () => {
  it('is taken over by a waiting replica long before the lease ttl, once the dead replica’s liveness key expired', {
    timeout: LEASE.ttlMs + 10_000,
  }, async () => {
    const prefix = redis.prefix();
    // Replica A on a client of its own, so that it can die without closing anything gracefully.
    const client = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const dying = new RedisSessionStore(client, { keyPrefix: prefix, livenessTtlMs: LIVENESS_TTL_MS });
    const survivor = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix, livenessTtlMs: LIVENESS_TTL_MS });
    try {
      const held = await dying.acquireLease('orphaned', LEASE);
      expect(held.token).toMatch(/^replica_.+\//);
      // Alive, A keeps its session: another replica waiting briefly is refused.
      await expect(survivor.acquireLease('orphaned', { ttlMs: 30_000, waitMs: 600 })).rejects.toThrow(
        SessionBusyError,
      );
      // A dies: no release, no more liveness refreshes.
      client.disconnect();
      const leaseKey = `${prefix}session:{orphaned}:lease`;
      const leaseLapses = lapse(await redis.admin.pttl(leaseKey));
      // Willing to wait past the lease's own expiry: only the order tells the liveness takeover from it.
      const taken = await settlesBefore(
        survivor.acquireLease('orphaned', { ttlMs: LEASE.ttlMs, waitMs: 2 * LEASE.ttlMs }),
        leaseLapses,
        "the orphaned lease's own expiry",
      );
      expect(await redis.admin.get(leaseKey)).toBe(taken.token);
      await taken.release();
    } finally {
      await dying.close();
      await survivor.close();
    }
  });

  it('is never taken from a live replica, however long it holds the session', async () => {
    const prefix = redis.prefix();
    const holder = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix, livenessTtlMs: LIVENESS_TTL_MS });
    const waiter = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix, livenessTtlMs: LIVENESS_TTL_MS });
    try {
      const held = await holder.acquireLease('busy', LEASE);
      // Many liveness intervals: the waiter polls and checks the holder's key all along.
      await expect(waiter.acquireLease('busy', { ttlMs: 30_000, waitMs: 1_500 })).rejects.toThrow(
        SessionBusyError,
      );
      expect(await held.renew()).toBe(true);
      await held.release();
      const next = await waiter.acquireLease('busy', { ttlMs: 30_000, waitMs: 0 });
      await next.release();
    } finally {
      await holder.close();
      await waiter.close();
    }
  });

  it('fences a replica that was only paused: once taken over, its writes are refused and its renewal reports the loss', async () => {
    const prefix = redis.prefix();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    // Long command timeout: the paused replica's write waits for the proxy, as a stopped process's would.
    const paused = new RedisSessionStore(
      { host: '127.0.0.1', port: proxy.port },
      { keyPrefix: prefix, livenessTtlMs: LIVENESS_TTL_MS, commandTimeoutMs: 20_000 },
    );
    const other = new RedisSessionStore(REDIS_URL, { keyPrefix: prefix, livenessTtlMs: LIVENESS_TTL_MS });
    try {
      const question = userMessage('hello') as Extract<MessageItem, { role: 'user' }>;
      const lease = await paused.acquireLease('paused', LEASE);
      await paused.openTurn('paused', question, { turn: runningTurn(question.id), limit: 10, lease });
      // Paused: nothing it sends reaches Redis, its liveness refreshes included.
      proxy.hold();
      const lateWrite = paused.append('paused', [toolMessage('written after waking up')], { lease });
      const lateRenewal = lease.renew();
      const taken = await other.acquireLease('paused', LEASE);
      // Wakes up: what it sent while paused reaches Redis now, after the takeover.
      proxy.resume();
      await expect(lateWrite).rejects.toThrow(/was taken over by another turn/);
      expect(await lateRenewal).toBe(false);
      expect((await other.read('paused')).map((message) => message.content)).toEqual(['hello']);
      expect(await redis.admin.get(`${prefix}session:{paused}:lease`)).toBe(taken.token);
      await taken.release();
    } finally {
      proxy.resume();
      await paused.close();
      await other.close();
      await proxy.stop();
    }
  });
});
