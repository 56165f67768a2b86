import { z } from 'zod';
import {
  type ConfigChange,
  type ConfigEntry,
  type ConfigRefusal,
  type ConfigScope,
  type ConfigSnapshot,
  type ConfigStore,
  type ConfigStoreLimits,
  type ConfigWriteResult,
  entryOf,
} from '../../config/config-store.js';
import { decodeRecord, RECORD_VERSION } from './records.js';
import { RedisConnection, type RedisSource, type RedisStoreOptions } from './redis-connection.js';
import { RedisScript } from './redis-script.js';
import { type ChannelSubscription, subscribeChannel } from './redis-subscriber.js';

/** How long a deleted item's history is kept (30 days): long enough to roll the deletion back. */
const DELETED_HISTORY_TTL_MS = 30 * 86_400_000;

/** The channel (after the key prefix) on which every change is published as `<scope> <version>`. */
const CHANGE_CHANNEL = 'config-changes';

/**
 * KEYS: the scope's live items (hash `type/name` → entry), its version
 * counter, the item's history (list, newest first). ARGV: the hash field,
 * the expected version ('' for none), the entry's JSON without its version,
 * '1' to delete, the item limit, the versions kept, the channel, the scope, and how
 * long (ms) a deleted item's history is kept.
 * Returns { 'ok', version } or { refusal, current version }.
 */
const WRITE_CONFIG = new RedisScript(`
local top = redis.call('LINDEX', KEYS[3], 0)
local current = 0
if top then current = tonumber(cjson.decode(top).version) end
local exists = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if ARGV[2] ~= '' then
  local expected = tonumber(ARGV[2])
  if (expected == 0 and exists) or (expected ~= 0 and expected ~= current) then return {'conflict', current} end
end
if ARGV[4] == '1' then
  if not exists then return {'not_found', current} end
elseif (not exists) and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then
  return {'too_many_items', current}
end
local version = redis.call('INCR', KEYS[2])
local entry = '{"version":' .. version .. ',' .. string.sub(ARGV[3], 2)
redis.call('LPUSH', KEYS[3], entry)
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[6]) - 1)
if ARGV[4] == '1' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[9])
else
  redis.call('HSET', KEYS[1], ARGV[1], entry)
  redis.call('PERSIST', KEYS[3])
end
redis.call('PUBLISH', ARGV[7], ARGV[8] .. ' ' .. version)
return {'ok', version}
`);

/** KEYS: the version counter, the live items. Both at once, so the version matches the items. */
const READ_SNAPSHOT = new RedisScript(`
return { redis.call('GET', KEYS[1]) or '0', redis.call('HVALS', KEYS[2]) }
`);

/** A stored entry, validated when read. */
const EntrySchema = z.object({
  version: z.number().int().positive(),
  v: z.literal(RECORD_VERSION),
  type: z.string(),
  name: z.string(),
  value: z.unknown().optional(),
  deleted: z.literal(true).optional(),
  updatedAt: z.string(),
  updatedBy: z.string().optional(),
  comment: z.string().optional(),
});

function decodeEntry(key: string, raw: string): ConfigEntry {
  const { v: _schema, ...entry } = decodeRecord(key, raw, EntrySchema);
  return entry as ConfigEntry;
}

/**
 * A {@link ConfigStore} in Redis, shared by every replica: per scope, a
 * hash of the live items, a version counter and a list per item of its
 * last versions (a deleted item's for 30 days), all under one hash tag (one Cluster slot). A write is one
 * script (compare, count, store, trim, publish); a scope's snapshot one
 * more. Every change is published on `<keyPrefix>config-changes`, which a
 * subscriber connection (opened by the first `onChange`) relays.
 */
export class RedisConfigStore implements ConfigStore {
  readonly specificationVersion = 'v1' as const;
  readonly #connection: RedisConnection;
  readonly #keyPrefix: string;
  readonly #listeners = new Set<(scope: ConfigScope, version: number) => void>();
  readonly #resyncListeners = new Set<() => void>();
  #subscription: ChannelSubscription | undefined;

