import { type CallSample, recordSamples, type SampleTable } from './breaker-stats.js';

/** The most agents whose failures a breaker keeps per tenant (the seed's bound on remembered tool patterns). */
export const MAX_TRACKED_AGENTS = 100;
/** The most agents banned at once per tenant (the seed's bound on banned tools). */
export const MAX_BANNED_AGENTS = 50;

/** One agent's record: its recent failure times, and until when it is banned. */
export interface AgentRecord {
  /** Epoch ms of the failures inside the window, oldest first (at most the ban threshold). */
  failures: number[];
  /** Epoch ms until which calls are refused; past it, one trial call goes through. */
  bannedUntil?: number;
  /** A ban ended and its trial call has not answered yet: a failure bans again at once. */
  trial?: boolean;
  /** Who claimed the trial call (one decision on one replica). */
  trialBy?: string;
  /** Epoch ms of the last update (the least recently updated record is dropped first). */
  at: number;
}

/** What a breaker stores per tenant, in the app-scope memory. */
export interface BreakerState {
  v: 1;
  agents: Record<string, AgentRecord>;
  /** Every agent's recent calls, for its stats (absent in a record written before stats were kept). */
  stats?: SampleTable;
}

/** The breaker's settings. */
export interface BreakerLimits {
  failures: number;
  windowMs: number;
  coolDownMs: number;
  /** The window agents' stats are kept over. */
  statsWindowMs: number;
}

/** One call's outcome (with its error code and duration, for the stats). */
export type CallOutcome = CallSample;

export const EMPTY_STATE: BreakerState = { v: 1, agents: {} };

/** Reads a stored state, dropping anything that is not one. */
export function parseState(value: unknown): BreakerState {
  if (typeof value !== 'object' || value === null) return EMPTY_STATE;
  const { v, agents } = value as Partial<BreakerState>;
  if (v !== 1 || typeof agents !== 'object' || agents === null) return EMPTY_STATE;
  return value as BreakerState;
}

/**
 * Applies call outcomes: each is added to its agent's stats; a failure
 * inside the window counts, `failures` of them (or one during a trial) ban
 * the agent for `coolDownMs`; a success clears its record. Pure, so a store
 * may run it again on a retry.
 */
export function applyOutcomes(
  state: BreakerState,
  outcomes: readonly CallOutcome[],
  { failures, windowMs, coolDownMs, statsWindowMs }: BreakerLimits,
  now: number,
): BreakerState {
  const parsed = parseState(state);
  const agents: Record<string, AgentRecord> = { ...parsed.agents };
  for (const { agent, ok } of outcomes) {
    const record = agents[agent];
    if (ok) {
      delete agents[agent];
      continue;
    }
    if (record?.bannedUntil !== undefined && record.bannedUntil > now) continue;
    const recent = (record?.failures ?? []).filter((at) => at > now - windowMs);
    recent.push(now);
    if (record?.trial || recent.length >= failures) {
      agents[agent] = { failures: [], bannedUntil: now + coolDownMs, at: now };
    } else {
      agents[agent] = { failures: recent.slice(-failures), at: now };
    }
  }
  return {
    v: 1,
    agents: bounded(agents, now),
    stats: recordSamples(parsed.stats, outcomes, statsWindowMs, now),
  };
}

/**
 * Claims the trial call of agents whose ban ended, for `claimant`: an agent
 * already claimed keeps its claimant. A failure during the trial bans again at once.
 */
export function startTrials(
  state: BreakerState,
  agents: readonly string[],
  now: number,
  claimant: string,
): BreakerState {
  const parsed = parseState(state);
  const next = { ...parsed.agents };
  for (const agent of agents) {
    const record = next[agent];
    if (record?.bannedUntil !== undefined && record.bannedUntil <= now)
      next[agent] = { failures: [], trial: true, trialBy: claimant, at: now };
  }
  return parsed.stats ? { v: 1, agents: next, stats: parsed.stats } : { v: 1, agents: next };
}

/** The agents banned at `now`. */
export function bannedAt(state: BreakerState, now: number): Set<string> {
  const banned = new Set<string>();
  for (const [agent, record] of Object.entries(state.agents))
    if (record.bannedUntil !== undefined && record.bannedUntil > now) banned.add(agent);
  return banned;
}

/** The agents whose ban has ended without a trial yet. */
export function dueForTrial(state: BreakerState, now: number): string[] {
  return Object.entries(state.agents)
    .filter(([, record]) => record.bannedUntil !== undefined && record.bannedUntil <= now)
    .map(([agent]) => agent);
}

/** Keeps at most {@link MAX_BANNED_AGENTS} bans (the latest) and {@link MAX_TRACKED_AGENTS} records (the latest updated). */
function bounded(agents: Record<string, AgentRecord>, now: number): Record<string, AgentRecord> {
  const entries = Object.entries(agents);
  const banned = entries
    .filter(([, record]) => record.bannedUntil !== undefined && record.bannedUntil > now)
    .sort(([, a], [, b]) => b.at - a.at);
  const dropped = new Set(banned.slice(MAX_BANNED_AGENTS).map(([agent]) => agent));
  const kept = entries.filter(([agent]) => !dropped.has(agent)).sort(([, a], [, b]) => b.at - a.at);
  return Object.fromEntries(kept.slice(0, MAX_TRACKED_AGENTS));
}
