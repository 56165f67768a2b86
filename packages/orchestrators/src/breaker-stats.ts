import type { AgentStats, AgentStatsTable } from '@switchboard/core';

/** The most agents whose stats a breaker keeps per tenant (the seed's bound on remembered tool patterns). */
export const MAX_STATS_AGENTS = 100;
/** The most recent calls kept per agent: the window's stats are over these at most. */
export const MAX_SAMPLES_PER_AGENT = 32;

/**
 * One call as stored: `[at, ms, code]` — its epoch ms, its duration in ms
 * (-1 when unknown, e.g. a reply read back after a recovery) and its error
 * code (0 when it replied ok). Tuples keep the stored record small: it is
 * rewritten with every decision that follows a call.
 */
export type Sample = [at: number, ms: number, code: string | 0];

/** Agents' recent calls by agent name, oldest first. */
export type SampleTable = Record<string, Sample[]>;

/** One call's outcome, as the breaker reads it from the reply. */
export interface CallSample {
  agent: string;
  ok: boolean;
  /** The error code of a failed call. */
  code?: string;
  /** How long the call took, when known. */
  ms?: number;
}

/**
 * Adds calls to the table: each agent keeps its last
 * {@link MAX_SAMPLES_PER_AGENT} calls inside `windowMs`, and the table the
 * {@link MAX_STATS_AGENTS} agents called most recently. Pure, so a store
 * may run it again on a retry.
 */
export function recordSamples(
  table: SampleTable | undefined,
  calls: readonly CallSample[],
  windowMs: number,
  now: number,
): SampleTable {
  const next: SampleTable = { ...validTable(table) };
  for (const { agent, ok, code, ms } of calls) {
    const sample: Sample = [
      now,
      ms === undefined ? -1 : Math.max(0, Math.round(ms)),
      ok ? 0 : (code ?? 'error'),
    ];
    next[agent] = [...inWindow(next[agent] ?? [], windowMs, now), sample].slice(-MAX_SAMPLES_PER_AGENT);
  }
  const agents = Object.entries(next).filter(([, samples]) => inWindow(samples, windowMs, now).length > 0);
  if (agents.length === Object.keys(next).length && agents.length <= MAX_STATS_AGENTS) return next;
  const latest = (samples: Sample[]) => samples[samples.length - 1]?.[0] ?? 0;
  agents.sort(([, a], [, b]) => latest(b) - latest(a));
  return Object.fromEntries(agents.slice(0, MAX_STATS_AGENTS));
}

/** The stats of every agent with calls inside `windowMs` at `now`. */
export function summarise(table: SampleTable | undefined, windowMs: number, now: number): AgentStatsTable {
  const stats: Record<string, AgentStats> = {};
  for (const [agent, samples] of Object.entries(validTable(table))) {
    const recent = inWindow(samples, windowMs, now);
    if (recent.length > 0) stats[agent] = statsOf(recent);
  }
  return stats;
}

/** Merges several tables (several tenants' copies), each agent's calls oldest first. */
export function mergeTables(tables: Iterable<SampleTable | undefined>): SampleTable {
  const merged: SampleTable = {};
  for (const table of tables)
    for (const [agent, samples] of Object.entries(validTable(table)))
      merged[agent] = [...(merged[agent] ?? []), ...samples];
  for (const samples of Object.values(merged)) samples.sort((a, b) => a[0] - b[0]);
  return merged;
}

function statsOf(samples: readonly Sample[]): AgentStats {
  const errors: Record<string, number> = {};
  let ok = 0;
  const durations: number[] = [];
  for (const [, ms, code] of samples) {
    if (code === 0) ok += 1;
    else errors[code] = (errors[code] ?? 0) + 1;
    if (ms >= 0) durations.push(ms);
  }
  const stats: AgentStats = { calls: samples.length, successRate: ok / samples.length, errors };
  if (durations.length > 0) {
    durations.sort((a, b) => a - b);
    stats.p50Ms = nearestRank(durations, 0.5);
    stats.p95Ms = nearestRank(durations, 0.95);
  }
  return stats;
}

/** The nearest-rank percentile of sorted values. */
function nearestRank(sorted: readonly number[], quantile: number): number {
  return sorted[Math.max(0, Math.ceil(quantile * sorted.length) - 1)] as number;
}

function inWindow(samples: readonly Sample[], windowMs: number, now: number): Sample[] {
  return samples.filter(([at]) => at > now - windowMs);
}

/** What a stored table holds that is a sample (the record crossed a store: never trusted). */
function validTable(table: unknown): SampleTable {
  if (typeof table !== 'object' || table === null) return {};
  const valid: SampleTable = {};
  for (const [agent, samples] of Object.entries(table)) {
    if (!Array.isArray(samples)) continue;
    const kept = samples.filter(isSample);
    if (kept.length > 0) valid[agent] = kept;
  }
  return valid;
}

function isSample(value: unknown): value is Sample {
  return (
    Array.isArray(value) &&
    value.length === 3 &&
    typeof value[0] === 'number' &&
    typeof value[1] === 'number' &&
    (value[2] === 0 || (typeof value[2] === 'string' && value[2].length <= 100))
  );
}
