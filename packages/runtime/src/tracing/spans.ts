import {
  type Context,
  context,
  isSpanContextValid,
  type Span,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { type Decision, isErrorMessage, ROUTE_TO_USER, type ToolCall } from '@switchboard/core';
import type { RouteStep } from '../stores/session-store.js';
import { recordError, SpanAttribute, sessionAttributes, toJson } from './span-attributes.js';

/** The instrumentation scope of every span Switchboard creates (the turn, its decisions and agent calls). */
export const TRACER_NAME = 'switchboard';

/**
 * Switchboard's tracer. Call it for each span rather than keeping the result:
 * it follows the globally registered provider, also across `trace.disable()`
 * and a later registration (tests, or `setupTracing()` after a shutdown).
 */
export function switchboardTracer(): Tracer {
  // Cached per registered provider, so the turn path allocates no tracer.
  const provider = trace.getTracerProvider();
  const delegate = (provider as { getDelegate?: () => TracerProvider }).getDelegate?.() ?? provider;
  if (cachedTracer?.delegate !== delegate)
    cachedTracer = { delegate, tracer: delegate.getTracer(TRACER_NAME) };
  return cachedTracer.tracer;
}

let cachedTracer: { delegate: TracerProvider; tracer: Tracer } | undefined;

/** What the engine knows when a turn starts. */
export interface TurnSpanInfo {
  orchestrator: string;
  sessionId: string;
  turnId: string;
  userId?: string;
  input: string;
}

/**
 * Starts the root span of a turn: one Langfuse trace per turn, named after the
 * orchestrator, with the user message as trace and observation input. When a
 * span is active (e.g. an HTTP server span), the turn links to it.
 */
export function startTurnSpan(info: TurnSpanInfo): Span {
  const active = context.active();
  // A new trace per turn (Langfuse groups by trace); a link keeps the way back to an enclosing request span.
  const enclosing = trace.getSpanContext(active);
  const links = enclosing && isSpanContextValid(enclosing) ? [{ context: enclosing }] : undefined;
  const span = switchboardTracer().startSpan(info.orchestrator, { root: true, links }, active);
  if (span.isRecording()) {
    const input = toJson(info.input) ?? '""';
    span.setAttributes({
      ...sessionAttributes(info.sessionId, info.userId),
      [SpanAttribute.observationType]: 'agent',
      [SpanAttribute.traceName]: info.orchestrator,
      [SpanAttribute.genAiOperation]: 'invoke_agent',
      [SpanAttribute.genAiAgentName]: info.orchestrator,
      [SpanAttribute.orchestrator]: info.orchestrator,
      [SpanAttribute.turnId]: info.turnId,
      [SpanAttribute.observationInput]: input,
      [SpanAttribute.traceInput]: input,
    });
  }
  return span;
}

/** How a turn ended, for {@link endTurnSpan}. */
export interface TurnSpanOutcome {
  /** The reply the user sees (trace and observation output). */
  output?: string;
  /** The turn's error: recorded on the span with ERROR status. */
  error?: Error;
  /** The turn status, e.g. `completed` or `failed`. */
  status?: string;
}

/** Ends a turn span with its reply or error. */
export function endTurnSpan(span: Span, outcome: TurnSpanOutcome): void {
  if (span.isRecording()) {
    if (outcome.output !== undefined) {
      const output = toJson(outcome.output) ?? '""';
      span.setAttribute(SpanAttribute.observationOutput, output);
      span.setAttribute(SpanAttribute.traceOutput, output);
    }
    if (outcome.status !== undefined) span.setAttribute(SpanAttribute.turnStatus, outcome.status);
    if (outcome.error) recordError(span, outcome.error);
  }
  span.end();
}

/** What the engine knows when it asks the orchestrator for a decision. */
export interface DecisionSpanInfo {
  orchestrator: string;
  /** 0 for the first decision of the turn. */
  hop: number;
  /** The agents the orchestrator may choose from. */
  candidates: readonly string[];
  /** Defaults to the current `RequestContext`'s session. */
  sessionId?: string;
  /** Defaults to the current `RequestContext`'s user. */
  userId?: string;
}

/**
 * Starts the span of one routing decision (`route <hop>`, a Langfuse chain)
 * under `parent`. Run the orchestrator inside its context so that spans of
 * `observe`d code nest under it.
 */
export function startDecisionSpan(parent: Context, info: DecisionSpanInfo): Span {
  const span = switchboardTracer().startSpan(`route ${info.hop}`, undefined, parent);
  if (span.isRecording()) {
    span.setAttributes({
      ...sessionAttributes(info.sessionId, info.userId),
      [SpanAttribute.observationType]: 'chain',
      [SpanAttribute.genAiAgentName]: info.orchestrator,
      [SpanAttribute.orchestrator]: info.orchestrator,
      [SpanAttribute.hop]: info.hop,
      [SpanAttribute.candidates]: [...info.candidates],
      [SpanAttribute.observationInput]: toJson({ hop: info.hop, candidates: info.candidates }),
    });
  }
  return span;
}

type CallSummary = Partial<Pick<ToolCall, 'id' | 'toolName' | 'message' | 'thought' | 'reason'>>;

// Defensive: a hand-written `Orchestrator` may return anything, and tracing must never fail a turn.
function callsOf(decision: unknown): CallSummary[] {
  const items: unknown[] = Array.isArray(decision) ? decision : [decision];
  return items.map((item) => (typeof item === 'object' && item !== null ? (item as CallSummary) : {}));
}

/** The kind of a decision, in the vocabulary of the turn's recorded steps (`RouteStep.kind`). */
function decisionKind(decision: Decision): RouteStep['kind'] {
  if (isErrorMessage(decision)) return 'error';
  const calls = callsOf(decision);
  if (calls.length > 1) return 'fan-out';
  return calls[0]?.toolName === ROUTE_TO_USER ? 'answer' : 'call';
}

/**
 * Ends a decision span with what was decided: the outcome kind (`call`,
 * `fan-out`, `answer` or `error`, as in the turn's recorded steps), the
 * chosen agents, and the orchestrator's `thought` and `reason` (strings for
 * one call, arrays aligned with the agents for a fan-out). An
 * `ErrorMessage` sets ERROR status.
 */
export function endDecisionSpan(span: Span, decision: Decision): void {
  if (span.isRecording()) {
    const kind = decisionKind(decision);
    span.setAttribute(SpanAttribute.decisionKind, kind);
    if (isErrorMessage(decision)) {
      span.setAttribute(
        SpanAttribute.observationOutput,
        toJson({ kind, error: decision.error.message, userMessage: decision.userMessage }) ?? '{}',
      );
      recordError(span, decision.error);
    } else {
      const calls = callsOf(decision);
      span.setAttribute(
        SpanAttribute.decisionAgents,
        calls.map((call) => String(call.toolName ?? '')),
      );
      const [only] = calls;
      if (calls.length === 1 && only) {
        if (only.thought !== undefined)
          span.setAttribute(SpanAttribute.decisionThought, String(only.thought));
        if (only.reason !== undefined) span.setAttribute(SpanAttribute.decisionReason, String(only.reason));
      } else {
        span.setAttribute(
          SpanAttribute.decisionThought,
          calls.map((call) => String(call.thought ?? '')),
        );
        span.setAttribute(
          SpanAttribute.decisionReason,
          calls.map((call) => String(call.reason ?? '')),
        );
      }
      const summary = calls.map(({ id, toolName, message, thought, reason }) => ({
        toolCallId: id,
        agent: toolName,
        message,
        thought,
        reason,
      }));
      span.setAttribute(SpanAttribute.observationOutput, toJson({ kind, calls: summary }) ?? '{}');
    }
  }
  span.end();
}

/** What the engine knows when it calls an agent. */
export interface AgentSpanInfo {
  agent: string;
  toolCallId: string;
  /** The task text sent to the agent (observation input). */
  message: string;
  /** Defaults to the current `RequestContext`'s session. */
  sessionId?: string;
  /** Defaults to the current `RequestContext`'s user. */
  userId?: string;
}

/** Starts the span of one agent call (`agent <name>`, a Langfuse tool observation) under `parent`. */
export function startAgentSpan(parent: Context, info: AgentSpanInfo): Span {
  const span = switchboardTracer().startSpan(`agent ${info.agent}`, undefined, parent);
  if (span.isRecording()) {
    span.setAttributes({
      ...sessionAttributes(info.sessionId, info.userId),
      [SpanAttribute.observationType]: 'tool',
      [SpanAttribute.genAiOperation]: 'execute_tool',
      [SpanAttribute.genAiToolName]: info.agent,
      [SpanAttribute.genAiToolCallId]: info.toolCallId,
      [SpanAttribute.agent]: info.agent,
      [SpanAttribute.toolCallId]: info.toolCallId,
      [SpanAttribute.observationInput]: toJson(info.message) ?? '""',
    });
  }
  return span;
}

/** The result of an agent call, for {@link endAgentSpan}. */
export interface AgentSpanResult {
  status: 'ok' | 'error';
  /** The reply, or the error text the orchestrator sees. */
  content: string;
  /** The failure (thrown error or timeout), recorded as an exception. */
  error?: Error;
}

/** Ends an agent span with its reply and status; a failed call gets ERROR status and the exception. */
export function endAgentSpan(span: Span, result: AgentSpanResult): void {
  if (span.isRecording()) {
    span.setAttribute(SpanAttribute.observationOutput, toJson(result.content) ?? '""');
    span.setAttribute(SpanAttribute.agentStatus, result.status);
    if (result.status === 'error') {
      if (result.error) recordError(span, result.error);
      else {
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.content });
        span.setAttribute(SpanAttribute.observationLevel, 'ERROR');
      }
    }
  }
  span.end();
}

/** The trace id of a span, or undefined when tracing is off or the trace is not sampled (so never exported). */
export function traceIdOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  const sampled = (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
  return sampled && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
