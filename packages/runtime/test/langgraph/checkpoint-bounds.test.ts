import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { RequestContext } from '@switchboard/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type CheckpointBackend,
  memoryCheckpointBackend,
  redisCheckpointBackend,
  SwitchboardCheckpointSaver,
} from '../../src/langgraph.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();
const connection = new Redis(REDIS_URL, { lazyConnect: true });
afterAll(async () => {
  await connection.quit();
});

const metadata = { source: 'loop' as const, step: 0, parents: {} };

/** Runs `fn` as a request of `tenant` would. */
function as<T>(tenant: string, fn: () => Promise<T>): Promise<T> {
  const context = new RequestContext({
    sessionId: 'thread-1',
    requestId: `req-${tenant}`,
    tenantId: tenant,
    signal: new AbortController().signal,
    memory: () => {
      throw new Error('no memory in this test');
    },
  });
  return RequestContext.run(context, fn);
}

const config = { configurable: { thread_id: 'thread-1', checkpoint_ns: '' } };

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}

const backends: [string, () => CheckpointBackend][] = [
  ['memory', () => memoryCheckpointBackend()],
  ['Redis', () => redisCheckpointBackend(connection, { keyPrefix: redis.prefix() })],
];

describe.each(backends)('SwitchboardCheckpointSaver on %s', (_name, backend) => {
  it('keeps tenants apart: the same thread id is two threads, listed, read and deleted separately', async () => {
    const saver = new SwitchboardCheckpointSaver({ backend: backend() });
    const secret = { ...emptyCheckpoint(), id: uuid6(1), channel_values: { notes: 'acme only' } };
    secret.channel_versions = { notes: 1 };
    await as('acme', () => saver.put(config, secret, metadata, { notes: 1 }));

    expect(await as('globex', () => saver.getTuple(config))).toBeUndefined();
    expect(await as('globex', () => collect(saver.list({})))).toEqual([]);
    await as('globex', () => saver.deleteThread('thread-1'));

    const own = await as('acme', () => saver.getTuple(config));
    expect(own?.checkpoint.channel_values).toEqual({ notes: 'acme only' });
    expect((await as('acme', () => collect(saver.list({})))).map((tuple) => tuple.checkpoint.id)).toEqual([
      secret.id,
    ]);
    // Without a request (no tenant) is a tenant of its own too.
    expect(await saver.getTuple(config)).toBeUndefined();
  });

  it('keeps at most maxCheckpoints per thread and frees the values only pruned checkpoints referred to', async () => {
    const saver = new SwitchboardCheckpointSaver({ backend: backend(), maxCheckpoints: 3 });
    let parent: RunnableConfig = config;
    const ids: string[] = [];
    for (let step = 0; step < 6; step += 1) {
      const checkpoint = {
        ...emptyCheckpoint(),
        id: uuid6(step),
        channel_values: { count: step, fixed: 'same' },
      };
      checkpoint.channel_versions = { count: step + 1, fixed: 1 };
      ids.push(checkpoint.id);
      parent = await as('acme', () =>
        saver.put(
          parent,
          checkpoint,
          { ...metadata, step },
          step === 0 ? { count: 1, fixed: 1 } : { count: step + 1 },
        ),
      );
    }
    const kept = await as('acme', () => collect(saver.list(config)));
    expect(kept.map((tuple) => tuple.checkpoint.id)).toEqual(ids.slice(3).reverse());
    // The unchanged channel, written once by the first (pruned) checkpoint, is still there for the kept ones.
    expect(kept.map((tuple) => tuple.checkpoint.channel_values)).toEqual([
      { count: 5, fixed: 'same' },
      { count: 4, fixed: 'same' },
      { count: 3, fixed: 'same' },
    ]);
  });

  it('stores a checkpoint put twice under the same id once, its values intact', async () => {
    const saver = new SwitchboardCheckpointSaver({ backend: backend() });
    const checkpoint = { ...emptyCheckpoint(), id: uuid6(1), channel_values: { notes: 'kept' } };
    checkpoint.channel_versions = { notes: 1 };
    await as('acme', () => saver.put(config, checkpoint, metadata, { notes: 1 }));
    await as('acme', () => saver.put(config, checkpoint, metadata, {}));
    const listed = await as('acme', () => collect(saver.list(config)));
    expect(listed.map((tuple) => tuple.checkpoint.channel_values)).toEqual([{ notes: 'kept' }]);
  });

  it('refuses a checkpoint or writes over the byte limits and stores nothing', async () => {
    const saver = new SwitchboardCheckpointSaver({
      backend: backend(),
      maxCheckpointBytes: 2_000,
      maxWriteBytes: 500,
    });
    const big = { ...emptyCheckpoint(), id: uuid6(1), channel_values: { text: 'x'.repeat(5_000) } };
    big.channel_versions = { text: 1 };
    await expect(as('acme', () => saver.put(config, big, metadata, { text: 1 }))).rejects.toThrow(
      /exceeds the limit of 2000 bytes/,
    );
    expect(await as('acme', () => saver.getTuple(config))).toBeUndefined();

    const small = { ...emptyCheckpoint(), id: uuid6(2) };
    const stored = await as('acme', () => saver.put(config, small, metadata, {}));
    await expect(
      as('acme', () => saver.putWrites(stored, [['text', 'y'.repeat(1_000)]], 'task-1')),
    ).rejects.toThrow(/exceed the limit of 500 bytes/);
    expect((await as('acme', () => saver.getTuple(stored)))?.pendingWrites).toEqual([]);
  });
});

describe('SwitchboardCheckpointSaver on Redis, bounded', () => {
  it('keeps only the values the kept checkpoints refer to, and its keys expire', async () => {
    const keyPrefix = redis.prefix();
    const saver = new SwitchboardCheckpointSaver({
      backend: redisCheckpointBackend(connection, { keyPrefix, ttlSeconds: 3_600 }),
      maxCheckpoints: 2,
    });
    let parent: RunnableConfig = config;
    for (let step = 0; step < 20; step += 1) {
      const checkpoint = {
        ...emptyCheckpoint(),
        id: uuid6(step),
        channel_values: { count: step, fixed: 'same' },
      };
      checkpoint.channel_versions = { count: step + 1, fixed: 1 };
      parent = await as('acme', () =>
        saver.put(
          parent,
          checkpoint,
          { ...metadata, step },
          step === 0 ? { count: 1, fixed: 1 } : { count: step + 1 },
        ),
      );
      await as('acme', () => saver.putWrites(parent, [['count', step + 1]], `task-${step}`));
    }
    const keys = await redis.keys(keyPrefix);
    const blobs = keys.find((key) => key.includes(':blobs:'))!;
    // Two kept checkpoints: their two counts and the one unchanged value.
    expect(await redis.admin.hlen(blobs)).toBe(3);
    const writes = keys.find((key) => key.includes(':w:'))!;
    expect(await redis.admin.hlen(writes)).toBe(2);
    for (const key of keys.filter((each) => !each.includes('lg-threads'))) {
      const ttl = await redis.admin.ttl(key);
      expect(ttl, key).toBeGreaterThan(3_500);
      expect(ttl, key).toBeLessThanOrEqual(3_600);
    }
  });
});
