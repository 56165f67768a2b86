// Redis bytes per 3-turn session for the churn bench: Switchboard's Redis store against the hand-written
// storage of the same turns (one list of messages and one of turn records per session), under throwaway
// key prefixes that are deleted afterwards.
import { randomBytes } from 'node:crypto';
import { createRedisStores } from '@switchboard/runtime/redis';
import { Redis } from 'ioredis';
import { createBaselineTurn } from './baseline-turn.js';
import { churnApp, churnMessage, churnSession, TURNS_PER_SESSION } from './churn-workload.js';
import { deleteKeys } from './redis-keys.js';

/** Bytes Redis holds for the sessions of one run, by kind of key. */
export interface RedisFootprint {
  sessions: number;
  bytesPerSession: number;
  keysPerSession: number;
  /**
   * Bytes per session by kind of key: the key's last `:` part (`messages`, `turns`…), `index` for keys
   * shared by sessions, `events` for the turn event log's streams (one a turn).
   */
  byKind: Record<string, number>;
  /** Bytes per session of the session's own data (every kind but `events`): kept for the session's idle time. */
  sessionBytes: number;
  /** Bytes per session of the turn event log: kept for its retention (one hour after a turn's last event). */
  eventLogBytes: number;
}

/** The kind of a key under the bench's prefix (see {@link RedisFootprint.byKind}). */
function kindOf(key: string): string {
  if (key.endsWith('}')) return 'index';
  if (key.includes(':events:')) return 'events';
  return key.slice(key.lastIndexOf(':') + 1);
}

/** Sums `MEMORY USAGE` (every element sampled) over the keys under `prefix`, grouped by kind. */
async function footprint(client: Redis, prefix: string, sessions: number): Promise<RedisFootprint> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  const byKind: Record<string, number> = {};
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    for (const key of found) {
      const usage = Number((await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      const kind = kindOf(key);
      byKind[kind] = (byKind[kind] ?? 0) + usage / sessions;
      bytes += usage;
      keys += 1;
    }
    cursor = next;
  } while (cursor !== '0');
  const eventLogBytes = byKind.events ?? 0;
  return {
    sessions,
    bytesPerSession: bytes / sessions,
    keysPerSession: keys / sessions,
    byKind,
    sessionBytes: bytes / sessions - eventLogBytes,
    eventLogBytes,
  };
}

/** Runs `sessions` 3-turn sessions through Switchboard on Redis and measures what Redis keeps. */
async function switchboardFootprint(redisUrl: string, sessions: number): Promise<RedisFootprint> {
  // As long as the default prefix `switchboard:`, so that keys weigh what they weigh in production.
  const keyPrefix = `sb-${randomBytes(4).toString('hex')}:`;
  const stores = createRedisStores(redisUrl, { keyPrefix });
  const app = churnApp(stores);
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    for (let index = 0; index < sessions * TURNS_PER_SESSION; index++) {
      const result = await app.chat({
        sessionId: churnSession('redis', index),
        message: churnMessage(index),
      });
      if (result.status !== 'completed') throw new Error(`churn turn ${index} ended ${result.status}`);
    }
    // The event log's last batches are sent after their turns answered: measured once they are stored.
    await stores.eventLog.idle();
    return await footprint(client, keyPrefix, sessions);
  } finally {
    await app.close();
    client.disconnect();
    await deleteKeys(redisUrl, keyPrefix);
  }
}

/**
 * The baseline: the hand-written turn, persisting each session as it would by
 * hand (a list of message JSON and a list of turn-record JSON, with an idle
 * expiry), in one pipeline per turn.
 */
async function baselineFootprint(redisUrl: string, sessions: number): Promise<RedisFootprint> {
  const keyPrefix = `sb-${randomBytes(4).toString('hex')}:`;
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const turn = createBaselineTurn();
  let counter = 0;
  try {
    for (let index = 0; index < sessions * TURNS_PER_SESSION; index++) {
      const sessionId = churnSession('redis', index);
      const content = churnMessage(index);
      const reply = await turn(sessionId, content);
      const now = new Date().toISOString();
      const messages = `${keyPrefix}session:{${sessionId}}:messages`;
      const turns = `${keyPrefix}session:{${sessionId}}:turns`;
      await client
        .multi()
        .rpush(
          messages,
          JSON.stringify({ id: `m${counter++}`, role: 'user', content, createdAt: now }),
          JSON.stringify({
            id: `m${counter++}`,
            role: 'tool',
            name: 'agent',
            content: reply,
            createdAt: now,
          }),
          JSON.stringify({ id: `m${counter++}`, role: 'assistant', content: reply, createdAt: now }),
        )
        .rpush(
          turns,
          JSON.stringify({ turnId: `t${counter++}`, status: 'completed', startedAt: now, endedAt: now }),
        )
        .expire(messages, 86_400)
        .expire(turns, 86_400)
        .exec();
    }
    return await footprint(client, keyPrefix, sessions);
  } finally {
    client.disconnect();
    await deleteKeys(redisUrl, keyPrefix);
  }
}

/** Redis bytes per 3-turn session, Switchboard and the hand-written baseline. */
export async function measureRedisFootprint(
  redisUrl: string,
  sessions: number,
): Promise<{ switchboard: RedisFootprint; baseline: RedisFootprint }> {
  return {
    baseline: await baselineFootprint(redisUrl, sessions),
    switchboard: await switchboardFootprint(redisUrl, sessions),
  };
}
