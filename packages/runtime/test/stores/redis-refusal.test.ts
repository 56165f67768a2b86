import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/agent.js';
import type { App } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';
import { captureLogs } from '../../src/testing/log-capture.js';
import { createApp, echoAgent, postJson } from '../support/app-fixtures.js';
import { startOwnRedis } from '../support/redis-cluster.js';

// Its own redis-server with little memory and no eviction: the tests fill it until it refuses writes.
let redis: { url: string; stop(): Promise<void> };
let admin: Redis;
beforeAll(async () => {
  redis = await startOwnRedis(['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction']);
  admin = new Redis(redis.url);
}, 30_000);
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});

const fillers: string[] = [];

/**
 * Writes filler keys until Redis refuses even a small write, and keeps it
 * so. Large values first, then small ones: Redis counts a command's own
 * arguments in the memory it checks, so a small write can pass right after a
 * large one was refused. The large ones go through connections of their
 * own, closed before the small ones. Then small writes again after a pause,
 * until a pause frees nothing: Redis's client cron (ten times a second)
 * shrinks idle connections' buffers, which freed room for a write the test
 * expects refused (it did, on a loaded machine).
 */
async function fillMemory(): Promise<void> {
  for (const size of [65_536, 4_096]) {
    const bulk = new Redis(redis.url);
    try {
      await fillWith(bulk, size);
    } finally {
      await bulk.quit();
    }
  }
  for (let round = 0; round < 20; round += 1) {
    const before = fillers.length;
    for (const size of [256, 16]) await fillWith(admin, size);
    if (round > 0 && fillers.length === before) return;
    await delay(300);
  }
}

async function fillWith(client: Redis, size: number): Promise<void> {
  for (;;) {
    const key = `filler:${fillers.length}`;
    try {
      await client.set(key, 'x'.repeat(size));
      fillers.push(key);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('OOM')) return;
      throw error;
    }
  }
}

/** Frees what {@link fillMemory} took (DEL is allowed when Redis is out of memory). */
async function freeMemory(): Promise<void> {
  while (fillers.length > 0) await admin.del(...fillers.splice(0, 500));
}

interface ErrorBody {
  error: { code: string; message: string; outcome?: string; turnId?: string };
}

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await freeMemory();
});

/** An app on the test's Redis whose lines are captured; `hog` fills Redis's memory while it runs. */
function redisApp(keyPrefix: string) {
  const logs = captureLogs();
  const hog = defineAgent({
    name: 'hog',
    description: 'fills Redis while it works, so the turn cannot store its reply',
    run: async (input) => {
      await fillMemory();
      return `the answer to ${input}`;
    },
  });
  app = createApp({
    agents: [echoAgent(), hog],
    logger: logs.logger,
    // A liveness key living a minute: refreshing it is refused while Redis is full, and one that expired
    // meanwhile (1.2 s by default, a slow fill on a loaded machine) would free room for a turn's write.
    ...createRedisStores(redis.url, { keyPrefix, commandTimeoutMs: 1_000, livenessTtlMs: 60_000 }),
  }).app;
  return { app, logs };
}

describe('a Redis out of memory (noeviction)', () => {
  it('answers every chat 503 not_stored (nothing stored), is not ready until memory is freed, then ready at once', async () => {
    const { app, logs } = redisApp('oom:');
    expect((await app.request('/v1/chat', postJson({ message: 'hello', sessionId: 'ses-old' }))).status).toBe(
      200,
    );
    const before = (await (await app.request('/v1/sessions/ses-old')).json()) as { messages: unknown[] };
    expect((await app.request('/readyz')).status).toBe(200);

    await fillMemory();
    const sessions = ['ses-old', 'ses-new-1', 'ses-new-2', 'ses-new-3', 'ses-new-4', 'ses-new-5'];
    const responses = await Promise.all(
      sessions.map((sessionId, index) =>
        app.request('/v1/chat', postJson({ message: `private note ${index}`, sessionId })),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses, `sessions answered ${statuses.join(', ')}`).toEqual(statuses.map(() => 503));
    for (const response of responses) {
      const { error } = (await response.json()) as ErrorBody;
      expect(error).toMatchObject({ code: 'store_unavailable', outcome: 'not_stored' });
      expect(error.message).toMatch(/nothing of this request was stored/);
    }
    // Truthful: nothing of those messages is in Redis.
    const after = (await (await app.request('/v1/sessions/ses-old')).json()) as { messages: unknown[] };
    expect(after.messages).toEqual(before.messages);
    expect((await app.request('/v1/sessions/ses-new-1')).status).toBe(404);
    // PING answers, but the app's writes are refused: not ready.
    expect((await app.request('/readyz')).status).toBe(503);
    expect((await app.request('/readyz')).status).toBe(503);

    await freeMemory();
    expect((await app.request('/readyz')).status).toBe(200);
    const again = await app.request(
      '/v1/chat',
      postJson({ message: 'private note 0', sessionId: 'ses-old' }),
    );
    expect(again.status).toBe(200);

    // No line holds a message or an answer (the refused scripts' arguments carried both).
    const text = logs.lines.join('\n');
    expect(text).toMatch(/OOM command not allowed/);
    expect(text).not.toMatch(/private note|echo: hello/);
  });

  it('answers outcome unknown when a write of the turn was stored before one was refused; the advice names the Idempotency-Key only when one was sent', async () => {
    const { app, logs } = redisApp('oom-late:');
    const keyed = await app.request(
      '/v1/chat',
      postJson({ message: 'hog: private plan', sessionId: 'ses-keyed' }, { 'idempotency-key': 'key-1' }),
    );
    expect(keyed.status).toBe(503);
    const keyedBody = (await keyed.json()) as ErrorBody;
    expect(keyedBody.error).toMatchObject({
      code: 'store_unavailable',
      outcome: 'unknown',
      turnId: expect.any(String),
    });
    expect(keyedBody.error.message).toContain('Retry with the same Idempotency-Key');
    // Truthful: the message was stored (the turn's opening), its answer was not.
    const history = (await (await app.request('/v1/sessions/ses-keyed')).json()) as {
      messages: { role: string; content: string }[];
    };
    expect(history.messages.map((message) => message.role)).toEqual(['user']);
    await freeMemory();

    const unkeyed = await app.request(
      '/v1/chat',
      postJson({ message: 'hog: private idea', sessionId: 'ses-plain' }),
    );
    expect(unkeyed.status).toBe(503);
    const unkeyedBody = (await unkeyed.json()) as ErrorBody;
    expect(unkeyedBody.error.outcome).toBe('unknown');
    expect(unkeyedBody.error.message).not.toContain('same Idempotency-Key');
    expect(unkeyedBody.error.message).toMatch(/Send each message with an Idempotency-Key header/);

    const text = logs.lines.join('\n');
    expect(text).toMatch(/OOM command not allowed/);
    expect(text).not.toMatch(/private plan|private idea|the answer to/);
  });
});
