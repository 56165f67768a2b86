// `pnpm tsx bench/replica-soak.ts`: two (or three) real `apps/server` replicas on one Redis, loopback only, bounded.
//   SOAK_SECONDS (default 30)   seconds of load
//   SOAK_SESSIONS (default 20), SOAK_CLIENTS (default 8)   the load's sessions and clients
//   SOAK_MODE (default both)   load | kill | both
//   SOAK_SERVER   another server entry to run (e.g. an older checkout's apps/server/src/main.ts), to compare
// load: the clients chat on the shared sessions, each message to the next replica, for SOAK_SECONDS; it
//   counts the answers by status and error code (409 session_busy must not happen: a session waits for its
//   lease) and the leases left once every answer came back (must be none), and the Redis commands it cost
//   (INFO commandstats). Then nothing runs for 5 s (10 s with kill) and MONITOR counts the commands each
//   replica sends meanwhile: its liveness key costs a SET every 400 ms.
// kill: a third replica, whose demo agents take 30 s (DEMO_AGENT_DELAY_MS), starts 10 turns on sessions of
//   their own. While they hold their leases for one renewal interval (10 s at the default 30 s lease), the
//   renewals are counted. Then it is SIGKILLed and each session's next message goes to replica B at once:
//   B takes the session over once the killed replica's liveness key is gone (about 1.6 s, not the 30 s
//   lease), resumes the interrupted turn (recoveries 1), then answers.
// The soak starts a redis-server of its own (so that the counts are the replicas' alone), deletes its keys
// (SCAN of its prefix) and ends every process it started, also on an error. `both` takes about 50 s.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { deleteKeys } from './redis-keys.js';
import { runSoakLoad } from './soak-load.js';
import {
  kill,
  SERVER_MAIN,
  type SoakProcess,
  type SoakReplica,
  startRedis,
  startReplica,
  stop,
} from './soak-processes.js';
import {
  commandCounts,
  countsBetween,
  describeCounts,
  leaseKeys,
  total,
  type WatchedCommands,
  watchCommands,
  watchExpiries,
} from './soak-redis.js';
import { eventOf, streamChat, takeOver } from './soak-takeover.js';

const seconds = Number(process.env.SOAK_SECONDS ?? 30);
const sessions = Number(process.env.SOAK_SESSIONS ?? 20);
const clients = Number(process.env.SOAK_CLIENTS ?? 8);
const mode = process.env.SOAK_MODE ?? 'both';
if (!['load', 'kill', 'both'].includes(mode))
  throw new Error(`SOAK_MODE must be load, kill or both, not ${mode}`);
if (!(seconds > 0 && seconds <= 600 && sessions >= 1 && clients >= 1))
  throw new Error('SOAK_SECONDS must be 1 to 600, SOAK_SESSIONS and SOAK_CLIENTS at least 1');
const server = process.env.SOAK_SERVER ? resolve(process.env.SOAK_SERVER) : SERVER_MAIN;
const withLoad = mode !== 'kill';
const withKill = mode !== 'load';

/** apps/server's default lease ttl (LEASE_TTL_MS); a held lease is renewed every third of it. */
const LEASE_TTL_MS = 30_000;
/** apps/server's default liveness ttl (REDIS_LIVENESS_TTL_MS); its key is set again every third of it. */
const LIVENESS_TTL_MS = 1_200;
/** Sessions the killed replica holds mid-call. */
const HELD_SESSIONS = 10;
/** How long the killed replica's agents take: longer than the whole kill part. */
const VICTIM_AGENT_DELAY_MS = 30_000;
/** The issue's bound: the killed replica's session answered by another one within this. */
const TAKEOVER_BOUND_MS = 2_000;
/** The idle window: one renewal interval when leases are held (so each is renewed once in it), else 5 s. */
const windowMs = withKill ? LEASE_TTL_MS / 3 : 5_000;

const report: string[] = [];
let missed = 0;
const check = (line: string, ok: boolean) => {
  if (!ok) missed += 1;
  report.push(`${line} (${ok ? 'PASS' : 'MISS'})`);
};
const perSecond = (count: number, milliseconds: number) => (count / (milliseconds / 1000)).toFixed(2);
const ms = (value: number) => `${Math.round(value)} ms`;

const startedAt = performance.now();
const prefix = `switchboard-soak:${randomBytes(4).toString('hex')}:`;
// Its own redis-server: on a shared one, INFO commandstats and MONITOR would count (and MONITOR slow) every client.
const redis = await startRedis();
const redisUrl = redis.url;
const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
const replicas: SoakProcess[] = [];

