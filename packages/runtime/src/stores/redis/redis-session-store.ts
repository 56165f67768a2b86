import {
  type MessageItem,
  SessionBusyError,
  StoreUnavailableError,
  type UserMessage,
} from '@switchboard/core';
import { keepAliveUntil, type TurnRecord } from '../../turns/turn-record.js';
import type {
  AppendOptions,
  HistoryPage,
  LeaseOptions,
  ListSessionsOptions,
  OpenedTurn,
  OpenTurnOptions,
  ReadPageOptions,
  SessionLease,
  SessionListPage,
  SessionStore,
} from '../session-store.js';
import { APPEND_SESSION, OPEN_TURN } from './lua-scripts.js';
import { decodeMessages, decodeTurn, decodeTurns, encodeMessageRecord, encodeTurnRecord } from './records.js';
import { RedisCancelChannel } from './redis-cancel-channel.js';
import { RedisConnection, type RedisSource } from './redis-connection.js';
import { checkEvictionPolicy } from './redis-eviction.js';
import { type SessionKeys, sessionKeys } from './redis-keys.js';
import { RedisLeases } from './redis-leases.js';
import { DEFAULT_LIVENESS_TTL_MS, ReplicaLiveness } from './redis-liveness.js';
import { RedisRunningIndex } from './redis-running-index.js';
import { MAX_LISTED_SESSIONS, RedisSessionIndex } from './redis-session-index.js';
import { checkRedisSessionOptions, type RedisSessionStoreOptions } from './redis-session-options.js';
import { readSessionPage } from './redis-session-page.js';
import { SessionWindowCache } from './window-cache.js';

export type { RedisSessionStoreOptions } from './redis-session-options.js';

// What the session scripts answer when another turn holds the session's lease.
const LEASE_LOST = -1;
// What the opening script answers when it was to take the lease and another replica holds it.
const LEASE_BUSY = -2;

/**
 * A {@link SessionStore} in Redis, so that any number of server replicas can
 * serve any session.
 *
 * Each session is a list of message records and a list of turn records
 * (compact JSON, see `compactRecords`, checked field by field or with zod
 * when read), a hash of the `Idempotency-Key`s it has seen, and a lease
 * key, all under one hash tag (one cluster slot). Opening a turn is one Lua
 * script (take the lease, check the previous turn, push the user message and
 * the running turn's record, read the window); each later write is another
 * (push messages, replace the turn's record in place, and with the last one
 * release the lease). Each is atomic and one round trip, so a single-hop turn
 * waits for two. Cancels between replicas travel over pub/sub, on a
 * connection opened when the first listener subscribes.
 *
 * For `listSessions` each tenant has a sorted set of its session ids, scored
 * by when each last started a turn: opening a turn updates it, on a single
 * Redis within the opening script, on a Cluster (where the index lives in
 * another slot) with one more command sent together with it (so no extra
 * round trip either way). It
 * keeps the newest 10 000 entries, forgets entries idle
 * for longer than the idle time, and expires when the tenant has been idle as
 * long; entries of sessions found gone when listed are removed. A session
 * kept alive past its idle time only by a long pending approval drops out of
 * the list (it stays readable by id). `readPage` reads a page of messages
 * with `LRANGE` (two round trips: the page, then its turns), never the whole
 * session.
 *
 * Each turn reads the window again, so the store keeps the last window it
 * read per session (up to `windowCacheChars`) and decodes only the records
 * that are new to it: a message is parsed and validated about once per process rather
 * than once per turn. A record is reused only when its stored text is
 * unchanged, so a write by another replica is never missed. Messages read
 * are frozen, as in the in-memory store.
 *
 * While Redis is unreachable every call fails promptly with
 * `StoreUnavailableError`; the client reconnects by itself.
 *
 * @example
 * ```ts
 * const sessions = new RedisSessionStore(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { idleTtlSeconds: 3600 });
 * const app = new App({ name: 'support', agents, sessionStore: sessions });
 * ```
 */
export class RedisSessionStore implements SessionStore {
  readonly specificationVersion = 'v2' as const;
  readonly #connection: RedisConnection;
  readonly #leases: RedisLeases;
  readonly #keyPrefix: string;
  readonly #idleTtlMs: number;
  readonly #windows: SessionWindowCache;
  readonly #index: RedisSessionIndex;
  readonly #running: RedisRunningIndex;
  readonly #compact: boolean;
  readonly #allowEviction: boolean;
  readonly #cancels: RedisCancelChannel;

