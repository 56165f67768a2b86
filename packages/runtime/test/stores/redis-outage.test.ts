import { createServer } from 'node:net';
import { StoreUnavailableError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { createRedisStores, RedisMemoryStore, RedisSessionStore } from '../../src/redis.js';
import { RedisConnection } from '../../src/stores/redis/redis-connection.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { settlesBefore } from '../support/settles-before.js';
import { type StalledStore, startStalledStore } from '../support/stalled-store.js';
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

/** Expects `call` to reject with StoreUnavailableError naming the Redis at `port`. */
async function expectUnavailable(call: Promise<unknown>, port: number): Promise<void> {
  const error = await call.then(
    () => new Error('expected the call to fail'),
    (caught: unknown) => caught,
  );
  expect(StoreUnavailableError.isInstance(error), String(error)).toBe(true);
  expect((error as Error).message).toContain(`Redis at 127.0.0.1:${port} is unavailable`);
}

/**
 * Expects each call to fail as {@link expectUnavailable} says, and to do so before `stalled` has waited out
 * `timeouts` of its command timeouts in a row (started with the call): `what` names that in a failure.
 */
function unavailableBefore(stalled: StalledStore, timeouts: number, what: string, port: number) {
  return (call: Promise<unknown>) =>
    expectUnavailable(settlesBefore(call, stalled.commandTimeouts(timeouts), what), port);
}

describe('Redis stores during an outage', () => {
  it('fail promptly with StoreUnavailableError when nothing listens', async () => {
    const port = await closedPort();
    const options = { keyPrefix: redis.prefix(), commandTimeoutMs: 5_000 };
    const sessions = new RedisSessionStore({ host: '127.0.0.1', port }, options);
    const memory = new RedisMemoryStore({ host: '127.0.0.1', port }, options);
    // Promptly, not by waiting out its command timeout: each call fails before a call with a tenth of that
    // timeout, to a Redis that never answers, gives up.
    const stalled = await startStalledStore({ commandTimeoutMs: 500 });
    const promptly = unavailableBefore(stalled, 1, 'a call waiting out a 500 ms command timeout', port);
    try {
      const lease = { ttlMs: 1_000, waitMs: 5_000 };
      await promptly(sessions.append('s1', [userMessage('hi')]));
      await promptly(sessions.read('s1'));
      await promptly(sessions.acquireLease('s1', lease));
      await promptly(sessions.ping());
      await promptly(memory.update('app', 'n', (n: number) => n + 1, 0));
      await promptly(memory.ping());
    } finally {
      await Promise.all([sessions.close(), memory.close(), stalled.close()]);
    }
  });

  it('fail within the command timeout when the server accepts but never answers', async () => {
    const silent = await startSilentServer();
    const sessions = new RedisSessionStore(
      { host: '127.0.0.1', port: silent.port },
      { commandTimeoutMs: 300 },
    );
    // Within the command timeout: before a twin store with the same timeout has waited it out twice in a row.
    const stalled = await startStalledStore({ commandTimeoutMs: 300 });
    const withinTimeout = unavailableBefore(stalled, 2, 'two 300 ms command timeouts in a row', silent.port);
    try {
      const startedAt = Date.now();
      const failedAfter = (call: Promise<unknown>) => withinTimeout(call).then(() => Date.now() - startedAt);
      const waited = await Promise.all([
        failedAfter(sessions.read('s1', { limit: 10 })),
        failedAfter(sessions.ping()),
      ]);
      // And not before the timeout: nothing answered them.
      for (const ms of waited) expect(ms).toBeGreaterThanOrEqual(250);
      await withinTimeout(sessions.exists('s1'));
    } finally {
      await sessions.close();
      await silent.close();
      await stalled.close();
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
      { keyPrefix: redis.prefix(), commandTimeoutMs: 5_000 },
    );
    try {
      await sessionStore.append('s1', [userMessage('before')]);
      await memoryStore.set('app', 'k', 'kept');

      await proxy.stop();
      // Each call fails at once, not by waiting out its command timeout: before a call with a tenth of that
      // timeout, to a Redis that never answers, gives up.
      const stalled = await startStalledStore({ commandTimeoutMs: 500 });
      const promptly = unavailableBefore(
        stalled,
        1,
        'a call waiting out a 500 ms command timeout',
        proxy.port,
      );
      try {
        for (let attempt = 0; attempt < 5; attempt += 1) {
          await promptly(sessionStore.read('s1'));
          await promptly(memoryStore.get('app', 'k'));
        }
      } finally {
        await stalled.close();
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
