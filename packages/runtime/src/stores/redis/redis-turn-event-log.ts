import type { Cluster, Redis } from 'ioredis';
import type { TurnEvent } from '../../engine/events.js';
import { compareEventIds, parseEventId } from '../../turns/event-ids.js';
import { sessionStoreId } from '../tenant-sessions.js';
import {
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_MAX_TURN_EVENTS,
  type EventLogRetention,
  type EventReplay,
  type TurnEventLog,
  type TurnLogKey,
} from '../turn-event-log.js';
import { decodeEventEntries, encodeEventEntry, keyIdsJson, type StreamEntries } from './event-entries.js';
import { isCluster, RedisConnection, type RedisSource, type RedisStoreOptions } from './redis-connection.js';
import { RedisScript } from './redis-script.js';

/**
 * Appends a batch of events, each an entry whose id is the event's own
 * (`<part>-<seq>`), trims the stream to about ARGV[1] entries and sets its
 * expiry to ARGV[2] ms. An event whose id is not above the stream's last
 * (a part run again after its replica stopped before storing it) is
 * skipped, never an error for the rest of the batch.
 *
 * With KEYS[2] (a batch that ends a part), the stream is then copied there
 * and renamed back: Redis gives every new stream node 4 KB up front, which a
 * short turn never fills (measured: 4.8 KB a turn of 7 events, 1.9 KB of
 * them data), and a copy holds only what is used. A follower blocked on the
 * stream is still answered after the script, from the renamed stream. Only
 * small streams (one or a few nodes) are copied; before Redis 6.2 (no COPY)
 * nothing is.
 */
const APPEND = new RedisScript(`
for i = 3, #ARGV, 2 do
  redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], ARGV[i], 'e', ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if KEYS[2] and redis.call('XLEN', KEYS[1]) <= 400 and redis.pcall('COPY', KEYS[1], KEYS[2], 'REPLACE') == 1 then
  redis.call('RENAME', KEYS[2], KEYS[1])
end
return 1
`);

/** Options of {@link RedisTurnEventLog}. */
export interface RedisTurnEventLogOptions extends RedisStoreOptions, EventLogRetention {}

/**
 * How long a turn's events may wait to be sent with the next ones: a short
 * part's events all go in one script call, after its end; a long part's
 * reach followers on other replicas at most this late.
 */
export const EVENT_BATCH_MS = 50;

interface Batch {
  /** `id, json, id, json…` waiting to be sent. */
  entries: string[];
  /** A `turn-end` waits among them: send at once. */
  ending: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  queued: boolean;
  sending: boolean;
}

/**
 * A {@link TurnEventLog} in Redis, shared by every replica: each turn's
 * events in a Redis Stream under the session's hash tag
 * (`<prefix>session:{<id>}:events:<turnId>`), trimmed to about
 * `maxEventsPerTurn` entries (`XADD MAXLEN ~`) and expiring `retentionMs`
 * after the turn's last event. A turn's events are sent as they come, one
 * script call per batch (the events of one tick, or those that came while
 * the previous batch was on its way): never awaited by the turn.
 *
 * A follower waits with `XREAD BLOCK` on a connection of its own (one per
 * waiting follower, up to four kept idle for the next), so that it never
 * holds up the stores' shared connection.
 */
export class RedisTurnEventLog implements TurnEventLog {
  readonly #connection: RedisConnection;
  readonly #prefix: string;
  readonly #maxPerTurn: number;
  readonly #retentionMs: number;
  readonly #batches = new Map<string, Batch>();
  readonly #idle: Redis[] = [];
  readonly #busy = new Set<Redis>();
  #warned = false;
  readonly #idleWaiters: Array<() => void> = [];
  #closed = false;
  #lastKey: TurnLogKey | undefined;
  #lastRedisKey = '';
  #lastIds = '';

  constructor(
    source: RedisSource,
    {
      keyPrefix = 'switchboard:',
      commandTimeoutMs,
      maxEventsPerTurn = DEFAULT_MAX_TURN_EVENTS,
      retentionMs = DEFAULT_EVENT_RETENTION_MS,
    }: RedisTurnEventLogOptions = {},
  ) {
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#prefix = keyPrefix;
    this.#maxPerTurn = maxEventsPerTurn;
    this.#retentionMs = retentionMs;
  }

