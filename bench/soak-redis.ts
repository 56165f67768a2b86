// What `bench/replica-soak.ts` reads from Redis: command counts (INFO commandstats) and the leases left.
import type { Redis } from 'ioredis';

/** Calls per command name (`evalsha`, `set`, …), from `INFO commandstats`. */
export type CommandCounts = Map<string, number>;

/** The soak's own reads, left out of every count. */
const OWN_COMMANDS = new Set(['info', 'scan']);

/** Every command's call count so far, as `INFO commandstats` reports it. */
export async function commandCounts(client: Redis): Promise<CommandCounts> {
  const counts: CommandCounts = new Map();
  for (const match of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = match[1]!.toLowerCase();
    if (!OWN_COMMANDS.has(name)) counts.set(name, Number(match[2]));
  }
  return counts;
}

/** The calls between two readings, by command, largest first (commands not called are left out). */
export function countsBetween(before: CommandCounts, after: CommandCounts): CommandCounts {
  const delta = [...after]
    .map(([name, calls]) => [name, calls - (before.get(name) ?? 0)] as const)
    .filter(([, calls]) => calls > 0)
    .sort((a, b) => b[1] - a[1]);
  return new Map(delta);
}

/** The sum of every command's calls. */
export function total(counts: CommandCounts): number {
  let sum = 0;
  for (const calls of counts.values()) sum += calls;
  return sum;
}

/** `name calls, name calls, …` for a report line. */
export function describeCounts(counts: CommandCounts): string {
  return [...counts].map(([name, calls]) => `${name} ${calls}`).join(', ') || 'none';
}

/** The session lease keys under `prefix` (SCAN, never KEYS). */
export async function leaseKeys(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*:lease`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** What {@link watchCommands} saw: the commands each client connection sent, and those scripts ran inside Redis. */
export interface WatchedCommands {
  /** By client address, the commands it sent (each one round trip, or part of a pipeline). */
  byConnection: Map<string, CommandCounts>;
  /** The commands that scripts (EVALSHA, EVAL) called inside Redis. */
  inScripts: CommandCounts;
}

function add(counts: CommandCounts, name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

/**
 * Watches every command Redis runs (MONITOR, on a connection of its own) until `stop` is called. Unlike
 * `INFO commandstats`, it tells the commands clients sent from those scripts ran, and who sent them.
 * MONITOR slows Redis down: watch an idle time, not a load.
 */
export async function watchCommands(client: Redis): Promise<{ stop(): WatchedCommands }> {
  const monitor = await client.monitor();
  const watched: WatchedCommands = { byConnection: new Map(), inScripts: new Map() };
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = (args[0] ?? '').toLowerCase();
    if (source === 'lua') return add(watched.inScripts, name);
    const counts = watched.byConnection.get(source) ?? new Map<string, number>();
    watched.byConnection.set(source, counts);
    add(counts, name);
  });
  return {
    stop() {
      monitor.disconnect();
      return watched;
    },
  };
}

/**
 * Notes when keys starting with `keyPrefix` expire (keyspace notifications, on a connection of its own), so
 * that a takeover can be split into the liveness key running out and the wait after it. Redis deletes an
 * expired key when it is read or by its 10-per-second expiry cycle: the time is at most ~100 ms late here,
 * where a waiting replica reads the key every 200 ms.
 */
export async function watchExpiries(
  client: Redis,
  keyPrefix: string,
): Promise<{ expiredAt(): number | undefined; stop(): void }> {
  await client.config('SET', 'notify-keyspace-events', 'Ex');
  const subscriber = client.duplicate();
  let first: number | undefined;
  subscriber.on('message', (_channel: string, key: string) => {
    if (key.startsWith(keyPrefix)) first ??= performance.now();
  });
  await subscriber.subscribe('__keyevent@0__:expired');
  return { expiredAt: () => first, stop: () => subscriber.disconnect() };
}