  /** @param source - an ioredis client (left open on `close()`), or where to connect (see `RedisSource`). */
  constructor(source: RedisSource, { keyPrefix = 'switchboard:', commandTimeoutMs }: RedisStoreOptions = {}) {
    this.#connection = new RedisConnection(source, { commandTimeoutMs });
    this.#keyPrefix = keyPrefix;
  }

  async snapshot(scope: ConfigScope): Promise<ConfigSnapshot> {
    const keys = this.#keys(scope);
    const [version, values] = (await this.#connection.run('read the configuration', (client) =>
      READ_SNAPSHOT.run(client, [keys.version, keys.items], []),
    )) as [string, string[]];
    return { version: Number(version), entries: values.map((raw) => decodeEntry(keys.items, raw)) };
  }

  async history(scope: ConfigScope, type: string, name: string): Promise<ConfigEntry[]> {
    const key = this.#keys(scope, type, name).history;
    const raws = await this.#connection.run('read a configuration history', (client) =>
      client.lrange(key, 0, -1),
    );
    return raws.map((raw) => decodeEntry(key, raw));
  }

  async write(
    scope: ConfigScope,
    change: ConfigChange,
    limits: ConfigStoreLimits,
  ): Promise<ConfigWriteResult> {
    const keys = this.#keys(scope, change.type, change.name);
    const stored = entryOf(change);
    const [outcome, version] = (await this.#connection.run(
      'write a configuration item',
      (client) =>
        WRITE_CONFIG.run(
          client,
          [keys.items, keys.version, keys.history],
          [
            `${change.type}/${change.name}`,
            change.expectedVersion === undefined ? '' : change.expectedVersion,
            JSON.stringify({ v: RECORD_VERSION, ...stored }),
            change.value === undefined ? '1' : '0',
            limits.maxItemsPerScope,
            limits.maxVersionsKept,
            `${this.#keyPrefix}${CHANGE_CHANNEL}`,
            scope,
            DELETED_HISTORY_TTL_MS,
          ],
        ),
      { write: true },
    )) as [string, number];
    if (outcome !== 'ok') return { ok: false, refusal: this.#refusal(outcome, version, limits) };
    return { ok: true, entry: { ...stored, version } };
  }

  /**
   * Calls `listener` for every change published on this prefix, by any
   * replica. The first listener opens a subscriber connection, which
   * subscribes again after a reconnect (see {@link onResync}).
   */
  onChange(listener: (scope: ConfigScope, version: number) => void): () => void {
    this.#listeners.add(listener);
    this.#subscribe();
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` each time the subscription comes back after a disconnection: changes may have been missed. */
  onResync(listener: () => void): () => void {
    this.#resyncListeners.add(listener);
    this.#subscribe();
    return () => this.#resyncListeners.delete(listener);
  }

  /** Closes the subscriber, and quits the client if the store created it. */
  async close(): Promise<void> {
    this.#listeners.clear();
    this.#resyncListeners.clear();
    this.#subscription?.close();
    this.#subscription = undefined;
    await this.#connection.close();
  }

  #subscribe(): void {
    if (this.#subscription) return;
    this.#subscription = subscribeChannel(this.#connection.client, `${this.#keyPrefix}${CHANGE_CHANNEL}`, {
      message: (text) => {
        const space = text.lastIndexOf(' ');
        const version = Number(text.slice(space + 1));
        if (space < 1 || !Number.isInteger(version)) return;
        const scope = text.slice(0, space);
        for (const listener of this.#listeners) listener(scope, version);
      },
      resubscribed: () => {
        for (const listener of this.#resyncListeners) listener();
      },
    });
  }

  #refusal(outcome: string, currentVersion: number, limits: ConfigStoreLimits): ConfigRefusal {
    if (outcome === 'conflict') return { kind: 'conflict', currentVersion };
    if (outcome === 'too_many_items') return { kind: 'too_many_items', limit: limits.maxItemsPerScope };
    return { kind: 'not_found' };
  }

  #keys(scope: ConfigScope, type = '', name = '') {
    const base = `${this.#keyPrefix}config:{${encodeURIComponent(scope)}}`;
    return {
      items: `${base}:items`,
      version: `${base}:version`,
      history: `${base}:history:${encodeURIComponent(type)}/${encodeURIComponent(name)}`,
    };
  }
}
