import {
  ConfigurationError,
  type StoreOutcome,
  StoreUnavailableError,
  SwitchboardError,
} from '@switchboard/core';
import { Cluster, type ClusterNode, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import {
  isNotServingReply,
  isRefusedWriteReply,
  probeSizeOf,
  replyReason,
  withoutArguments,
} from './redis-replies.js';

/**
 * Where a Redis store gets its connection: an existing ioredis client or
 * `Cluster`, a `redis://` URL, ioredis options, or the nodes of a Redis
 * Cluster (`['redis://10.0.0.1:6379', …]` or `[{ host, port }, …]`: any
 * of its nodes, the rest are discovered).
 */
export type RedisSource = Redis | Cluster | string | RedisOptions | readonly ClusterNode[];

/** Options shared by the Redis stores. */
export interface RedisStoreOptions {
  /** Prepended to every key the store writes (default `switchboard:`). */
  keyPrefix?: string;
  /** How long a call waits for Redis before failing with `StoreUnavailableError` (default 2 000 ms). */
  commandTimeoutMs?: number;
  /**
   * Start and serve even though Redis's `maxmemory-policy` lets it evict
   * keys (default false: such a policy fails the start-up and `/readyz`).
   * Evicted keys are sessions and turns lost without an error; allow it only
   * for data you can lose. The start-up log and `/readyz` then say so.
   */
  allowEviction?: boolean;
}

/** The default time a store waits for Redis before failing with `StoreUnavailableError`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2_000;

/**
 * Creates an ioredis client configured to fail fast during an outage and to
 * recover by itself: it connects lazily (on the first command, never on
 * construction), times commands out after `commandTimeoutMs`, never resends a
 * command whose reply was lost (an append must not happen twice), and keeps
 * reconnecting every half second at most for as long as Redis is down. It
 * pipelines automatically: the commands that concurrent requests issue in
 * the same turn of the event loop leave in one write, which under load saves
 * most of the system calls (and Redis's own work) of one write per command.
 * Measured both ways (`tsx bench/redis-pipelining.ts`, and `pnpm bench`'s
 * `redis` variant with each setting): turns run one at a time cost less CPU
 * with it off (about 270–330 against 390–435 µs a turn in process), but
 * under HTTP load, the case it is for, it served more requests per second
 * (1 950–2 100 against 1 700–1 940) at less CPU per request; so it stays on.
 * A client you create yourself for the stores benefits from
 * `enableAutoPipelining: true` in the same way.
 *
 * @example
 * ```ts
 * const client = createRedisClient(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * ```
 */
export function createRedisClient(
  source: string | RedisOptions | readonly ClusterNode[],
  { commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS }: { commandTimeoutMs?: number } = {},
): Redis {
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: commandTimeoutMs,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
  };
  if (Array.isArray(source)) {
    const { lazyConnect, enableAutoPipelining, retryStrategy, ...nodeOptions } = options;
    const clusterOptions: ClusterOptions = {
      lazyConnect,
      enableAutoPipelining,
      clusterRetryStrategy: (attempt) => Math.min(attempt * 50, 500),
      redisOptions: nodeOptions,
    };
    // A Cluster offers the same command methods as a single client; the stores use it as one.
    return new Cluster([...source], clusterOptions) as unknown as Redis;
  }
  return typeof source === 'string'
    ? new Redis(source, options)
    : new Redis({ ...options, ...(source as RedisOptions) });
}

