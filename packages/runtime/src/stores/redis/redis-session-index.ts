import { z } from 'zod';
import { decodePageCursor, encodePageCursor } from '../page-cursor.js';
import type { ListSessionsOptions, SessionListPage, SessionSummary } from '../session-store.js';
import { execResults } from './exec-results.js';
import { DROP_STALE_ENTRIES, TOUCH_SESSION_INDEX } from './lua-scripts.js';
import type { RedisConnection } from './redis-connection.js';
import { sessionIndexKey, sessionKeys } from './redis-keys.js';

/** The most sessions a tenant's index keeps for `listSessions` (the least recently active beyond it drop out). */
export const MAX_LISTED_SESSIONS = 10_000;
/** A `listSessions` cursor: the score and id of the last session listed. */
const ListCursorSchema = z.tuple([z.number().finite(), z.string().min(1)]);
/** How many reads a listing makes, at most, to skip the entries of sessions that are gone. */
const MAX_LIST_READS = 5;

/** An index entry as `ZREVRANGE … WITHSCORES` answers: session id, score (as Redis writes it). */
type Entry = [sessionId: string, score: string];

/**
 * @internal The per-tenant index of sessions behind `RedisSessionStore.listSessions`:
 * a sorted set of session ids scored by when each last started a turn.
 *
 * Bounded: it keeps the newest {@link MAX_LISTED_SESSIONS} entries, forgets
 * entries idle for longer than the idle time when written, and expires
 * when the tenant has been idle as long. A listing checks that each listed
 * session still exists and drops the entries of those gone. The index has
 * its own hash tag: on a Cluster it is written beside a session's script,
 * on a single Redis the opening script writes it too (see `OPEN_TURN`).
 */
export class RedisSessionIndex {
  readonly #connection: RedisConnection;
  readonly #keyPrefix: string;

  constructor(connection: RedisConnection, keyPrefix: string) {
    this.#connection = connection;
    this.#keyPrefix = keyPrefix;
  }

  /**
   * Records that `sessionId` started a turn now. One command: called in the
   * same tick as the turn's own script, it leaves in the same write
   * (ioredis pipelines them) and costs no round trip of its own.
   */
  touch(sessionId: string, tenant: string | undefined, idleTtlMs: number): Promise<unknown> {
    const now = Date.now();
    return this.#connection.run('index a session', (client) =>
      TOUCH_SESSION_INDEX.run(
        client,
        [sessionIndexKey(this.#keyPrefix, tenant)],
        [sessionId, now, now - idleTtlMs, idleTtlMs, MAX_LISTED_SESSIONS],
      ),
    );
  }

  /** The index key of `tenant`, for a delete to remove its entry in the same pipeline. */
  keyOf(tenant: string | undefined): string {
    return sessionIndexKey(this.#keyPrefix, tenant);
  }

  /**
   * The tenant's sessions, most recently active first (ties by id,
   * descending). Each is checked to still exist (`LLEN`, pipelined), and the
   * entries of those gone are dropped.
   */
  async list({ limit, cursor, tenant }: ListSessionsOptions): Promise<SessionListPage> {
    const index = this.keyOf(tenant);
    let after = cursor === undefined ? undefined : decodePageCursor(cursor, ListCursorSchema);
    const sessions: SessionSummary[] = [];
    let lastListed: [number, string] | undefined;
    for (let read = 0; read < MAX_LIST_READS; read++) {
      const wanted = limit + 1 - sessions.length;
      const candidates = await this.#entriesAfter(index, after, wanted);
      if (candidates.length === 0) return { sessions };
      // One command per session in the same tick (one write with auto-pipelining), not a pipeline: on a
      // Cluster the sessions live in different slots.
      const counts = await this.#connection.run('count the messages of sessions', (client) =>
        Promise.all(
          candidates.map(([sessionId]) => client.llen(sessionKeys(this.#keyPrefix, sessionId).messages)),
        ),
      );
      const stale: string[] = [];
      for (const [position, [sessionId, score]] of candidates.entries()) {
        const messageCount = Number(counts[position]);
        if (messageCount === 0) {
          stale.push(sessionId, score);
          continue;
        }
        if (sessions.length === limit && lastListed) {
          return { sessions, nextCursor: encodePageCursor(lastListed) };
        }
        sessions.push({ sessionId, lastActiveAt: Number(score), messageCount });
        lastListed = [Number(score), sessionId];
      }
      if (stale.length > 0) {
        await this.#connection.run('drop gone sessions from the index', (client) =>
          DROP_STALE_ENTRIES.run(client, [index], stale),
        );
      }
      const [lastId, lastScore] = candidates[candidates.length - 1] as Entry;
      after = [Number(lastScore), lastId];
      if (candidates.length < wanted) return { sessions };
    }
    return { sessions, nextCursor: encodePageCursor(after) };
  }

  /**
   * Up to `count` entries after `after` (score, id) in listing order: by
   * score, then by id, both descending, as `ZREVRANGE` orders them. Entries
   * tied with `after` come from a read of the tie alone.
   */
  async #entriesAfter(index: string, after: [number, string] | undefined, count: number): Promise<Entry[]> {
    if (!after) {
      const flat = await this.#connection.run('list sessions', (client) =>
        client.zrevrange(index, 0, count - 1, 'WITHSCORES'),
      );
      return pairs(flat);
    }
    const [score, lastId] = after;
    const [tied, older] = (await this.#connection.run('list sessions', (client) =>
      execResults(
        client
          .pipeline()
          .zrevrangebyscore(index, score, score, 'WITHSCORES')
          .zrevrangebyscore(index, `(${score}`, '-inf', 'WITHSCORES', 'LIMIT', 0, count),
      ),
    )) as [string[], string[]];
    // Redis orders ties by their bytes, so compare bytes too (not UTF-16 code units).
    const boundary = Buffer.from(lastId);
    const sameScore = pairs(tied).filter(
      ([sessionId]) => Buffer.compare(Buffer.from(sessionId), boundary) < 0,
    );
    return [...sameScore, ...pairs(older)].slice(0, count);
  }
}

/** `[member, score, member, score, …]` as pairs. */
function pairs(flat: readonly string[]): Entry[] {
  const result: Entry[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) result.push([flat[i] as string, flat[i + 1] as string]);
  return result;
}
