import { type Context, context as otelContext, type Span } from '@opentelemetry/api';
import { createId, type Decision } from '@switchboard/core';
import { failedTurn, logTurnFailure } from '../logging/turn-failure.js';
import { endSpan } from '../tracing/span-clock.js';
import {
  endDecisionSpan,
  endTurnSpan,
  startDecisionSpan,
  startTurnSpan,
  type TurnSpanOutcome,
  traceIdOf,
} from '../tracing/spans.js';
import { nextPart } from '../turns/event-ids.js';
import type { ApprovalRecord, RouteStep } from '../turns/turn-record.js';
import { partEmitter } from './event-numbering.js';
import type { TurnEvent, TurnEventBody } from './events.js';
import type { LoopParts } from './loop-parts.js';
import { withSpan } from './trace-context.js';
import type { TurnState } from './turn-state.js';

/**
 * Everything a turn tells the outside while it runs: the spans of its parts
 * and decisions, its metrics, the log line of a failed turn, and its
 * events, each event built here and only here. The rest of the engine calls
 * these functions; none of it starts a span, counts a metric or builds an
 * event itself.
 */

/** Why a stored turn continues (`cancel` closes it without running it). */
export type Resumption = 'approval' | 'recovery' | 'cancel';

// ── Spans and metrics ─────────────────────────────────────────────────────────

/** Starts the span of the part of the turn this process runs (a resumed part links to the earlier ones). */
export function startPart(
  parts: LoopParts,
  turn: TurnState,
  resumed?: Resumption,
  attributes?: Record<string, string>,
): void {
  const { orchestrator, naming } = parts;
  const { requestContext } = turn.runtime;
  const span = startTurnSpan({
    orchestrator: orchestrator.name,
    traceName: resumed
      ? naming.nameFor(resumed)
      : (turn.runtime.trace?.name ?? naming.nameFor(turn.runtime.entryPoint ?? 'app.chat()')),
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    // The requester's turn, also in a part an approver resumed: the approver is an attribute of the decision.
    userId: turn.userId ?? requestContext.userId,
    input: turn.userText,
    links: turn.traces,
    resumed,
    attributes,
    tenantId: requestContext.tenantId,
    keyName: turn.runtime.keyName,
  });
  turn.span = span;
  // The configuration this part runs under, so that a routing change can be traced to the change that made it.
  const { version } = requestContext.config;
  if (version.app > 0) span.setAttribute('switchboard.config.app_version', version.app);
  if (version.tenant) span.setAttribute('switchboard.config.tenant_version', version.tenant);
  turn.turnContext = withSpan(otelContext.active(), span);
  // Each part numbers its events anew, after the previous part's (stored with the turn's next write).
  turn.part = nextPart(turn.part);
  const key = { tenantId: requestContext.tenantId, sessionId: turn.sessionId, turnId: turn.turnId };
  turn.runtime.emit = partEmitter(
    parts.eventLog,
    key,
    turn.part,
    turn.runtime.listener,
    parts.guards.output.length > 0,
  );
  const traceId = traceIdOf(span);
  if (traceId) {
    turn.traceId = traceId;
    const part = { traceId, spanId: span.spanContext().spanId };
    if (turn.traces) turn.traces.push(part);
    else turn.traces = [part];
  }
}

/** Ends the span of the part of the turn this process ran, tagged with the agents the turn called. */
export function endPart(parts: LoopParts, turn: TurnState, outcome: TurnSpanOutcome): void {
  const { span } = turn;
  if (!span) return;
  if (span.isRecording()) outcome.tags = parts.naming.tagsFor(turn.steps, turn.runtime.trace?.tags);
  endTurnSpan(span, outcome);
}

/** Ends the span of a part that never ran (its request was a retry of a turn that did). */
export function dropPart(turn: TurnState): void {
  if (turn.span) endSpan(turn.span);
}

/**
 * Ends the span of a turn that stopped with an error thrown rather than an
 * ending (its store went down, its lease was lost), and counts the turn
 * with status `error`.
 */
export function abandon(parts: LoopParts, turn: TurnState, error: unknown): void {
  parts.metrics?.turnEnded('error', turn.startedAt, turn.hop);
  endPart(parts, turn, { error: asError(error) });
}

/** Counts the turn (or its part) as ended with its status now. */
export function countEnd(parts: LoopParts, turn: TurnState): void {
  parts.metrics?.turnEnded(turn.status, turn.startedAt, turn.hop);
}

/** Logs a failed (or blocked) turn's error, with its detail, which clients never see. */
export function logFailure(parts: LoopParts, turn: TurnState, error: Error): void {
  logTurnFailure(parts.logger, error, failedTurn(turn, parts.orchestrator.name));
}

/**
 * Starts the span of one decision, under the turn's; `owner` names the
 * session and user when they are not the current request's.
 */
export function startDecision(
  orchestrator: string,
  turnContext: Context,
  hop: number,
  candidates: readonly string[],
  owner?: { sessionId: string; userId?: string },
): Span {
  return startDecisionSpan(
    turnContext,
    owner
      ? {
          orchestrator,
          hop,
          candidates,
          sessionId: owner.sessionId,
          ...(owner.userId ? { userId: owner.userId } : {}),
        }
      : { orchestrator, hop, candidates },
  );
}

