import { h } from './dom.js';
import type { AgentStatsInfo } from './types.js';

/**
 * One line on an agent's card with its recent calls, as a breaker keeps
 * them: `5 calls · 80% ok · p50 120 ms · p95 340 ms · agent_timeout ×1`.
 */
export function agentStatsLine(stats: AgentStatsInfo | undefined): HTMLElement | null {
  if (!stats) return null;
  const parts = [
    `${stats.calls} ${stats.calls === 1 ? 'call' : 'calls'}`,
    `${Math.round(stats.successRate * 100)}% ok`,
  ];
  if (stats.p50Ms !== undefined) parts.push(`p50 ${stats.p50Ms} ms`);
  if (stats.p95Ms !== undefined) parts.push(`p95 ${stats.p95Ms} ms`);
  for (const [code, count] of Object.entries(stats.errors)) parts.push(`${code} ×${count}`);
  const health = stats.successRate >= 0.9 ? 'ok' : stats.successRate >= 0.5 ? 'degraded' : 'failing';
  return h('p', { class: `agent-stats muted ${health}`, text: parts.join(' · ') });
}
