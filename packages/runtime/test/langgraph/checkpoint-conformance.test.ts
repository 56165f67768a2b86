/**
 * LangGraph's own conformance suite for checkpointers,
 * `@langchain/langgraph-checkpoint-validation` (the version pinned in
 * package.json), run on the in-memory and the Redis backend: every test of
 * its default spec (put, putWrites, getTuple, list, deleteThread) and its
 * opt-in getDeltaChannelHistory tests. The suite registers its tests through
 * vitest's globals, which this repository does not turn on: they are lent
 * to it before it loads.
 */

import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  memoryCheckpointBackend,
  redisCheckpointBackend,
  SwitchboardCheckpointSaver,
} from '../../src/langgraph.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
const { deltaChannelHistoryTests, specTest } = await import('@langchain/langgraph-checkpoint-validation');

const redis = useRedis();

const memory = {
  checkpointerName: 'SwitchboardCheckpointSaver (memory)',
  createCheckpointer: () => new SwitchboardCheckpointSaver({ backend: memoryCheckpointBackend() }),
};
specTest(memory);
deltaChannelHistoryTests(memory);

const clients: Redis[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
});
const onRedis = {
  checkpointerName: 'SwitchboardCheckpointSaver (Redis)',
  createCheckpointer() {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    clients.push(client);
    // A fresh prefix per checkpointer: the suite wants each one's threads to itself.
    return new SwitchboardCheckpointSaver({
      backend: redisCheckpointBackend(client, { keyPrefix: redis.prefix() }),
    });
  },
};
specTest(onRedis);
deltaChannelHistoryTests(onRedis);