/** The context the decision (and the calls it makes) run in. */
export function decisionContextOf(turnContext: Context, decisionSpan: Span): Context {
  return withSpan(turnContext, decisionSpan);
}

/** Records the decision on its span, which stays open over the calls it made (every agent span lies inside it). */
export function decided(
  decisionSpan: Span,
  decision: Decision,
  recorded: Parameters<typeof endDecisionSpan>[2],
  durationMs: number,
): void {
  endDecisionSpan(decisionSpan, decision, recorded, { end: false, durationMs });
}

/** Ends a decision's span, once its calls are done. */
export function endDecision(decisionSpan: Span): void {
  endSpan(decisionSpan);
}

/** Marks the turn's span with a periodic review's verdict. */
export function noteReview(turn: TurnState, review: string, verdict: string): void {
  turn.span?.setAttribute(`switchboard.review.${review}`, verdict);
}

/** Span attributes of a resumed part: how each approval was resolved, by whom, and why. */
export function approvalAttributes(approvals: readonly ApprovalRecord[]): Record<string, string> {
  const resolved = approvals.filter((approval) => approval.status !== 'pending');
  return {
    'switchboard.approval.ids': resolved.map((approval) => approval.id).join(','),
    'switchboard.approval.decisions': resolved.map((approval) => approval.status).join(','),
    'switchboard.approval.decided_by': resolved.map((approval) => approval.decidedBy ?? '').join(','),
    'switchboard.approval.comments': JSON.stringify(resolved.map((approval) => approval.comment ?? '')),
  };
}

// ── Events ────────────────────────────────────────────────────────────────────

/**
 * Passes events on, except that the turn's end no longer ends the dialog:
 * more follows on the same stream (an error about an expired approval, or
 * the new message's turn after a recovered one).
 */
export function notEndingTheDialog(
  emit: ((event: TurnEvent) => void) | undefined,
): ((event: TurnEvent) => void) | undefined {
  if (!emit) return undefined;
  return (event) => emit(event.type === 'turn-end' ? { ...event, endOfDialog: false } : event);
}

/** `turn-start`: the turn (or, `resumed`, a stored turn's next part) begins. */
export function emitTurnStart(turn: TurnState, resumed?: 'approval' | 'recovery'): void {
  const { emit } = turn.runtime;
  if (!emit) return;
  const { sessionId, turnId, userMessageId: messageId, userText: message } = turn;
  emit(
    resumed === undefined
      ? { type: 'turn-start', sessionId, turnId, messageId, message, endOfMessage: true, eventId: '' }
      : {
          type: 'turn-start',
          sessionId,
          turnId,
          messageId,
          message,
          resumed,
          endOfMessage: true,
          eventId: '',
        },
  );
}

/** `route`: a step (a decision, or a note) was added to the turn. */
export function emitRoute(turn: TurnState, step: RouteStep): void {
  turn.runtime.emit?.({
    type: 'route',
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    messageId: createId('evt'),
    step,
    endOfMessage: true,
    eventId: '',
  });
}

/** The events of a paused part: one `approval-request` per pending approval, then `turn-end`. */
export function emitPause(turn: TurnState, pending: readonly ApprovalRecord[]): void {
  const { emit } = turn.runtime;
  if (!emit) return;
  const { sessionId, turnId } = turn;
  for (const approval of pending) {
    emit({
      type: 'approval-request',
      sessionId,
      turnId,
      messageId: createId('evt'),
      approvalId: approval.id,
      toolCallId: approval.toolCallId,
      agent: approval.agent,
      message: approval.message,
      reason: approval.reason,
      risk: approval.risk,
      expiresAt: approval.expiresAt,
      endOfMessage: true,
      eventId: '',
    });
  }
  emit(turnEnd(turn));
}

/** The events of an ended turn: `error` (when it has one), the answer as `message`, then `turn-end`. */
export function emitEnd(turn: TurnState, answerId: string, reply: string): void {
  const { emit } = turn.runtime;
  if (!emit) return;
  const { sessionId, turnId } = turn;
  if (turn.error) emit(errorEvent(sessionId, turnId, turn.error.code, reply));
  emit({
    type: 'message',
    sessionId,
    turnId,
    messageId: answerId,
    content: reply,
    endOfMessage: true,
    eventId: '',
  });
  emit(turnEnd(turn));
}

/** `error`: `code` with the message clients may see; `last` when it is the stream's last event. */
export function errorEvent(
  sessionId: string,
  turnId: string,
  code: string,
  message: string,
  last?: boolean,
): TurnEventBody {
  const messageId = createId('evt');
  return last
    ? {
        type: 'error',
        sessionId,
        turnId,
        messageId,
        code,
        message,
        endOfMessage: true,
        endOfDialog: true,
        eventId: '',
      }
    : { type: 'error', sessionId, turnId, messageId, code, message, endOfMessage: true, eventId: '' };
}

function turnEnd(turn: TurnState): TurnEventBody {
  return {
    type: 'turn-end',
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    messageId: createId('evt'),
    status: turn.status,
    traceId: turn.traceId,
    endOfMessage: true,
    endOfDialog: true,
    eventId: '',
  };
}

/** `value` as an Error (a thrown non-Error is wrapped). */
export function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
