import type { Redis } from 'ioredis';
import { RedisSessionStore } from '../../src/redis.js';
import { between, chance, seededRandom } from './seeded-random.js';
import { storedProblems } from './stored-invariants.js';
import { World, type WorldSettings } from './world.js';

/** What one seeded run did and found. */
export interface SimulationReport {
  seed: number;
  /** Replicas, sessions, messages sent, replicas killed, whether replies were lost. */
  plan: string;
  violations: string[];
}

/**
 * A 750 ms lease is renewed every 250 ms (the renewer's shortest interval),
 * so renewals often meet a turn's closing write; a client waits 400 ms for a
 * busy session, less than a lease left behind lives.
 */
const LEASE_TTL_MS = 750;
const SESSION_WAIT_MS = 400;

/**
 * Runs one seeded simulation under `prefix`: two or three replicas, two or
 * three sessions whose clients send a few messages each to replicas they
 * pick, while links delay commands and replies (some seeds also lose some
 * and kill a replica) and replicas stall; then a last message per session on
 * a calm network, and the checks. The seed fixes every choice the
 * simulation makes; how the replicas' timers fall among them may still vary
 * from one run to the next.
 */
export async function simulate(
  seed: number,
  admin: Redis,
  prefix: string,
  { tracing = false }: { tracing?: boolean } = {},
): Promise<SimulationReport> {
  const random = seededRandom(seed, 'plan');
  const replicas = between(random, 2, 3);
  const sessionIds = Array.from({ length: between(random, 2, 3) }, (_, index) => `s${index + 1}`);
  const messages = between(random, 3, 6);
  const lossy = chance(random, 0.4);
  const kills = chance(random, 0.3) ? 1 : 0;
  const pauses = chance(random, 0.5);
  const maxDelayMs = between(random, 2, 25);
  const settings: WorldSettings = {
    leaseTtlMs: LEASE_TTL_MS,
    sessionWaitMs: SESSION_WAIT_MS,
    quietProbeMs: 2 * maxDelayMs + 80,
    // A lost release is sent again within 500 ms; a dead replica's lease lives out its ttl.
    faultLingerMs: LEASE_TTL_MS + 800,
    faults: { maxDelayMs, dropRate: lossy ? 0.01 : 0 },
    tracing,
  };
  const plan = `${replicas} replicas, ${sessionIds.length} sessions × ${messages} messages, delays ≤ ${maxDelayMs} ms${lossy ? ', lost commands' : ''}${kills ? ', a kill' : ''}${pauses ? ', stalls' : ''}`;
  const world = new World(seededRandom(seed, 'links'), admin, prefix, replicas, settings);
  const violations = world.ledger.violations;
  try {
    let done = false;
    const disturbing = world.disturb(seededRandom(seed, 'faults'), { kills, pauses }, () => done);
    await Promise.all(sessionIds.map((id) => world.converse(id, seededRandom(seed, id), messages)));
    done = true;
    await disturbing;
    world.calm();
    await Promise.all(
      sessionIds.map((id) => world.deliver(id, `work: 0 ${id}-last`, seededRandom(seed, `${id}-last`), 12)),
    );
    await world.ledger.finish(sessionIds);
  } finally {
    await world.close();
  }
  const store = new RedisSessionStore(admin, { keyPrefix: prefix });
  try {
    violations.push(...(await storedProblems(store, world.ledger, sessionIds)));
  } finally {
    await store.close();
  }
  return { seed, plan, violations };
}
