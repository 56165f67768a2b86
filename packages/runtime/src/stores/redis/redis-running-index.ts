import { isCluster, type RedisConnection } from './redis-connection.js';

/**
 * @internal The sessions whose last turn is running, for the sweeper that
 * recovers turns a stopped replica left behind: a sorted set of session
 * (store) ids scored by when their turn was last written. Marked when a
 * turn opens or is written running, unmarked when it is written otherwise.
 * On a single Redis the session's own scripts write them (see
 * {@link RedisRunningIndex.inScripts}); on a Cluster each is one command
 * sent in the same tick as the session's script, so it leaves in the same
 * write (ioredis pipelines them) and costs no round trip; it is never
 * waited for, and a lost mark only leaves that turn to the next message's
 * recovery, as before the sweeper.
 */
export class RedisRunningIndex {
  readonly #connection: RedisConnection;
  readonly #key: string;
  readonly #lockKey: string;
  /**
   * The index's key where the session scripts may mark and unmark sessions
   * themselves (a single Redis: a script may write keys of other hash tags),
   * saving the two commands of {@link note} per turn; undefined on a Cluster.
   */
  readonly inScripts: string | undefined;

  constructor(connection: RedisConnection, keyPrefix: string) {
    this.#connection = connection;
    // One hash tag of their own: never in a session's script, always on one node of a Cluster.
    this.#key = `${keyPrefix}running:{sweep}`;
    this.#lockKey = `${keyPrefix}sweeper:{sweep}`;
    this.inScripts = isCluster(connection.client) ? undefined : this.#key;
  }

  /** Marks (or unmarks) a session's turn as running; never waited for, never throws. */
  note(storeId: string, running: boolean): void {
    this.#connection
      .run('note a running turn', (client) =>
        running ? client.zadd(this.#key, Date.now(), storeId) : client.zrem(this.#key, storeId),
      )
      .catch(() => {});
  }

  /** The sessions marked running and not written for `olderThanMs`, oldest first, at most `limit`. */
  async stale(olderThanMs: number, limit: number): Promise<string[]> {
    return this.#connection.run('list running turns', (client) =>
      client.zrangebyscore(this.#key, '-inf', Date.now() - olderThanMs, 'LIMIT', 0, limit),
    );
  }

  /** Unmarks a session found not running (its turn ended, or it was deleted). */
  async forget(storeId: string): Promise<void> {
    await this.#connection.run('forget a running turn', (client) => client.zrem(this.#key, storeId));
  }

  /** Takes the sweep for `ttlMs` unless another replica has it: true when this one got it. */
  async takeSweep(owner: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#connection.run('take the sweep', (client) =>
      client.set(this.#lockKey, owner, 'PX', ttlMs, 'NX'),
    );
    return reply === 'OK';
  }
}