  /**
   * @param source - an ioredis client (left open on `close()`), or a URL or ioredis options
   *   from which the store creates its own lazily connecting client (quit on `close()`).
   */
  constructor(
    source: RedisSource,
    {
      keyPrefix = 'switchboard:',
      idleTtlSeconds = 86_400,
      commandTimeoutMs,
      windowCacheChars = 8_000_000,
      compactRecords = true,
      livenessTtlMs = DEFAULT_LIVENESS_TTL_MS,
      allowEviction = false,
    }: RedisSessionStoreOptions = {},
  ) {
    checkRedisSessionOptions({ livenessTtlMs, idleTtlSeconds });
    this.#keyPrefix = keyPrefix;
    this.#compact = compactRecords;
    this.#allowEviction = allowEviction;
    this.#idleTtlMs = Math.round(idleTtlSeconds * 1000);
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#windows = new SessionWindowCache({ maxChars: windowCacheChars });
    this.#index = new RedisSessionIndex(this.#connection, keyPrefix);
    this.#running = new RedisRunningIndex(this.#connection, keyPrefix);
    this.#leases = new RedisLeases(
      this.#connection,
      (sessionId) => this.#keys(sessionId),
      this.#idleTtlMs,
      new ReplicaLiveness(this.#connection, keyPrefix, livenessTtlMs),
    );
    this.#cancels = new RedisCancelChannel(this.#connection, keyPrefix);
  }