async function startReplicas(): Promise<{ a?: SoakReplica; b: SoakReplica; victim?: SoakReplica }> {
  const env = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix };
  const starting = [
    withLoad ? startReplica('replica A', env, server) : undefined,
    startReplica('replica B', env, server),
    withKill
      ? startReplica('replica K', { ...env, DEMO_AGENT_DELAY_MS: String(VICTIM_AGENT_DELAY_MS) }, server)
      : undefined,
  ];
  // Each is stopped at the end, even when another one failed to start.
  for (const replica of starting)
    void replica?.then(
      (started) => replicas.push(started),
      () => {},
    );
  const [a, b, victim] = await Promise.all(starting);
  return { a, b: b as SoakReplica, victim };
}

/** A turn on each replica: a replica keeps its liveness key from its first lease on. */
async function warmUp(urls: string[]): Promise<void> {
  for (const url of urls) {
    const response = await fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'what is 2 + 2?' }),
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status !== 200)
      throw new Error(`warm-up answered ${response.status}: ${await response.text()}`);
  }
}

async function load(urls: string[]): Promise<void> {
  const before = await commandCounts(admin);
  const result = await runSoakLoad({ urls, sessions, clients, seconds });
  const during = countsBetween(before, await commandCounts(admin));
  const leftAtOnce = await leaseKeys(admin, prefix);
  await delay(500);
  const left = await leaseKeys(admin, prefix);
  const answered = result.outcomes.get('200') ?? 0;
  const outcomes = [...result.outcomes].map(([outcome, count]) => `${outcome} × ${count}`).join(', ');
  report.push(
    `load: ${clients} clients, ${sessions} sessions, ${urls.length} replicas in turn, ${result.seconds.toFixed(1)} s: ` +
      `${result.requests} requests (${(result.requests / result.seconds).toFixed(0)}/s), ${outcomes}; ` +
      `p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms`,
  );
  check(
    `409 session_busy: ${result.outcomes.get('409 session_busy') ?? 0}`,
    !result.outcomes.has('409 session_busy'),
  );
  check(`other answers than 200: ${result.requests - answered}`, result.requests === answered);
  check(
    `leases left: ${left.length} 0.5 s after the last answer (${leftAtOnce.length} right after it)`,
    left.length === 0,
  );
  const scripts = (during.get('evalsha') ?? 0) + (during.get('eval') ?? 0);
  report.push(
    `Redis during the load: ${total(during)} commands, ${(total(during) / Math.max(1, answered)).toFixed(2)} per turn; ` +
      `evalsha ${during.get('evalsha') ?? 0}, eval ${during.get('eval') ?? 0} (${(scripts / Math.max(1, answered)).toFixed(2)} scripts per turn)`,
  );
  report.push(`  by command: ${describeCounts(during)}`);
}

/** Starts turns on the victim that stay in their agent call, each holding its session's lease. */
async function holdSessions(victim: SoakReplica): Promise<string[]> {
  const run = randomBytes(4).toString('hex');
  const sessionIds = Array.from({ length: HELD_SESSIONS }, (_, index) => `soak-${run}-held-${index}`);
  const turns = await Promise.all(sessionIds.map((id) => streamChat(victim.url, id, 'what is 6 * 7?')));
  // Those streams end with the victim.
  for (const turn of turns) turn.ended.catch(() => {});
  await Promise.all(turns.map((turn) => eventOf(turn, 'agent-start', 10_000)));
  return sessionIds;
}

function idleWindow(
  { byConnection, inScripts }: WatchedCommands,
  livenessReplicas: number,
  heldLeases: number,
): void {
  const sent = new Map<string, number>();
  for (const counts of byConnection.values())
    for (const [name, calls] of counts) sent.set(name, (sent.get(name) ?? 0) + calls);
  const connections = [...byConnection.values()].map(describeCounts).join(' | ');
  report.push(
    `idle ${windowMs / 1000} s, ${livenessReplicas} replicas up, ${heldLeases} leases held: ` +
      `${total(sent)} commands sent (by connection: ${connections}); run inside scripts: ${describeCounts(inScripts)}`,
  );
  const rates = [...byConnection.values()].map((counts) => perSecond(total(counts), windowMs)).join(' | ');
  report.push(
    `  per replica: ${rates} commands/s sent (one connection each); liveness ` +
      `${perSecond((sent.get('set') ?? 0) / livenessReplicas, windowMs)} SET/s each (expected ${perSecond(1, LIVENESS_TTL_MS / 3)}: ` +
      `one SET PX every ${LIVENESS_TTL_MS / 3} ms from its first lease on, held leases or not), the rest renewals`,
  );
  const expected = `one compare-and-extend EVALSHA every ${LEASE_TTL_MS / 3000} s at the default ${LEASE_TTL_MS / 1000} s lease`;
  if (heldLeases === 0) {
    report.push(
      `  per held lease: not measured without the kill part; derived ${perSecond(1, LEASE_TTL_MS / 3)}/s (${expected})`,
    );
    return;
  }
  const renewals = (sent.get('evalsha') ?? 0) + (sent.get('eval') ?? 0);
  const inside = [...inScripts]
    .map(([name, calls]) => `${name} ${(calls / Math.max(1, renewals)).toFixed(1)}`)
    .join(', ');
  report.push(
    `  per held lease: ${renewals} renewals of ${heldLeases} leases in ${windowMs / 1000} s = ` +
      `${perSecond(renewals / heldLeases, windowMs)}/s per lease (expected ${perSecond(1, LEASE_TTL_MS / 3)}: ${expected}); ` +
      `each ran ${inside || 'nothing'} inside Redis`,
  );
}

