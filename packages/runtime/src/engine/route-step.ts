import { type Decision, isErrorMessage, isRouteToUser, SwitchboardError } from '@switchboard/core';
import type { RouteStep, StepCall } from '../turns/turn-record.js';
import { TextPool } from './text-pool.js';
import { isoNow } from './timestamp.js';

const stepTexts = new TextPool();

/** The stable code of an error: its `code` for Switchboard errors, `internal_error` otherwise. */
export function errorCode(error: Error): string {
  return SwitchboardError.isInstance(error) ? (error as SwitchboardError).code : 'internal_error';
}

/**
 * Summarises one orchestrator decision as a {@link RouteStep}. An error is
 * summarised by its code unless `exposeErrorDetails` is set: its message may
 * carry internals (hosts, credentials) that clients must not see.
 */
export function toRouteStep(
  hop: number,
  decision: Decision,
  startedAt: number,
  exposeErrorDetails: boolean,
): RouteStep {
  const decidedAt = isoNow();
  const durationMs = Math.round((performance.now() - startedAt) * 1000) / 1000;
  if (isErrorMessage(decision)) {
    const error = exposeErrorDetails ? decision.error.message : errorCode(decision.error);
    return { hop, kind: 'error', calls: [], error, decidedAt, durationMs };
  }
  const calls = Array.isArray(decision) ? decision : [decision];
  const kind = calls.length > 1 ? 'fan-out' : isRouteToUser(calls[0]!) ? 'answer' : 'call';
  return {
    hop,
    kind,
    calls: calls.map(({ id, toolName, message, input, thought, reason, timeoutMs, fanInGraceMs }) => {
      if (input === undefined && timeoutMs === undefined && fanInGraceMs === undefined)
        return plainCall(id, toolName, kind === 'answer' ? undefined : message, thought, reason);
      const summary: StepCall = { toolCallId: id, agent: toolName };
      // The task text and input are kept so that a resumed turn can run a call whose reply was never stored.
      if (kind !== 'answer') summary.message = message;
      if (input !== undefined) summary.input = input;
      // Steps are kept with the session, and these texts repeat from turn to turn: shared, not copied.
      if (thought !== undefined) summary.thought = stepTexts.share(thought);
      if (reason !== undefined) summary.reason = stepTexts.share(reason);
      // Kept so that a resumed call keeps its bounds.
      if (timeoutMs !== undefined) summary.timeoutMs = timeoutMs;
      if (fanInGraceMs !== undefined) summary.fanInGraceMs = fanInGraceMs;
      return summary;
    }),
    decidedAt,
    durationMs,
  };
}

/**
 * A call's summary when it has no input and no bounds of its own (the usual
 * case): built whole, each of its shapes from one literal, rather than by
 * adding fields to `{ toolCallId, agent }`, which gives every step's call an
 * extra object for the fields added (steps are kept with their session).
 */
function plainCall(
  toolCallId: string,
  agent: string,
  message: string | undefined,
  thought: string | undefined,
  reason: string | undefined,
): StepCall {
  if (thought === undefined || reason === undefined) {
    const summary: StepCall = message === undefined ? { toolCallId, agent } : { toolCallId, agent, message };
    if (thought !== undefined) summary.thought = stepTexts.share(thought);
    if (reason !== undefined) summary.reason = stepTexts.share(reason);
    return summary;
  }
  // Steps are kept with the session, and these texts repeat from turn to turn: shared, not copied.
  return message === undefined
    ? { toolCallId, agent, thought: stepTexts.share(thought), reason: stepTexts.share(reason) }
    : { toolCallId, agent, message, thought: stepTexts.share(thought), reason: stepTexts.share(reason) };
}
