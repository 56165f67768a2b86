import { createServer } from 'node:net';
import { StoreUnavailableError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { createRedisStores, RedisMemoryStore, RedisSessionStore } from '../../src/redis.js';
import { RedisConnection } from '../../src/stores/redis/redis-connection.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { startSilentServer, startTcpProxy } from '../support/tcp-proxy.js';
import { userMessage } from './session-store.contract.js';

const redis = useRedis();

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** Runs `call`, expecting StoreUnavailableError; resolves with how long the rejection took. */
async function timeUnavailable(call: () => Promise<unknown>, port: number): Promise<number> {
  const startedAt = Date.now();
  const error = await call().then(
    () => new Error('expected the call to fail'),
    (caught: unknown) => caught,
  );
  expect(StoreUnavailableError.isInstance(error), String(error)).toBe(true);
  expect((error as Error).message).toContain(`Redis at 127.0.0.1:${port} is unavailable`);
  return Date.now() - startedAt;
}

describe('Redis stores during an outage', () => {
  it('fail promptly with StoreUnavailableError when nothing listens', async () => {
    const port = await closedPort();
    const options = { keyPrefix: redis.prefix(), commandTimeoutMs: 500 };
    const sessions = new RedisSessionStore({ host: '127.0.0.1', port }, options);
    const memory = new RedisMemoryStore({ host: '127.0.0.1', port }, options);
    try {
      const lease = { ttlMs: 1_000, waitMs: 5_000 };
      const durations = [
        await timeUnavailable(() => sessions.append('s1', [userMessage('hi')]), port),
        await timeUnavailable(() => sessions.read('s1'), port),
        await timeUnavailable(() => sessions.acquireLease('s1', lease), port),
        await timeUnavailable(() => sessions.ping(), port),
        await timeUnavailable(() => memory.update('app', 'n', (n: number) => n + 1, 0), port),
        await timeUnavailable(() => memory.ping(), port),
      ];
      for (const duration of durations) expect(duration).toBeLessThan(1_500);
    } finally {
      await Promise.all([sessions.close(), memory.close()]);
    }
  });

  it('fail within the command timeout when the server accepts but never answers', async () => {
    const silent = await startSilentServer();
    const sessions = new RedisSessionStore(
      { host: '127.0.0.1', port: silent.port },
      { commandTimeoutMs: 300 },
    );
    try {
      const durations = await Promise.all([
        timeUnavailable(() => sessions.read('s1', { limit: 10 }), silent.port),
        timeUnavailable(() => sessions.ping(), silent.port),
      ]);
      for (const duration of durations) {
        expect(duration).toBeGreaterThanOrEqual(250);
        expect(duration).toBeLessThan(1_500);
      }
      expect(await timeUnavailable(() => sessions.exists('s1'), silent.port)).toBeLessThan(1_500);
    } finally {
      await sessions.close();
      await silent.close();
    }
  });

  it('fail each operation Redis holds up at its own deadline, oldest first, though they share one timer', async () => {
    // Operations that never settle, on a connected client: only the connection's deadline can end them.
    const connection = new RedisConnection(REDIS_URL, { commandTimeoutMs: 300 });
    try {
      await connection.run('ping', (client) => client.ping());
      const failed: string[] = [];
      const hung = (name: string) =>
        connection
          .run(name, () => new Promise<never>(() => {}))
          .catch((error: unknown) => {
            expect(error).toBeInstanceOf(StoreUnavailableError);
            failed.push(name);
          });
      const first = hung('first');
      await new Promise((resolve) => setTimeout(resolve, 150));
      // Due 150 ms after the first: the timer that fails the first must be set again for it.
      const second = hung('second');
      await first;
      await second;
      expect(failed).toEqual(['first', 'second']);
      // Nothing pending: the next operation is timed again.
      await hung('third');
      expect(failed).toEqual(['first', 'second', 'third']);
    } finally {
      await connection.close();
    }
  });

  it('recover by themselves when Redis comes back', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    const { sessionStore, memoryStore } = createRedisStores(
      { host: '127.0.0.1', port: proxy.port },
      { keyPrefix: redis.prefix(), commandTimeoutMs: 500 },
    );
    try {
      await sessionStore.append('s1', [userMessage('before')]);
      await memoryStore.set('app', 'k', 'kept');

      await proxy.stop();
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await timeUnavailable(() => sessionStore.read('s1'), proxy.port)).toBeLessThan(1_000);
        expect(await timeUnavailable(() => memoryStore.get('app', 'k'), proxy.port)).toBeLessThan(1_000);
      }

      await proxy.start();
      const startedAt = Date.now();
      let recovered = false;
      while (!recovered && Date.now() - startedAt < 5_000) {
        recovered = await sessionStore.ping().then(
          () => true,
          () => false,
        );
        if (!recovered) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(recovered).toBe(true);
      await sessionStore.append('s1', [userMessage('after')]);
      expect((await sessionStore.read('s1')).map((message) => message.content)).toEqual(['before', 'after']);
      expect(await memoryStore.get('app', 'k')).toBe('kept');
    } finally {
      await Promise.all([sessionStore.close(), memoryStore.close()]);
      await proxy.stop();
    }
  });
});
