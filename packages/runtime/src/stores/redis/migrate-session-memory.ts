import type { Redis } from 'ioredis';
import { RedisConnection, type RedisSource } from './redis-connection.js';
import { legacyMemoryKeys, type MemoryKeys, memoryKeys } from './redis-keys.js';

/** Options of {@link migrateSessionMemory}. */
export interface MigrateSessionMemoryOptions {
  /** The stores' key prefix (default `switchboard:`). */
  keyPrefix?: string;
  /** How long each command may take (default 10 000 ms: a migration reads whole namespaces). */
  commandTimeoutMs?: number;
}

/** What {@link migrateSessionMemory} moved. */
export interface MigrateSessionMemoryResult {
  /** Session memory namespaces found in the old layout (and moved). */
  namespaces: number;
  /** Values moved (values that expired meanwhile are not counted). */
  values: number;
  /** Values left in place because the new layout already held a newer one. */
  kept: number;
}

/** The index key of a namespace in the old layout: `<prefix>memory:{<encoded namespace>}`. */
function legacyIndexPattern(prefix: string): RegExp {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped}memory:\\{([^{}]*)\\}$`);
}

/** The clients to SCAN: every master of a Cluster, else the client itself. */
function scanTargets(client: Redis): Redis[] {
  const cluster = client as unknown as { isCluster?: boolean; nodes?: (role: string) => Redis[] };
  return cluster.isCluster && cluster.nodes ? cluster.nodes('master') : [client];
}

/**
 * Moves session memory written by Switchboard before 0.2 to where this
 * version keeps it. Session memory used to have a hash tag of its own
 * (`<prefix>memory:{session%3A<id>}`); it now lives beside the session's
 * keys, under the session's tag (`<prefix>session:{<id>}:memory`), so that on
 * a Redis Cluster a session's messages, turns, lease and memory share a slot
 * and a node. Values keep their expiry and renewability; a value the new
 * layout already holds (written by this version meanwhile) is kept and the
 * old one dropped. Other namespaces (app, user) do not move.
 *
 * Run it once every replica runs this version (a replica of the previous
 * version still writes the old layout); running it again is harmless. Until
 * it has run, this version does not see session memory the previous one wrote.
 *
 * @example
 * ```ts
 * import { migrateSessionMemory } from '@switchboard/runtime/redis';
 * const moved = await migrateSessionMemory(process.env.REDIS_URL!, { keyPrefix: 'support:' });
 * console.log(`moved ${moved.values} values of ${moved.namespaces} sessions`);
 * ```
 */
export async function migrateSessionMemory(
  source: RedisSource,
  { keyPrefix = 'switchboard:', commandTimeoutMs = 10_000 }: MigrateSessionMemoryOptions = {},
): Promise<MigrateSessionMemoryResult> {
  const connection = new RedisConnection(source, { commandTimeoutMs });
  const result: MigrateSessionMemoryResult = { namespaces: 0, values: 0, kept: 0 };
  const pattern = legacyIndexPattern(keyPrefix);
  const match = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}memory:{*}`;
  try {
    await connection.ping();
    for (const node of scanTargets(connection.client)) {
      let cursor = '0';
      do {
        const [next, keys] = await connection.run('scan for session memory', () =>
          node.scan(cursor, 'MATCH', match, 'COUNT', 1000),
        );
        cursor = next;
        for (const key of keys) {
          const encoded = pattern.exec(key)?.[1];
          if (encoded === undefined) continue;
          const namespace = decodeURIComponent(encoded);
          const target = memoryKeys(keyPrefix, namespace);
          const legacy = legacyMemoryKeys(keyPrefix, namespace);
          if (target.index === legacy.index) continue;
          await moveNamespace(connection, legacy, target, result);
          result.namespaces += 1;
        }
      } while (cursor !== '0');
    }
    return result;
  } finally {
    await connection.close();
  }
}

async function moveNamespace(
  connection: RedisConnection,
  from: MemoryKeys,
  to: MemoryKeys,
  result: MigrateSessionMemoryResult,
): Promise<void> {
  const run = <T>(operation: (client: Redis) => Promise<T>) =>
    connection.run('move session memory', operation);
  const [members, renewable] = await Promise.all([
    run((client) => client.smembers(from.index)),
    run((client) => client.smembers(from.renewable)),
  ]);
  const renewables = new Set(renewable);
  let longestTtl = 0;
  let persistent = false;
  for (const member of members) {
    const oldKey = from.valuePrefix + member;
    const [dump, ttl] = await Promise.all([
      run((client) => client.dumpBuffer(oldKey)),
      run((client) => client.pttl(oldKey)),
    ]);
    if (dump === null || ttl === -2) continue;
    try {
      await run((client) => client.restore(to.valuePrefix + member, Math.max(ttl, 0), dump));
      result.values += 1;
    } catch (error) {
      // BUSYKEY: this version wrote the value since; it is newer.
      if (!(error instanceof Error && error.message.includes('BUSYKEY'))) throw error;
      result.kept += 1;
    }
    await run((client) => client.sadd(to.index, member));
    if (renewables.has(member)) await run((client) => client.sadd(to.renewable, member));
    if (ttl === -1) persistent = true;
    else longestTtl = Math.max(longestTtl, ttl);
  }
  // The index lives as long as its longest-lived value (for ever while one has no expiry), as writes keep it.
  if (persistent) await run((client) => client.persist(to.index));
  else if (longestTtl > 0) {
    const current = await run((client) => client.pttl(to.index));
    if (current >= 0 && current < longestTtl) await run((client) => client.pexpire(to.index, longestTtl));
  }
  if (longestTtl > 0 && renewables.size > 0) {
    const current = await run((client) => client.pttl(to.renewable));
    if (current >= 0 && current < longestTtl) await run((client) => client.pexpire(to.renewable, longestTtl));
  }
  for (const member of members) await run((client) => client.unlink(from.valuePrefix + member));
  await run((client) => client.unlink(from.index));
  await run((client) => client.unlink(from.renewable));
}