  append(key: TurnLogKey, event: TurnEvent): void {
    if (this.#closed) return;
    const redisKey = this.#keyOf(key);
    let batch = this.#batches.get(redisKey);
    if (!batch) {
      batch = { entries: [], ending: false, timer: undefined, queued: false, sending: false };
      this.#batches.set(redisKey, batch);
    }
    batch.entries.push(event.eventId, encodeEventEntry(event, key, this.#lastIds));
    // A log that cannot keep up keeps the newest events (a follower then gets 410 for the oldest).
    if (batch.entries.length > 2 * this.#maxPerTurn) batch.entries.splice(0, 2 * this.#maxPerTurn);
    if (event.type === 'turn-end') batch.ending = true;
    this.#schedule(redisKey, batch);
  }

  /** Resolves once every event appended so far was sent (or given up on). */
  idle(): Promise<void> {
    if (this.#batches.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async replay(key: TurnLogKey, after: string | undefined): Promise<EventReplay> {
    const redisKey = this.#keyOf(key);
    // The whole stream at most: `MAXLEN ~` keeps it near maxEventsPerTurn.
    const [entries, oldest] = await this.#connection.run('read turn events', async (client) => {
      const results = await client
        .pipeline()
        .xrange(redisKey, after ?? '-', '+')
        .xrange(redisKey, '-', '+', 'COUNT', 1)
        .exec();
      const [read, first] = results ?? [];
      if (read?.[0]) throw read[0];
      return [read?.[1] as StreamEntries, first?.[1] as StreamEntries | undefined];
    });
    if (!oldest || oldest.length === 0) return { kind: 'missing' };
    if (after === undefined) return { kind: 'events', events: decodeEventEntries(entries, key) };
    const [first] = entries;
    if (first && first[0] === after) {
      const [from] = decodeEventEntries([first], key);
      const events = decodeEventEntries(entries.slice(1), key);
      return from ? { kind: 'events', events, from } : { kind: 'events', events };
    }
    const position = parseEventId(after);
    if (!position) return { kind: 'unknown' };
    // Older than the oldest entry it holds: trimmed away, when the stream ever held more than it does (Redis 7
    // says so; before 7, it is assumed).
    const trimmed = await this.#connection.run('read turn events', async (client) =>
      wasTrimmed((await client.xinfo('STREAM', redisKey)) as unknown[]),
    );
    const start = parseEventId(oldest[0]?.[0] ?? '');
    return trimmed && start && compareEventIds(position, start) < 0
      ? { kind: 'expired' }
      : { kind: 'unknown' };
  }

  async waitAfter(
    key: TurnLogKey,
    after: string | undefined,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<TurnEvent[]> {
    if (this.#closed || signal.aborted) return [];
    const redisKey = this.#keyOf(key);
    const blocking = this.#borrow();
    const stop = () => blocking.disconnect();
    signal.addEventListener('abort', stop, { once: true });
    // A Redis that stops answering would hold the read forever: past its block time and a grace, it is dropped.
    const guard = setTimeout(stop, Math.max(1, timeoutMs) + 2_000);
    let healthy = true;
    try {
      const reply = (await blocking.xread(
        'COUNT',
        this.#maxPerTurn,
        'BLOCK',
        Math.max(1, timeoutMs),
        'STREAMS',
        redisKey,
        after ?? '0-0',
      )) as Array<[string, StreamEntries]> | null;
      return reply?.[0] ? decodeEventEntries(reply[0][1], key) : [];
    } catch {
      healthy = false;
      // Redis is down or the follower left: wait a little, so that a follower asking again does not spin.
      if (!signal.aborted && !this.#closed)
        await new Promise((resolve) => setTimeout(resolve, Math.min(timeoutMs, 1_000)));
      return [];
    } finally {
      clearTimeout(guard);
      signal.removeEventListener('abort', stop);
      this.#giveBack(blocking, healthy && !signal.aborted);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // What the last turns appended goes first (each batch at once), within the command timeout.
    for (const [redisKey, batch] of this.#batches) {
      batch.ending = true;
      this.#schedule(redisKey, batch);
    }
    await this.idle();
    this.#closed = true;
    for (const client of [...this.#idle, ...this.#busy]) client.disconnect();
    this.#idle.length = 0;
    this.#busy.clear();
    await this.#connection.close();
  }

  #keyOf(key: TurnLogKey): string {
    if (key === this.#lastKey) return this.#lastRedisKey;
    const storeId = sessionStoreId(key.sessionId, key.tenantId);
    const redisKey = `${this.#prefix}session:{${encodeURIComponent(storeId)}}:events:${encodeURIComponent(key.turnId)}`;
    this.#lastKey = key;
    this.#lastRedisKey = redisKey;
    this.#lastIds = keyIdsJson(key);
    return redisKey;
  }

  /** Sends the batch at once when it ends a part, else within {@link EVENT_BATCH_MS}; never two at a time. */
  #schedule(redisKey: string, batch: Batch): void {
    if (batch.sending || batch.queued) return;
    if (batch.ending) {
      if (batch.timer) clearTimeout(batch.timer);
      batch.timer = undefined;
      batch.queued = true;
      queueMicrotask(() => this.#send(redisKey, batch));
    } else if (!batch.timer) {
      batch.timer = setTimeout(() => this.#send(redisKey, batch), EVENT_BATCH_MS);
    }
  }

  /** Sends a turn's waiting events in one script call; those that come meanwhile go in the next. */
  #send(redisKey: string, batch: Batch): void {
    batch.timer = undefined;
    batch.queued = false;
    if (batch.entries.length === 0) {
      this.#batches.delete(redisKey);
      if (this.#batches.size === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
      return;
    }
    const entries = batch.entries;
    // A part's end (or the log's close): the stream is then compacted, in the same script call.
    const keys = batch.ending ? [redisKey, copyKeyOf(redisKey)] : [redisKey];
    batch.entries = [];
    batch.ending = false;
    batch.sending = true;
    this.#connection
      .run(
        'log turn events',
        (client) => APPEND.run(client, keys, [this.#maxPerTurn, this.#retentionMs, ...entries]),
        { write: true },
      )
      .catch((error: unknown) => {
        // The turn goes on: its stored record stays the truth, and followers read its end from it.
        if (!this.#warned) {
          this.#warned = true;
          process.emitWarning(`Switchboard could not log turn events: ${(error as Error).message}`);
        }
      })
      .finally(() => {
        batch.sending = false;
        if (batch.entries.length > 0) this.#schedule(redisKey, batch);
        else this.#send(redisKey, batch);
      });
  }

  /** A connection for one blocking read: an idle one, or a new duplicate without the command timeout. */
  #borrow(): Redis {
    const client = this.#idle.pop() ?? duplicateForBlocking(this.#connection.client);
    this.#busy.add(client);
    return client;
  }

  #giveBack(client: Redis, reusable: boolean): void {
    this.#busy.delete(client);
    if (reusable && !this.#closed && this.#idle.length < 4) this.#idle.push(client);
    else client.disconnect();
  }
}

/** Where the append script copies a turn's stream to compact it: a key of the same session (hash tag), never kept. */
function copyKeyOf(redisKey: string): string {
  return `${redisKey.slice(0, redisKey.lastIndexOf(':events:'))}:events-copy`;
}

/** Whether an `XINFO STREAM` reply shows entries removed (`entries-added` above `length`; true before Redis 7, which has no count). */
function wasTrimmed(info: unknown[]): boolean {
  const added = info.indexOf('entries-added');
  const length = info.indexOf('length');
  return added < 0 || length < 0 || Number(info[added + 1]) > Number(info[length + 1]);
}

/** A new connection like `client`'s, whose blocking reads the command timeout does not cut short. */
function duplicateForBlocking(client: Redis): Redis {
  if (isCluster(client)) {
    const cluster = client as unknown as Cluster;
    return cluster.duplicate(undefined, {
      redisOptions: { ...cluster.options.redisOptions, commandTimeout: undefined },
    }) as unknown as Redis;
  }
  return client.duplicate({ commandTimeout: undefined });
}