/** True for an ioredis `Cluster` (which the stores otherwise use like a single client). */
export function isCluster(client: Redis | Cluster): boolean {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** An existing client or Cluster given as a source, typed as the client the stores use. */
export function existingClient(source: RedisSource): Redis | undefined {
  if (source instanceof Redis) return source;
  if (source instanceof Cluster) return source as unknown as Redis;
  return undefined;
}

/** The clients stores created (or were handed by `createRedisStores`), with how many stores still use each. */
const ownedClients = new WeakMap<Redis, { users: number }>();

/**
 * @internal Marks a client as owned by `users` stores: the last one to close it quits it.
 */
export function shareOwnership(client: Redis, users: number): void {
  ownedClients.set(client, { users });
}

/** An operation waiting for Redis, with its deadline. */
interface Pending {
  /** Epoch ms past which it fails. */
  dueAt: number;
  description: string;
  fail: ((error: unknown) => void) | undefined;
}

/**
 * @internal A store's access to Redis: runs operations with a deadline and
 * turns connection failures into `StoreUnavailableError`.
 */
export class RedisConnection {
  readonly client: Redis;
  readonly #timeoutMs: number;
  readonly #owned: boolean;
  #lastError: Error | undefined;
  /** Set when Redis refused one of the app's writes (out of memory, …), until a write succeeds again. */
  #refusal: { reason: string; probeBytes: number } | undefined;
  #closed = false;
  /**
   * The operations waiting for Redis, oldest first: one command timeout for all, so the first is always
   * the first due. One timer watches them all (see {@link RedisConnection.run}).
   */
  readonly #pending = new Set<Pending>();
  #watch: ReturnType<typeof setTimeout> | undefined;

  constructor(
    source: RedisSource,
    { commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS }: { commandTimeoutMs?: number } = {},
  ) {
    this.#timeoutMs = commandTimeoutMs;
    const existing = existingClient(source);
    if (existing) {
      this.client = existing;
    } else {
      this.client = createRedisClient(source as string | RedisOptions | readonly ClusterNode[], {
        commandTimeoutMs,
      });
      shareOwnership(this.client, 1);
    }
    this.#owned = ownedClients.has(this.client);
    if (this.client.options.keyPrefix) {
      throw new ConfigurationError({
        message: `The ioredis client has keyPrefix '${this.client.options.keyPrefix}'; pass the prefix as the store's keyPrefix option instead`,
      });
    }
    if (this.#owned) {
      // Without a listener ioredis logs every failed reconnect; the store reports outages through its errors instead.
      this.client.on('error', (error: Error) => {
        this.#lastError = error;
      });
      this.client.on('ready', () => {
        this.#lastError = undefined;
      });
    }
  }

  /** Calls `listener` each time the connection becomes ready again (after a reconnect); returns an unsubscribe function. */
  onReady(listener: () => void): () => void {
    this.client.on('ready', listener);
    return () => this.client.off('ready', listener);
  }

  /** Where Redis is, for error messages. */
  get address(): string {
    if (isCluster(this.client)) return 'the Redis Cluster';
    const { host, port, path } = this.client.options;
    return path ?? `${host ?? '127.0.0.1'}:${port ?? 6379}`;
  }

  /**
   * Runs `operation` against the client. Fails at once while the client is
   * reconnecting, and after the command timeout otherwise, with a
   * `StoreUnavailableError` naming the address and `description`; so does a
   * reply by which Redis refused the command (out of memory, …). With
   * `write`, success shows that Redis takes the app's writes again.
   */
  async run<T>(
    description: string,
    operation: (client: Redis) => Promise<T>,
    { write = false }: { write?: boolean } = {},
  ): Promise<T> {
    const { status } = this.client;
    if (this.#closed || status === 'end')
      throw this.#unavailable(description, 'the store has been closed', undefined, 'not_stored');
    if (status === 'reconnecting' || status === 'close') {
      const reason = `the connection is down (${this.#lastError?.message ?? status})`;
      // Nothing was sent: the command cannot have been applied.
      throw this.#unavailable(description, reason, undefined, 'not_stored');
    }
    // One deadline for the whole operation, which may send several commands one after the other: the
    // client's own commandTimeout times each command alone (a two-command operation would wait twice as long).
    // The deadlines share one timer rather than each making and clearing its own: on Node 20 a timer is an
    // async resource, with the hooks of AsyncLocalStorage run for it, and a Redis turn runs three operations.
    const pending: Pending = { dueAt: Date.now() + this.#timeoutMs, description, fail: undefined };
    try {
      const result = await new Promise<T>((resolve, reject) => {
        pending.fail = reject;
        this.#pending.add(pending);
        this.#watch ??= this.#watchFirst();
        operation(this.client).then(resolve, reject);
      });
      if (write) this.#refusal = undefined;
      return result;
    } catch (error) {
      throw this.#translate(description, error);
    } finally {
      this.#pending.delete(pending);
    }
  }

  /**
   * A timer for the first pending operation's deadline (unreferenced: a pending command keeps the process
   * alive through its socket). When it fires, those past their deadline fail, and it is set again for the
   * next; once nothing is pending, it is not.
   */
  #watchFirst(): ReturnType<typeof setTimeout> | undefined {
    const first = this.#pending.values().next().value as Pending | undefined;
    if (!first) return undefined;
    const timer = setTimeout(
      () => {
        const now = Date.now();
        for (const pending of this.#pending) {
          if (pending.dueAt > now) break;
          this.#pending.delete(pending);
          pending.fail?.(this.#unavailable(pending.description, `no answer within ${this.#timeoutMs} ms`));
        }
        this.#watch = this.#watchFirst();
      },
      Math.max(0, first.dueAt - Date.now()),
    );
    timer.unref?.();
    return timer;
  }

  /**
   * Throws `StoreUnavailableError` unless Redis answers PING in time and,
   * after it refused one of the app's writes, takes a write of the same size
   * again (at `probeKey`, removed at once): PING alone, or a small write,
   * can succeed while the app's writes are still refused.
   */
  async ping(probeKey?: string): Promise<void> {
    await this.run('PING', (client) => client.ping());
    const refusal = this.#refusal;
    if (!refusal || probeKey === undefined) return;
    try {
      await this.run(
        'probe a write after Redis refused one',
        (client) => client.set(probeKey, 'x'.repeat(refusal.probeBytes), 'PX', 1_000),
        { write: true },
      );
    } catch (error) {
      // Still judged by the app's refused write, not by the probe's own (slightly larger) command.
      this.#refusal = refusal;
      throw error;
    }
    await this.run('remove the write probe', (client) => client.del(probeKey)).catch(() => undefined);
  }

  /** Quits the client when the last store using it closes; a client handed in by the caller is left open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const ownership = ownedClients.get(this.client);
    if (!ownership) return;
    ownership.users -= 1;
    if (ownership.users > 0) return;
    ownedClients.delete(this.client);
    if (this.client.status === 'ready') {
      // QUIT lets pending replies arrive; a hung server must not hold up shutdown beyond the command timeout.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.client.quit().catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, this.#timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    }
    this.client.disconnect();
  }

  #translate(description: string, error: unknown): unknown {
    if (!(error instanceof Error) || SwitchboardError.isInstance(error)) return error;
    if (error.name === 'ReplyError') {
      if (!isNotServingReply(error)) return withoutArguments(error);
      const reason = replyReason(error);
      if (isRefusedWriteReply(error)) this.#refusal = { reason, probeBytes: probeSizeOf(error) };
      // Redis answered that it did not run the command: nothing of it was stored.
      return this.#unavailable(description, reason, withoutArguments(error), 'not_stored');
    }
    if (error.message === COMMAND_TIMED_OUT)
      return this.#unavailable(description, `no answer within ${this.#timeoutMs} ms`, error);
    const { code } = error as { code?: unknown };
    if (typeof code === 'string' || isConnectionMessage(error.message))
      return this.#unavailable(description, error.message, error);
    return error;
  }

  #unavailable(
    description: string,
    reason: string,
    cause?: unknown,
    outcome?: StoreOutcome,
  ): StoreUnavailableError {
    return new StoreUnavailableError({
      message: `Redis at ${this.address} is unavailable (${description}): ${reason}`,
      cause,
      outcome,
    });
  }
}

/** ioredis's message when a command outlives its `commandTimeout`. */
const COMMAND_TIMED_OUT = 'Command timed out';

/** ioredis's own connection-failure messages, which carry no error code. */
function isConnectionMessage(message: string): boolean {
  return /Connection is closed|Command timed out|Stream isn't writeable|Reached the max retries per request|connect ETIMEDOUT|Socket closed/i.test(
    message,
  );
}
