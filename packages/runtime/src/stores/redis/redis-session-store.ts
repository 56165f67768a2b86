import { ConfigurationError, type MessageItem, SessionBusyError } from '@switchboard/core';
import type { Redis } from 'ioredis';
import type {
  AppendOptions,
  LeaseOptions,
  SessionLease,
  SessionStore,
  TurnRecord,
} from '../session-store.js';
import { APPEND_SESSION } from './lua-scripts.js';
import { decodeList, decodeMessages, encodeRecord, TurnRecordEnvelopeSchema } from './records.js';
import { RedisConnection, type RedisSource, type RedisStoreOptions } from './redis-connection.js';
import { type SessionKeys, sessionKeys } from './redis-keys.js';
import { RedisLeases } from './redis-leases.js';
import { SessionWindowCache } from './window-cache.js';

// What APPEND_SESSION answers when another turn holds the session's lease.
const LEASE_LOST = -1;

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions extends RedisStoreOptions {
  /** A session with no write for this long expires, in Redis, with all its keys (default 86 400, one day). */
  idleTtlSeconds?: number;
  /**
   * How many characters of stored message text the store keeps in this
   * process, over all sessions, to decode only what is new in the next window
   * of a session (default 8 000 000, which with the decoded messages is some
   * tens of MB at most; 0 turns the cache off).
   */
  windowCacheChars?: number;
}

/**
 * A {@link SessionStore} in Redis, so that any number of server replicas can
 * serve any session.
 *
 * Each session is a list of message records and a list of turn records
 * (`{ v: 1, … }` JSON, validated with zod when read) plus a lease key.
 * Appends are one `RPUSH`, the orchestrator's window one `LRANGE`; a write
 * and the expiry refreshes and window read that go with it run as one Lua
 * script (atomic, one round trip), so a single-hop turn costs five round
 * trips: acquire the lease, append the user message and read the window,
 * append the agent's reply, append the answer with the turn record, release
 * the lease.
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
  readonly specificationVersion = 'v1' as const;
  readonly #connection: RedisConnection;
  readonly #leases: RedisLeases;
  readonly #keyPrefix: string;
  readonly #idleTtlMs: number;
  readonly #windows: SessionWindowCache;

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
    }: RedisSessionStoreOptions = {},
  ) {
    if (!(idleTtlSeconds > 0) || !Number.isFinite(idleTtlSeconds)) {
      throw new ConfigurationError({
        message: `idleTtlSeconds must be a positive number of seconds, got ${idleTtlSeconds}`,
      });
    }
    this.#keyPrefix = keyPrefix;
    this.#idleTtlMs = Math.round(idleTtlSeconds * 1000);
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#windows = new SessionWindowCache({ maxChars: windowCacheChars });
    this.#leases = new RedisLeases(this.#connection, (sessionId) => this.#keys(sessionId).lease);
  }

  /** Appends messages (and a turn record) in one script call, refreshing the session's idle expiry. */
  async append(
    sessionId: string,
    messages: readonly MessageItem[],
    { turn, lease }: AppendOptions = {},
  ): Promise<void> {
    if (messages.length === 0 && !turn) return;
    const written = await this.#connection.run('append to a session', (client) =>
      this.#write(client, this.#keys(sessionId), messages, { turn, lease, limit: 0 }),
    );
    if (written === LEASE_LOST) throw new SessionBusyError({ sessionId, leaseLost: true });
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

  /** Appends, refreshes the expiry and reads the last `limit` messages in one script call (one round trip). */
  async appendAndRead(
    sessionId: string,
    messages: readonly MessageItem[],
    { limit, lease }: { limit: number; lease?: SessionLease },
  ): Promise<MessageItem[]> {
    const keys = this.#keys(sessionId);
    const windowSize = limit > 0 ? limit : 0;
    const window = await this.#connection.run('append to and read a session', (client) =>
      this.#write(client, keys, messages, { lease, limit: windowSize }),
    );
    if (window === LEASE_LOST) throw new SessionBusyError({ sessionId, leaseLost: true });
    if (typeof window === 'string') return this.#windows.decode(keys.messages, window);
    this.#windows.forget(keys.messages);
    return Array.isArray(window) ? decodeMessages(keys.messages, window as string[]) : [];
  }

  /** The session's turn records, oldest first. */
  async listTurns(sessionId: string): Promise<TurnRecord[]> {
    const { turns } = this.#keys(sessionId);
    const raws = await this.#connection.run('list the turns of a session', (client) =>
      client.lrange(turns, 0, -1),
    );
    return decodeList(turns, raws, TurnRecordEnvelopeSchema).map((record) => record.turn);
  }

  /** Whether the session has any message (and has not expired). */
  async exists(sessionId: string): Promise<boolean> {
    const { messages } = this.#keys(sessionId);
    return (await this.#connection.run('check a session', (client) => client.exists(messages))) > 0;
  }

  /** Deletes the session's messages and turns (not its lease); false when there was nothing. */
  async delete(sessionId: string): Promise<boolean> {
    const { messages, turns } = this.#keys(sessionId);
    this.#windows.forget(messages);
    return (await this.#connection.run('delete a session', (client) => client.del(messages, turns))) > 0;
  }

  /** Waits for exclusive use of the session across every process sharing this Redis. */
  acquireLease(sessionId: string, options: LeaseOptions): Promise<SessionLease> {
    return this.#leases.acquire(sessionId, options);
  }

  /** Throws `StoreUnavailableError` unless Redis answers. */
  ping(): Promise<void> {
    return this.#connection.ping();
  }

  /** Rejects local lease waiters and quits the client if the store created it. */
  async close(): Promise<void> {
    this.#leases.close();
    await this.#connection.close();
  }

  #keys(sessionId: string): SessionKeys {
    return sessionKeys(this.#keyPrefix, sessionId);
  }

  /**
   * Pushes the records and refreshes the expiry of every session key (a
   * missing key ignores its PEXPIRE); with a positive `limit`, resolves to the
   * last `limit` message records, joined as one text or as a list (see `APPEND_SESSION`).
   */
  #write(
    client: Redis,
    keys: SessionKeys,
    messages: readonly MessageItem[],
    { turn, lease, limit }: { turn?: TurnRecord; lease?: SessionLease; limit: number },
  ): Promise<unknown> {
    const args: Array<string | number> = [this.#idleTtlMs, limit, messages.length, lease?.token ?? ''];
    for (const message of messages) args.push(encodeRecord({ message }));
    if (turn) args.push(encodeRecord({ turn }));
    return APPEND_SESSION.run(client, [keys.messages, keys.turns, keys.lease], args);
  }
}
