import { RedisSessionStore } from '../../src/redis.js';
import { REDIS_URL } from './redis.js';
import { startTcpProxy } from './tcp-proxy.js';

/** A Redis session store whose Redis has stopped answering, see {@link startStalledStore}. */
export interface StalledStore {
  /**
   * Resolves once `count` calls, made one after the other, have each waited
   * out the whole command timeout and failed.
   */
  commandTimeouts(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A session store with `commandTimeoutMs` (the stores' default when left
 * out), connected to Redis through a link that then stops forwarding: each
 * of its calls waits out its command timeout, as the calls of a store caught
 * in a Redis stall do. A sentinel for "a call that waited for Redis", slowed
 * by a busy machine as much as the calls it is raced against.
 */
export async function startStalledStore({
  commandTimeoutMs,
}: {
  commandTimeoutMs?: number;
} = {}): Promise<StalledStore> {
  const redis = new URL(REDIS_URL);
  const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  const store = new RedisSessionStore(
    { host: '127.0.0.1', port: proxy.port },
    commandTimeoutMs === undefined ? {} : { commandTimeoutMs },
  );
  // Connected and ready first: a call on a link that never connected could fail at once instead.
  await store.ping();
  proxy.hold();
  return {
    async commandTimeouts(count: number) {
      for (let call = 0; call < count; call += 1) await store.ping().catch(() => {});
    },
    async close() {
      proxy.resume();
      await store.close();
      await proxy.stop();
    },
  };
}