async function killAndTakeOver(
  victim: SoakReplica,
  survivor: SoakReplica,
  sessionIds: string[],
): Promise<void> {
  const expiries = await watchExpiries(admin, `${prefix}replica:`);
  const killedAt = performance.now();
  const killed = kill(victim);
  const takeovers = await Promise.all(sessionIds.map((id) => takeOver(survivor.url, id, killedAt)));
  await killed;
  expiries.stop();
  const first = takeovers[0]!;
  const expiredMs = (expiries.expiredAt() ?? Number.NaN) - killedAt;
  const resumed = takeovers.map((takeover) => takeover.resumedMs);
  report.push(
    `killed replica's liveness key gone ${ms(expiredMs)} after the kill (1.2 s after its last SET); the interrupted ` +
      `turns resumed on B ${ms(Math.min(...resumed) - expiredMs)} – ${ms(Math.max(...resumed) - expiredMs)} after that`,
  );
  const firstStatus = first.status === 200 ? '' : `, status ${first.status}`;
  check(
    `kill → answered by B: ${ms(first.answeredMs)}${firstStatus} (of which the recovered call took ${ms(first.recoveredCallMs)}, ` +
      `B's agents having no delay; the interrupted turn resumed at ${ms(first.resumedMs)})`,
    first.status === 200 && first.answeredMs < TAKEOVER_BOUND_MS,
  );
  const answered = takeovers.map((takeover) => takeover.answeredMs);
  const ok = takeovers.filter((takeover) => takeover.status === 200).length;
  check(
    `all ${takeovers.length} sessions of the killed replica answered by B (${ok} with 200) within ` +
      `${ms(Math.min(...answered))} – ${ms(Math.max(...answered))} of the kill`,
    takeovers.every((takeover) => takeover.status === 200 && takeover.answeredMs < TAKEOVER_BOUND_MS),
  );
  const recovered = takeovers.filter((takeover) => takeover.recoveries === 1).length;
  check(
    `recoveries: ${first.recoveries} (${recovered} of ${takeovers.length} sessions at 1)`,
    recovered === takeovers.length,
  );
  const problems = takeovers.flatMap((takeover) =>
    takeover.problems.map((problem) => `${takeover.sessionId}: ${problem}`),
  );
  check(
    `histories well formed: ${problems.length === 0 ? 'yes' : problems.slice(0, 3).join('; ')}`,
    problems.length === 0,
  );
  const left = await leaseKeys(admin, prefix);
  check(`leases left after the takeover: ${left.length}`, left.length === 0);
}

try {
  const { a, b, victim } = await startReplicas();
  report.push(`replicas (${server}) ready ${ms(performance.now() - startedAt)} after the start`);
  const urls = a ? [a.url, b.url] : [b.url];
  await warmUp(urls);
  if (withLoad) await load(urls);
  const sessionIds = victim ? await holdSessions(victim) : [];
  const watching = await watchCommands(admin);
  await delay(windowMs);
  idleWindow(watching.stop(), urls.length + (victim ? 1 : 0), sessionIds.length);
  if (victim) await killAndTakeOver(victim, b, sessionIds);
} catch (error) {
  missed += 1;
  report.push(
    `stopped by an error (MISS): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
} finally {
  await stop(replicas);
  await deleteKeys(redisUrl, prefix).catch((error: unknown) =>
    console.error('could not delete the soak keys', error),
  );
  admin.disconnect();
  await stop([redis]);
}
report.push(
  `${missed === 0 ? 'all PASS' : `${missed} MISS`}, ${((performance.now() - startedAt) / 1000).toFixed(1)} s in all`,
);
console.log(`replica soak (${mode}):\n${report.map((line) => `  ${line}`).join('\n')}`);
process.exitCode = missed === 0 ? 0 : 1;
