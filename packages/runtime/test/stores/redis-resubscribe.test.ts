import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigChange } from '../../src/config/config-store.js';
import { RedisConfigStore } from '../../src/stores/redis/redis-config-store.js';
import { REDIS_URL, useRedis } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const redis = useRedis();
const LIMITS = { maxItemsPerScope: 10, maxVersionsKept: 10 };

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));
afterEach(() => {
  unhandled.length = 0;
});

function change(keyword: string): ConfigChange {
  return {
    type: 'keywords',
    name: 'billing',
    value: { keywords: [keyword] },
    updatedAt: new Date().toISOString(),
  };
}

/** Resolves once `condition()` holds, polling every 10 ms. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A config store behind a proxy whose change subscription is live, and a writer on another connection. */
async function subscribedStore() {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
  const keyPrefix = redis.prefix();
  const store = new RedisConfigStore({ host: '127.0.0.1', port: proxy.port }, { keyPrefix });
  const writer = new RedisConfigStore(REDIS_URL, { keyPrefix });
  const seen: number[] = [];
  store.onChange((_scope, version) => seen.push(version));
  while (seen.length === 0) {
    await writer.write('tenant:a', change('before'), LIMITS);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { proxy, store, writer, seen };
}

describe('a Redis config store’s change subscription across a reconnection', () => {
  it('says it is back only once subscribed again: a change written at that moment arrives', async () => {
    const { proxy, store, writer, seen } = await subscribedStore();
    const written: number[] = [];
    store.onResync(() => {
      void writer.write('tenant:a', change('after'), LIMITS).then((result) => {
        if (result.ok) written.push(result.entry.version);
      });
    });
    try {
      await proxy.stop();
      await proxy.start();
      await until(() => written.length === 1);
      await until(() => seen.includes(written[0] as number));
      expect(written).toHaveLength(1);
    } finally {
      await store.close();
      await writer.close();
      await proxy.stop();
    }
  });

  it('closes at that moment without leaving a command to fail unhandled', async () => {
    const { proxy, store, writer } = await subscribedStore();
    let closed: Promise<void> | undefined;
    store.onResync(() => {
      closed = store.close();
    });
    try {
      await proxy.stop();
      await proxy.start();
      await until(() => closed !== undefined);
      await closed;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      await writer.close();
      await proxy.stop();
    }
  });
});
