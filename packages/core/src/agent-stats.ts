import type { Memory } from './memory.js';

/**
 * One agent's recent calls, summarised over a sliding window: what
 * `withBreaker` keeps per agent and tenant, and what routers, `GET
 * /v1/agents`, the console and the metrics show.
 */
export interface AgentStats {
  /** Calls in the window (at most the samples kept per agent). */
  calls: number;
  /** The share of those calls that replied ok, 0–1. */
  successRate: number;
  /** Failed calls by error code (`agent_error`, `agent_timeout`, …). */
  errors: Record<string, number>;
  /** Median latency in ms (nearest rank) of the calls whose duration is known; absent when none is. */
  p50Ms?: number;
  /** 95th-percentile latency in ms (nearest rank), as `p50Ms`. */
  p95Ms?: number;
}

/** Agents' stats by agent name. */
export type AgentStatsTable = Readonly<Record<string, AgentStats>>;

/**
 * An orchestrator that keeps agents' stats (`withBreaker` does): the app
 * shows them on `GET /v1/agents` and in its metrics. An optional
 * capability, found with {@link reportsAgentStats}.
 */
export interface ReportsAgentStats {
  /** The tenant's stats as stored (`memory` is the tenant's app memory): one read. */
  readAgentStats(memory: Memory | undefined): Promise<AgentStatsTable>;
  /** The stats of every tenant this process holds a copy of, merged: no read. */
  localAgentStats(): AgentStatsTable;
}

/** True when the orchestrator keeps agents' stats (see {@link ReportsAgentStats}). */
export function reportsAgentStats<T extends object>(orchestrator: T): orchestrator is T & ReportsAgentStats {
  const candidate = orchestrator as Partial<ReportsAgentStats>;
  return typeof candidate.readAgentStats === 'function' && typeof candidate.localAgentStats === 'function';
}

/**
 * Orders agent names best first by their stats on the conversation: higher
 * success rate first, then lower median latency; an agent without stats
 * counts as fully successful with an unknown latency (after the known ones),
 * so a new agent gets tried. Equal agents keep their order. Without stats on
 * the conversation (no `withBreaker`), the order is unchanged.
 * @example
 * ```ts
 * const [best] = rankByStats(conversation, ['search-a', 'search-b']); // a keyword tie, broken
 * ```
 */
export function rankByStats(
  conversation: { readonly agentStats?: AgentStatsTable },
  agents: readonly string[],
): string[] {
  const stats = conversation.agentStats;
  if (!stats) return [...agents];
  const rate = (agent: string) => stats[agent]?.successRate ?? 1;
  const latency = (agent: string) => stats[agent]?.p50Ms ?? Number.POSITIVE_INFINITY;
  return [...agents].sort((a, b) => rate(b) - rate(a) || compareLatency(latency(a), latency(b)));
}

function compareLatency(a: number, b: number): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}
