import { type Decision, isErrorMessage, isRouteToUser } from '@switchboard/core';
import type { RouteStep } from '../stores/session-store.js';

/** Summarises one orchestrator decision as a {@link RouteStep}. */
export function toRouteStep(hop: number, decision: Decision, startedAt: number): RouteStep {
  const decidedAt = new Date().toISOString();
  const durationMs = Math.round((performance.now() - startedAt) * 1000) / 1000;
  if (isErrorMessage(decision)) {
    return { hop, kind: 'error', calls: [], error: decision.error.message, decidedAt, durationMs };
  }
  const calls = Array.isArray(decision) ? decision : [decision];
  const kind = calls.length > 1 ? 'fan-out' : isRouteToUser(calls[0]!) ? 'answer' : 'call';
  return {
    hop,
    kind,
    calls: calls.map(({ id, toolName, thought, reason }) => {
      const summary: RouteStep['calls'][number] = { toolCallId: id, agent: toolName };
      if (thought !== undefined) summary.thought = thought;
      if (reason !== undefined) summary.reason = reason;
      return summary;
    }),
    decidedAt,
    durationMs,
  };
}
