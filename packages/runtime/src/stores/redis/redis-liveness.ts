import { createId } from '@switchboard/core';
import type { RedisConnection } from './redis-connection.js';
import { replicaLivenessKey } from './redis-keys.js';

/** How long a replica's liveness key lives without a refresh, by default (ms). */
export const DEFAULT_LIVENESS_TTL_MS = 1_200;
/** Replicas remembered as suspected dead at most (each entry is tiny; the map starts over past it). */
const MAX_SUSPECTS = 1_000;

/** What this store knows of another replica's liveness key. */
interface Sighting {
  /** When the key was last read (ms). */
  checkedAt: number;
  /** When the key was first found missing in a row of reads, if it was. */
  missingSince?: number;
}

/**
 * One replica's liveness in Redis, and how it reads other replicas'.
 *
 * Every lease this replica takes names it (`<replica id>/<token>`). While it
 * holds or waits for leases, the replica keeps a short-lived key,
 * `<prefix>replica:{<id>}`, set again every third of its ttl by one `SET PX`
 * (so about 2.5 commands a second per replica at the default 1.2 s, whatever
 * the number of leases it holds). A replica waiting for a session whose lease
 * names a replica without that key may take the lease over: a dead replica's
 * sessions are served again within about the liveness ttl, not the lease's.
 *
 * The key must be found missing twice, a refresh interval apart, before a
 * lease is taken over: right after Redis itself stalled, every key may have
 * expired at once, and the live replicas' refreshes arrive within one
 * interval. A replica that was only paused (GC, SIGSTOP) and loses a lease
 * this way finds it taken when it wakes: every write is fenced by the
 * lease's token, so it cannot write, and its turn stops.
 */
export class ReplicaLiveness {
  /** This replica's id, which every lease it takes starts with. */
  readonly id = createId('replica');
  readonly #connection: RedisConnection;
  readonly #key: string;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #sightings = new Map<string, Sighting>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(connection: RedisConnection, prefix: string, ttlMs = DEFAULT_LIVENESS_TTL_MS) {
    this.#connection = connection;
    this.#prefix = prefix;
    this.#key = replicaLivenessKey(prefix, this.id);
    this.#ttlMs = ttlMs;
  }

  /** The interval between two refreshes of the key (ms). */
  get intervalMs(): number {
    return Math.max(1, Math.floor(this.#ttlMs / 3));
  }

  /**
   * Keeps the key alive from now on. Sent before the caller's first lease
   * command on the same connection, so no lease of this replica is ever
   * seen without its key.
   */
  start(): void {
    if (this.#timer) return;
    this.#refresh();
    this.#timer = setInterval(() => this.#refresh(), this.intervalMs);
    this.#timer.unref();
  }

  /** The lease token for a lease of this replica. */
  token(localToken: string): string {
    return `${this.id}/${localToken}`;
  }

  /**
   * Whether the replica named by a lease token is gone: its key was found
   * missing twice, at least a refresh interval apart. Tokens of this
   * replica, and tokens naming no replica, are never abandoned. Reads the key
   * at most once per refresh interval per replica.
   */
  async abandoned(token: string): Promise<boolean> {
    const slash = token.indexOf('/');
    if (slash <= 0) return false;
    const replica = token.slice(0, slash);
    if (replica === this.id) return false;
    const now = Date.now();
    let sighting = this.#sightings.get(replica);
    if (sighting && now - sighting.checkedAt < this.intervalMs / 2)
      return sighting.missingSince !== undefined && now - sighting.missingSince >= this.intervalMs;
    if (!sighting) {
      if (this.#sightings.size >= MAX_SUSPECTS) this.#sightings.clear();
      sighting = { checkedAt: now };
      this.#sightings.set(replica, sighting);
    }
    const exists = await this.#connection.run('read a replica liveness key', (client) =>
      client.exists(replicaLivenessKey(this.#prefix, replica)),
    );
    sighting.checkedAt = Date.now();
    if (exists === 1) {
      this.#sightings.delete(replica);
      return false;
    }
    sighting.missingSince ??= now;
    return sighting.checkedAt - sighting.missingSince >= this.intervalMs;
  }

  /**
   * Stops refreshing and deletes the key (best effort, never rejects), so
   * that leases this replica still holds can be taken over without waiting
   * for its key to expire. Await it before the connection closes.
   */
  async close(): Promise<void> {
    if (!this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#sightings.clear();
    await this.#connection
      .run('delete the replica liveness key', (client) => client.del(this.#key))
      .catch(() => {});
  }

  #refresh(): void {
    this.#connection
      .run('refresh the replica liveness key', (client) => client.set(this.#key, '1', 'PX', this.#ttlMs))
      // Unreachable store: the next refresh tries again; fencing guards every write meanwhile.
      .catch(() => {});
  }
}
