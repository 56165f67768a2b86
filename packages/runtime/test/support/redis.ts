import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { AppOptions } from '../../src/app.js';
import { createRedisStores } from '../../src/redis.js';

/** The Redis the tests use: `REDIS_URL`, or the local default. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** What {@link useRedis} gives a test file. */
export interface RedisTestContext {
  /** A fresh, unique key prefix such as `sbtest:1a2b3c4d5e6f:`; its keys are deleted after the file's tests. */
  prefix(): string;
  /** A client for inspecting or corrupting keys directly (connected once `beforeAll` has run). */
  readonly admin: Redis;
  /** Every key currently under `prefix`. */
  keys(prefix: string): Promise<string[]>;
}

function unreachableMessage(reason: string): string {
  const where =
    process.env.CI === 'true'
      ? 'CI=true, so Redis must be provided by the CI environment'
      : 'start a local redis-server';
  return (
    `These tests need Redis, but it is not reachable at ${REDIS_URL} (${reason}). ` +
    `They fail rather than skip: ${where}, or point REDIS_URL at a running server.`
  );
}

async function scanKeys(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(
      cursor,
      'MATCH',
      `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
      'COUNT',
      1000,
    );
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/**
 * Registers `beforeAll` / `afterAll` hooks for a test file that needs Redis:
 * checks that Redis answers (failing every test with a clear message when it
 * does not, locally and in CI alike) and deletes the keys of every prefix the
 * file handed out.
 */
export function useRedis(): RedisTestContext {
  const prefixes: string[] = [];
  const admin = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let connectionError: Error | undefined;
  admin.on('error', (error: Error) => {
    connectionError = error;
  });

  beforeAll(async () => {
    try {
      await admin.connect();
      await admin.ping();
    } catch (error) {
      const reason = connectionError ?? error;
      throw new Error(unreachableMessage(reason instanceof Error ? reason.message : String(reason)));
    }
  });

  afterAll(async () => {
    if (admin.status !== 'ready') return;
    for (const prefix of prefixes) {
      const keys = await scanKeys(admin, prefix);
      if (keys.length > 0) await admin.del(...keys);
    }
    await admin.quit();
  });

  return {
    admin,
    prefix() {
      const prefix = `sbtest:${randomBytes(6).toString('hex')}:`;
      prefixes.push(prefix);
      return prefix;
    },
    keys: (prefix) => scanKeys(admin, prefix),
  };
}

/** Where one test's app keeps its sessions: for suites that run once in memory and once on Redis. */
export interface StoreSetup {
  name: string;
  stores(): Pick<AppOptions, 'sessionStore' | 'memoryStore'>;
}

/** In-memory stores, and Redis stores under a fresh prefix of `redis` for each app. */
export function storeSetups(redis: RedisTestContext): readonly StoreSetup[] {
  return [
    { name: 'in-memory stores', stores: () => ({}) },
    { name: 'Redis stores', stores: () => createRedisStores(REDIS_URL, { keyPrefix: redis.prefix() }) },
  ];
}