  /**
   * Checks the previous turn and the request key, then stores the user
   * message and the turn: one script call, which also takes the lease when
   * it was acquired `withOpenTurn` (should another replica hold the session,
   * it waits for the lease as usual, then opens).
   */
  async openTurn(
    sessionId: string,
    userMessage: UserMessage,
    { turn, limit, lease, requestKey, idleTtlMs = this.#idleTtlMs, tenant }: OpenTurnOptions,
  ): Promise<OpenedTurn> {
    const keys = this.#keys(sessionId);
    const args: Array<string | number> = [
      idleTtlMs,
      limit > 0 ? limit : 0,
      lease?.token ?? '',
      encodeMessageRecord(userMessage, this.#compact),
      encodeTurnRecord(turn, this.#compact),
      requestKey?.key ?? '',
      requestKey ? `${turn.turnId} ${requestKey.fingerprint}` : '',
      this.#leases.taking(lease),
    ];
    // On a single Redis the script marks the session running and touches its index itself (see OPEN_TURN).
    const running = this.#running.inScripts;
    let scriptKeys: string[];
    if (running === undefined) scriptKeys = this.#scriptKeys(keys);
    else {
      const now = Date.now();
      args.push(sessionId, now, now - idleTtlMs, idleTtlMs, MAX_LISTED_SESSIONS);
      scriptKeys = [keys.messages, keys.turns, keys.lease, keys.requests, running, this.#index.keyOf(tenant)];
    }
    const open = () =>
      this.#connection.run('open a turn', (client) => OPEN_TURN.run(client, scriptKeys, args), {
        write: true,
      });
    const opened = open();
    // Counted as taken from now on: should the reply be lost (a timeout), the lease's release still goes
    // out (a compare-and-delete, harmless if the script never ran) rather than the session staying blocked.
    const taking = args[7] !== '';
    if (taking) this.#leases.took(lease, 'opening');
    let reply: [number, unknown];
    if (running === undefined) {
      // In the same tick as the script, so pipelined with it: one round trip for all three.
      const indexed = this.#index.touch(sessionId, tenant, idleTtlMs);
      this.#running.note(sessionId, true);
      reply = (await openedThenIndexed(opened, indexed)) as [number, unknown];
    } else reply = (await opened) as [number, unknown];
    if (taking && reply[0] === LEASE_BUSY) {
      // Another replica holds the session: wait for it the usual way, then open.
      await this.#leases.wait(lease, { retaking: true });
      args[7] = '';
      reply = (await open()) as [number, unknown];
    } else if (taking) this.#leases.took(lease, 'held');
    const [code, payload] = reply;
    if (code === LEASE_LOST) throw new SessionBusyError({ sessionId, leaseLost: true });
    if (code === 2) {
      const [turnId = '', fingerprint = ''] = String(payload).split(' ');
      return { kind: 'duplicate', turnId, fingerprint };
    }
    if (code === 1) {
      return { kind: 'unfinished', turn: decodeTurn(`${keys.turns} (last)`, String(payload)) };
    }
    if (typeof payload === 'string')
      return { kind: 'opened', messages: this.#windows.decode(keys.messages, payload) };
    this.#windows.forget(keys.messages);
    return {
      kind: 'opened',
      messages: Array.isArray(payload) ? decodeMessages(keys.messages, payload as string[]) : [],
    };
  }

  /**
   * Appends messages (and replaces the current turn's record) in one script
   * call, refreshing the expiry; with `releaseLease`, the same call releases
   * the lease.
   */
  async append(
    sessionId: string,
    messages: readonly MessageItem[],
    { turn, lease, idleTtlMs, releaseLease = false }: AppendOptions = {},
  ): Promise<void> {
    if (messages.length === 0 && !turn) return;
    const keys = this.#keys(sessionId);
    const release = releaseLease && lease !== undefined;
    const args: Array<string | number> = [
      this.#expiryMs(turn, idleTtlMs),
      messages.length,
      lease?.token ?? '',
      release ? '1' : '',
    ];
    for (const message of messages) args.push(encodeMessageRecord(message, this.#compact));
    const running = turn ? this.#running.inScripts : undefined;
    if (turn) args.push(encodeTurnRecord(turn, this.#compact));
    // Whether a sweeper should look at this session should its replica stop: in the script, or pipelined with it.
    if (running !== undefined) args.push(sessionId, turn?.status === 'running' ? Date.now() : '');
    if (release) this.#leases.releasing(lease);
    const scriptKeys = this.#scriptKeys(keys, running);
    const appended = this.#connection.run(
      'append to a session',
      (client) => APPEND_SESSION.run(client, scriptKeys, args),
      { write: true },
    );
    if (turn && running === undefined) this.#running.note(sessionId, turn.status === 'running');
    const [code] = (await appended) as [number];
    if (code === LEASE_LOST) throw new SessionBusyError({ sessionId, leaseLost: true });
    if (release) this.#leases.released(lease);
  }

  /** The last `limit` messages (all when omitted), oldest first, in one `LRANGE`. */
  async read(sessionId: string, { limit }: { limit?: number } = {}): Promise<MessageItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const { messages } = this.#keys(sessionId);
    const raws = await this.#connection.run('read a session', (client) =>
      client.lrange(messages, limit === undefined ? 0 : -limit, -1),
    );
    return decodeMessages(messages, raws);
  }

  /**
   * A page of the session's history: its messages with one `LRANGE` (with
   * the counts and the last turn, in one script), then its turns with another.
   */
  async readPage(sessionId: string, options: ReadPageOptions): Promise<HistoryPage> {
    return readSessionPage(this.#connection, this.#keys(sessionId), options);
  }

  /** The tenant's sessions, most recently active first (see {@link RedisSessionIndex.list}). */
  runningSessions(olderThanMs: number, limit: number): Promise<string[]> {
    return this.#running.stale(olderThanMs, limit);
  }

  forgetRunning(storeId: string): Promise<void> {
    return this.#running.forget(storeId);
  }

  takeSweep(owner: string, ttlMs: number): Promise<boolean> {
    return this.#running.takeSweep(owner, ttlMs);
  }

  listSessions(options: ListSessionsOptions): Promise<SessionListPage> {
    return this.#index.list(options);
  }

  /** The session's last turn record, in one `LINDEX`. */
  async lastTurn(sessionId: string): Promise<TurnRecord | undefined> {
    const { turns } = this.#keys(sessionId);
    const raw = await this.#connection.run('read the last turn of a session', (client) =>
      client.lindex(turns, -1),
    );
    return raw === null ? undefined : decodeTurn(`${turns} (last)`, raw);
  }

  /** The session's turn records, oldest first. */
  async listTurns(sessionId: string): Promise<TurnRecord[]> {
    const { turns } = this.#keys(sessionId);
    const raws = await this.#connection.run('list the turns of a session', (client) =>
      client.lrange(turns, 0, -1),
    );
    return decodeTurns(turns, raws);
  }

  /** Whether the session has any message (and has not expired). */
  async exists(sessionId: string): Promise<boolean> {
    const { messages } = this.#keys(sessionId);
    return (await this.#connection.run('check a session', (client) => client.exists(messages))) > 0;
  }

  /**
   * Deletes the session's messages, turns and request keys (not its lease),
   * and its entry in `tenant`'s index, in one round trip; false when there was nothing.
   */
  async delete(sessionId: string, { tenant }: { tenant?: string } = {}): Promise<boolean> {
    const { messages, turns, requests } = this.#keys(sessionId);
    this.#windows.forget(messages);
    // Two commands in the same tick (one write with auto-pipelining), not a pipeline: the index has its own
    // hash tag, so on a Cluster it may live on another node.
    const [deleted] = await this.#connection.run('delete a session', (client) =>
      Promise.all([client.del(messages, turns, requests), client.zrem(this.#index.keyOf(tenant), sessionId)]),
    );
    return Number(deleted) > 0;
  }

  /** Waits for exclusive use of the session across every process sharing this Redis. */
  acquireLease(sessionId: string, options: LeaseOptions): Promise<SessionLease> {
    return this.#leases.acquire(sessionId, options);
  }

  /** Publishes a cancel to every replica listening on this prefix. */
  publishCancel(sessionId: string, turnId?: string): Promise<void> {
    return this.#cancels.publish(sessionId, turnId);
  }

  /**
   * Calls `listener` for every cancel published on this prefix, by any
   * replica. The first listener opens a subscriber connection, which
   * subscribes again after a reconnect.
   */
  onCancel(listener: (sessionId: string, turnId: string | undefined) => void): () => void {
    return this.#cancels.listen(listener);
  }

  /** Throws `StoreUnavailableError` unless Redis answers and, after it refused a write, takes writes again. */
  ping(): Promise<void> {
    return this.#connection.ping(`${this.#keyPrefix}readiness-probe`);
  }

  /**
   * Checks that Redis will not evict the sessions (`maxmemory-policy`
   * `noeviction`): throws `ConfigurationError` otherwise, unless
   * `allowEviction`; returns what an operator should know.
   */
  checkConfiguration(): Promise<readonly string[]> {
    return checkEvictionPolicy(this.#connection, this.#allowEviction);
  }

  /**
   * Rejects local lease waiters, deletes this replica's liveness key, closes
   * the subscriber, and quits the client if the store created it.
   */
  async close(): Promise<void> {
    const leasesClosed = this.#leases.close();
    this.#cancels.close();
    await leasesClosed;
    await this.#connection.close();
  }

  #keys(sessionId: string): SessionKeys {
    return sessionKeys(this.#keyPrefix, sessionId);
  }

  #scriptKeys(keys: SessionKeys, running?: string): string[] {
    return running === undefined
      ? [keys.messages, keys.turns, keys.lease, keys.requests]
      : [keys.messages, keys.turns, keys.lease, keys.requests, running];
  }

  /** How long the session lives after this write: the idle time, or longer while an approval is pending (-1: no expiry). */
  #expiryMs(turn: TurnRecord | undefined, idleTtlMs = this.#idleTtlMs): number {
    const kept = turn ? keepAliveUntil(turn) : undefined;
    if (kept === null) return -1;
    return kept === undefined ? idleTtlMs : Math.max(idleTtlMs, Math.ceil(kept - Date.now()));
  }
}

/**
 * The opening's reply, once the session index's touch (pipelined with it)
 * is answered too. Should the touch fail after the opening was stored, the
 * failure must not claim that nothing was stored.
 */
async function openedThenIndexed(opened: Promise<unknown>, indexed: Promise<unknown>): Promise<unknown> {
  const [opening, index] = await Promise.allSettled([opened, indexed]);
  if (opening.status === 'rejected') throw opening.reason;
  if (index.status === 'rejected') {
    const error = index.reason;
    if (!StoreUnavailableError.isInstance(error)) throw error;
    throw new StoreUnavailableError({ message: (error as Error).message, cause: error });
  }
  return opening.value;
}
