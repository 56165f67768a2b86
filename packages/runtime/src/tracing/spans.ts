import type { Decision } from '@switchboard/core';
import { type Context, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';

/** The instrumentation scope of every span Switchboard creates. */
export const TRACER_NAME = 'switchboard';

// A ProxyTracer: it follows whatever provider is registered later, so getting it once is safe.
const tracer = trace.getTracer(TRACER_NAME);

/** What the engine knows when a turn starts. */
export interface TurnSpanInfo {
  orchestrator: string;
  sessionId: string;
  turnId: string;
  userId?: string;
  input: string;
}

/** Starts the root span of a turn. */
export function startTurnSpan(info: TurnSpanInfo): Span {
  const span = tracer.startSpan(info.orchestrator, { root: true }, context.active());
  if (span.isRecording()) {
    span.setAttributes({
      'langfuse.observation.type': 'agent',
      'langfuse.trace.name': info.orchestrator,
      'session.id': info.sessionId,
      'switchboard.turn.id': info.turnId,
      'langfuse.observation.input': JSON.stringify(info.input),
      'langfuse.trace.input': JSON.stringify(info.input),
    });
    if (info.userId) span.setAttribute('user.id', info.userId);
  }
  return span;
}

/** Ends a turn span with its reply or error. */
export function endTurnSpan(span: Span, outcome: { output?: string; error?: Error }): void {
  if (span.isRecording()) {
    if (outcome.output !== undefined) {
      span.setAttribute('langfuse.observation.output', JSON.stringify(outcome.output));
      span.setAttribute('langfuse.trace.output', JSON.stringify(outcome.output));
    }
    if (outcome.error) {
      span.recordException(outcome.error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
    }
  }
  span.end();
}

/** Starts the span of one routing decision under `parent`. */
export function startDecisionSpan(
  parent: Context,
  info: { orchestrator: string; hop: number; candidates: readonly string[] },
): Span {
  const span = tracer.startSpan(`route ${info.hop}`, undefined, parent);
  if (span.isRecording()) {
    span.setAttributes({
      'langfuse.observation.type': 'chain',
      'switchboard.orchestrator': info.orchestrator,
      'switchboard.hop': info.hop,
      'switchboard.candidates': [...info.candidates],
    });
  }
  return span;
}

/** Ends a decision span with what was decided. */
export function endDecisionSpan(span: Span, decision: Decision): void {
  span.end();
  void decision;
}

/** Starts the span of one agent call under `parent`. */
export function startAgentSpan(parent: Context, info: { agent: string; toolCallId: string; message: string }): Span {
  const span = tracer.startSpan(`agent ${info.agent}`, undefined, parent);
  if (span.isRecording()) {
    span.setAttributes({
      'langfuse.observation.type': 'tool',
      'switchboard.agent': info.agent,
      'switchboard.tool_call.id': info.toolCallId,
      'langfuse.observation.input': JSON.stringify(info.message),
    });
  }
  return span;
}

/** Ends an agent span with its reply, status and error. */
export function endAgentSpan(span: Span, result: { status: 'ok' | 'error'; content: string; error?: Error }): void {
  if (span.isRecording()) {
    span.setAttribute('langfuse.observation.output', JSON.stringify(result.content));
    if (result.status === 'error') {
      if (result.error) span.recordException(result.error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error?.message ?? result.content });
    }
  }
  span.end();
}

/** The trace id of a span, or undefined when tracing is off. */
export function traceIdOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  return span.isRecording() ? spanContext.traceId : undefined;
}
