import { expect, it } from 'vitest';
import { useRedis } from '../support/redis.js';
import { type SimulationReport, simulate } from './simulate.js';

/**
 * The turn and lease protocol under a seeded simulation (see simulate.ts):
 * `SIM_SEEDS` runs (seeds 1…n, default 200), or the one seed `SIM_SEED`
 * run `SIM_REPEAT` times at once (default 10: a seed fixes every choice,
 * not where the replicas' renewal timers fall, so one run may miss a race
 * that another catches). A failure names its seeds and how to replay one;
 * `SIM_TRACE=1` adds each failing session's last commands and requests.
 */
const redis = useRedis();
const only = process.env.SIM_SEED;
const tracing = process.env.SIM_TRACE === '1';
const seeds = only
  ? Array.from({ length: Number(process.env.SIM_REPEAT ?? 10) }, () => Number(only))
  : Array.from({ length: Number(process.env.SIM_SEEDS ?? 200) }, (_, index) => index + 1);
/** Runs at once: each mostly waits on timers and Redis. */
const CONCURRENCY = 24;
const FILE = 'packages/runtime/test/simulation/protocol-simulation.test.ts';

it(`keeps the protocol's invariants over ${seeds.length} seeded runs of replicas on one Redis`, async () => {
  const prefix = redis.prefix();
  const reports: SimulationReport[] = [];
  const queue = seeds.map((seed, run) => ({ seed, run }));
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        reports.push(await simulate(next.seed, redis.admin, `${prefix}${next.run}:`, { tracing }));
      }
    }),
  );
  const failures = reports
    .filter((report) => report.violations.length > 0)
    .sort((a, b) => a.seed - b.seed)
    .map(
      ({ seed, plan, violations }) =>
        `seed ${seed} (${plan}):\n  - ${violations.join('\n  - ')}\n  replay: SIM_SEED=${seed} pnpm vitest run ${FILE}`,
    );
  expect(failures.join('\n')).toBe('');
}, 180_000);
