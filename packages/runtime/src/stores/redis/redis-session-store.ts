import { ConfigurationError, type MessageItem } from '@switchboard/core';
import type { ChainableCommander } from 'ioredis';
import type {
  AppendOptions,
  LeaseOptions,
  SessionLease,
  SessionStore,
  TurnRecord,
} from '../session-store.js';
import { execResults } from './exec-results.js';
import { decodeList, encodeRecord, MessageRecordSchema, TurnRecordEnvelopeSchema } from './records.js';
import { RedisConnection, type RedisSource, type RedisStoreOptions } from './redis-connection.js';
import { type SessionKeys, sessionKeys } from './redis-keys.js';
import { RedisLeases } from './redis-leases.js';

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions extends RedisStoreOptions {
  /** A session with no write for this long expires, in Redis, with all its keys (default 86 400, one day). */
  idleTtlSeconds?: number;
}

/**
 * A {@link SessionStore} in Redis, so that any number of server replicas can
 * serve any session.
 *
 * Each session is a list of message records and a list of turn records
 * (`{ v: 1, … }` JSON, validated with zod when read) plus a lease key.
 * Appends are one `RPUSH`, the orchestrator's window one `LRANGE`; a write
 * and the reads or expiry refreshes that go with it travel as one MULTI
 * transaction, so a single-hop turn costs five round trips: acquire the
 * lease, append the user message and read the window, append the agent's
 * reply, append the answer with the turn record, release the lease.
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

  /**
   * @param source - an ioredis client (left open on `close()`), or a URL or ioredis options
   *   from which the store creates its own lazily connecting client (quit on `close()`).
   */
  constructor(
    source: RedisSource,
    { keyPrefix = 'switchboard:', idleTtlSeconds = 86_400, commandTimeoutMs }: RedisSessionStoreOptions = {},
  ) {
    if (!(idleTtlSeconds > 0) || !Number.isFinite(idleTtlSeconds)) {
      throw new ConfigurationError({
        message: `idleTtlSeconds must be a positive number of seconds, got ${idleTtlSeconds}`,
      });
    }
    this.#keyPrefix = keyPrefix;
    this.#idleTtlMs = Math.round(idleTtlSeconds * 1000);
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#leases = new RedisLeases(this.#connection, (sessionId) => this.#keys(sessionId).lease);
  }

  /** Appends messages (and a turn record) in one transaction, refreshing the session's idle expiry. */
  async append(
    sessionId: string,
    messages: readonly MessageItem[],
    { turn }: AppendOptions = {},
  ): Promise<void> {
    if (messages.length === 0 && !turn) return;
    const keys = this.#keys(sessionId);
    await this.#connection.run('append to a session', (client) =>
      execResults(this.#queueWrite(client.multi(), keys, messages, turn)),
    );
  }

  /** The last `limit` messages (all when omitted), oldest first, in one `LRANGE`. */
  async read(sessionId: string, { limit }: { limit?: number } = {}): Promise<MessageItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const { messages } = this.#keys(sessionId);
    const raws = await this.#connection.run('read a session', (client) =>
      client.lrange(messages, limit === undefined ? 0 : -limit, -1),
    );
    return this.#decodeMessages(messages, raws);
  }

  /** Appends, refreshes the expiry and reads the last `limit` messages in one transaction (one round trip). */
  async appendAndRead(
    sessionId: string,
    messages: readonly MessageItem[],
    { limit }: { limit: number },
  ): Promise<MessageItem[]> {
    const keys = this.#keys(sessionId);
    const replies = await this.#connection.run('append to and read a session', (client) => {
      const batch = this.#queueWrite(client.multi(), keys, messages);
      if (limit > 0) batch.lrange(keys.messages, -limit, -1);
      return execResults(batch);
    });
    return limit > 0 ? this.#decodeMessages(keys.messages, replies.at(-1) as string[]) : [];
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

  /** Queues the pushes and the expiry refresh of every session key (a missing key ignores its PEXPIRE). */
  #queueWrite(
    batch: ChainableCommander,
    keys: SessionKeys,
    messages: readonly MessageItem[],
    turn?: TurnRecord,
  ): ChainableCommander {
    if (messages.length > 0)
      batch.rpush(keys.messages, ...messages.map((message) => encodeRecord({ message })));
    if (turn) batch.rpush(keys.turns, encodeRecord({ turn }));
    return batch.pexpire(keys.messages, this.#idleTtlMs).pexpire(keys.turns, this.#idleTtlMs);
  }

  #decodeMessages(key: string, raws: readonly string[]): MessageItem[] {
    return decodeList(key, raws, MessageRecordSchema).map((record) => record.message);
  }
}
