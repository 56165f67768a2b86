import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  ProxyTracerProvider,
  type Span,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { type Decision, isErrorMessage, ROUTE_TO_USER, type StepAnnotations } from '@switchboard/core';
import type { RouteStep } from '../stores/session-store.js';
import { type CallSummary, candidateRecord, decisionInput, decisionOutput } from './decision-json.js';
import { plainJson, recordError, SpanAttribute, setSessionAttributes } from './span-attributes.js';
import { endSpan, spanTime } from './span-clock.js';

/** The instrumentation scope of every span Switchboard creates (the turn, its decisions and agent calls). */
export const TRACER_NAME = 'switchboard';

/**
 * Switchboard's tracer. Call it for each span rather than keeping the result:
 * it follows the globally registered provider, also across `trace.disable()`
 * and a later registration (tests, or `setupTracing()` after a shutdown).
 */
export function switchboardTracer(): Tracer {
  return currentTracer().tracer;
}

interface CachedTracer {
  delegate: TracerProvider;
  tracer: Tracer;
  /** No tracer provider is registered: every span is a no-op that records nothing. */
  off: boolean;
}

let cachedTracer: CachedTracer | undefined;

// What `trace.getTracerProvider()` delegates to while no provider is registered (read through the public API).
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();
/** The span of a turn while tracing is off: what the no-op tracer returns, shared rather than made per turn. */
const OFF_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

function currentTracer(): CachedTracer {
  // Cached per registered provider, so the turn path allocates no tracer.
  const provider = trace.getTracerProvider();
  const delegate = (provider as { getDelegate?: () => TracerProvider }).getDelegate?.() ?? provider;
  if (cachedTracer?.delegate !== delegate)
    cachedTracer = { delegate, tracer: delegate.getTracer(TRACER_NAME), off: delegate === NOOP_PROVIDER };
  return cachedTracer;
}

/**
 * Starts a Switchboard span under `parent`, unless `parent`'s span is one
 * that was not sampled (a turn left out by `sampleRate`): then that very span
 * is returned, and nothing is started. Under a parent-based sampler every
 * span below it would be left out anyway; this skips making the ids, asking
 * the sampler and allocating a context for each decision, agent call and
 * model call of such a turn. A span ended or recorded by a sampler that
 * records without sampling does not count as unsampled. With tracing off,
 * the parent's no-op span is returned the same way, and the clock is not read.
 */
export function startChildSpan(name: string, parent: Context): Span {
  const { tracer, off } = currentTracer();
  const parentSpan = trace.getSpan(parent);
  if (parentSpan !== undefined && !parentSpan.isRecording()) {
    const parentContext = parentSpan.spanContext();
    if (isSpanContextValid(parentContext) ? (parentContext.traceFlags & TraceFlags.SAMPLED) === 0 : off)
      return parentSpan;
  }
  return tracer.startSpan(name, off ? undefined : { startTime: spanTime() }, parent);
}

/** What the engine knows when a turn starts. */
export interface TurnSpanInfo {
  orchestrator: string;
  /** The trace's name in Langfuse (default: the orchestrator's name). */
  traceName?: string;
  sessionId: string;
  turnId: string;
  userId?: string;
  input: string;
  /** The earlier parts of a resumed turn: the new part's trace links to each. */
  links?: ReadonlyArray<{ traceId: string; spanId: string }>;
  /** Why this part runs: the turn continues after its approvals, after its replica stopped, or is cancelled. */
  resumed?: 'approval' | 'recovery' | 'cancel';
  /** More attributes for the part's span (e.g. how its approvals were resolved). */
  attributes?: Readonly<Record<string, string>>;
  /** The tenant of the session, with auth on. */
  tenantId?: string;
  /** The name of the API key the request came with (never the key). */
  keyName?: string;
}

/**
 * Starts the root span of a turn: one Langfuse trace per turn, named
 * `traceName` (the engine passes the app and the entry point), with the user
 * message as trace and observation input. The span itself is named after the
 * orchestrator. When a span is active (e.g. an HTTP server span), the turn
 * links to it.
 *
 * The span is an `agent` observation with `gen_ai.operation.name`
 * `invoke_agent`, which Langfuse also maps to an agent; Langfuse reads no
 * model usage from `invoke_agent` spans, so usage is never put on it: it
 * lives on the generations of the model calls, which Langfuse sums per trace.
 */
export function startTurnSpan(info: TurnSpanInfo): Span {
  // With tracing off the no-op tracer would return a new span with an invalid context: this one is the same.
  if (currentTracer().off) return OFF_SPAN;
  const active = context.active();
  // A new trace per turn (Langfuse groups by trace); a link keeps the way back to an enclosing request span.
  const enclosing = trace.getSpanContext(active);
  let links = enclosing && isSpanContextValid(enclosing) ? [{ context: enclosing }] : undefined;
  if (info.links && info.links.length > 0) {
    // A resumed turn is a new trace in the same session, linked to the part(s) before it.
    links = [
      ...(links ?? []),
      ...info.links.map(({ traceId, spanId }) => ({
        context: { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true },
        attributes: { 'switchboard.link': 'earlier part of the turn' },
      })),
    ];
  }
  const span = switchboardTracer().startSpan(
    info.orchestrator,
    { root: true, links, startTime: spanTime() },
    active,
  );
  if (span.isRecording()) {
    // One `setAttribute` per key: an object spread here costs more than the span itself.
    const input = plainJson(info.input);
    setSessionAttributes(span, info.sessionId, info.userId, { conversation: true });
    span.setAttribute(SpanAttribute.observationType, 'agent');
    span.setAttribute(SpanAttribute.traceName, info.traceName ?? info.orchestrator);
    span.setAttribute(SpanAttribute.genAiOperation, 'invoke_agent');
    span.setAttribute(SpanAttribute.genAiAgentName, info.orchestrator);
    span.setAttribute(SpanAttribute.orchestrator, info.orchestrator);
    span.setAttribute(SpanAttribute.turnId, info.turnId);
    span.setAttribute(SpanAttribute.observationInput, input);
    span.setAttribute(SpanAttribute.traceInput, input);
    if (info.resumed) span.setAttribute(SpanAttribute.turnResumed, info.resumed);
    if (info.tenantId !== undefined) span.setAttribute(SpanAttribute.tenantId, info.tenantId);
    if (info.keyName !== undefined) span.setAttribute(SpanAttribute.keyName, info.keyName);
    if (info.links?.length)
      span.setAttribute(
        SpanAttribute.turnPreviousTraces,
        info.links.map((link) => link.traceId),
      );
    for (const [key, value] of Object.entries(info.attributes ?? {})) span.setAttribute(key, value);
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
  /** The trace's tags (`langfuse.trace.tags`): app, orchestrator, agents called, the request's own. */
  tags?: readonly string[];
}

/** Ends a turn span with its reply or error. */
export function endTurnSpan(span: Span, outcome: TurnSpanOutcome): void {
  if (span.isRecording()) {
    if (outcome.output !== undefined) {
      const output = plainJson(outcome.output);
      span.setAttribute(SpanAttribute.observationOutput, output);
      span.setAttribute(SpanAttribute.traceOutput, output);
    }
    if (outcome.status !== undefined) span.setAttribute(SpanAttribute.turnStatus, outcome.status);
    if (outcome.tags) span.setAttribute(SpanAttribute.traceTags, outcome.tags as string[]);
    if (outcome.error) recordError(span, outcome.error);
  }
  endSpan(span);
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
  const span = startChildSpan(`route ${info.hop}`, parent);
  if (span.isRecording()) {
    setSessionAttributes(span, info.sessionId, info.userId);
    span.setAttribute(SpanAttribute.observationType, 'chain');
    span.setAttribute(SpanAttribute.genAiAgentName, info.orchestrator);
    span.setAttribute(SpanAttribute.orchestrator, info.orchestrator);
    span.setAttribute(SpanAttribute.hop, info.hop);
    const candidates = candidateRecord(info.candidates);
    span.setAttribute(SpanAttribute.candidates, candidates.names);
    span.setAttribute(SpanAttribute.observationInput, decisionInput(candidates, info.hop));
  }
  return span;
}

// Defensive: a hand-written `Orchestrator` may return anything, and tracing must never fail a turn.
function callsOf(decision: unknown): CallSummary[] {
  const items: unknown[] = Array.isArray(decision) ? decision : [decision];
  return items.map((item) => (typeof item === 'object' && item !== null ? (item as CallSummary) : {}));
}

/** The kind of a decision, in the vocabulary of the turn's recorded steps (`RouteStep.kind`). */
function decisionKind(calls: readonly CallSummary[]): RouteStep['kind'] {
  if (calls.length > 1) return 'fan-out';
  return calls[0]?.toolName === ROUTE_TO_USER ? 'answer' : 'call';
}

function setCallAttributes(span: Span, calls: readonly CallSummary[]): void {
  const [only] = calls;
  if (calls.length === 1 && only) {
    span.setAttribute(SpanAttribute.decisionAgents, [String(only.toolName ?? '')]);
    if (only.thought !== undefined) span.setAttribute(SpanAttribute.decisionThought, String(only.thought));
    if (only.reason !== undefined) span.setAttribute(SpanAttribute.decisionReason, String(only.reason));
    return;
  }
  span.setAttribute(
    SpanAttribute.decisionAgents,
    calls.map((call) => String(call.toolName ?? '')),
  );
  span.setAttribute(
    SpanAttribute.decisionThought,
    calls.map((call) => String(call.thought ?? '')),
  );
  span.setAttribute(
    SpanAttribute.decisionReason,
    calls.map((call) => String(call.reason ?? '')),
  );
}

/**
 * Ends a decision span with what was decided: the outcome kind (`call`,
 * `fan-out`, `answer` or `error`, as in the turn's recorded steps), the
 * chosen agents, and the orchestrator's `thought` and `reason` (strings for
 * one call, arrays aligned with the agents for a fan-out). An
 * `ErrorMessage` sets ERROR status.
 */
export function endDecisionSpan(
  span: Span,
  decision: Decision,
  recorded?: {
    annotations?: StepAnnotations;
    notes?: readonly { label?: string; annotations?: StepAnnotations }[];
  },
  { end = true, durationMs }: { end?: boolean; durationMs?: number } = {},
): void {
  if (span.isRecording()) {
    // The decision's own time: with `end: false` the span stays open over the calls it made.
    if (durationMs !== undefined) span.setAttribute(SpanAttribute.decisionDurationMs, durationMs);
    // What the orchestrator recorded beside its calls (a plan, a chosen pattern, a fan-out's correlation id).
    const annotations = recorded?.annotations;
    if (annotations) {
      span.setAttribute(SpanAttribute.stepAnnotations, plainJson(annotations));
      if (typeof annotations.correlationId === 'string')
        span.setAttribute(SpanAttribute.correlationId, annotations.correlationId);
    }
    if (recorded?.notes)
      span.setAttribute(
        SpanAttribute.stepNotes,
        plainJson(recorded.notes.map((note) => ({ label: note.label, annotations: note.annotations }))),
      );
    if (isErrorMessage(decision)) {
      span.setAttribute(SpanAttribute.decisionKind, 'error');
      span.setAttribute(
        SpanAttribute.observationOutput,
        plainJson({ kind: 'error', error: decision.error.message, userMessage: decision.userMessage }),
      );
      recordError(span, decision.error);
    } else {
      const calls = callsOf(decision);
      const kind = decisionKind(calls);
      span.setAttribute(SpanAttribute.decisionKind, kind);
      setCallAttributes(span, calls);
      span.setAttribute(SpanAttribute.observationOutput, decisionOutput(kind, calls));
    }
  }
  if (end) endSpan(span);
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
  /** The correlation id of the fan-out the call belongs to, when its step has one. */
  correlationId?: string;
}

/** Starts the span of one agent call (`agent <name>`, a Langfuse tool observation) under `parent`. */
export function startAgentSpan(parent: Context, info: AgentSpanInfo): Span {
  const span = startChildSpan(`agent ${info.agent}`, parent);
  if (span.isRecording()) {
    setSessionAttributes(span, info.sessionId, info.userId, { conversation: true });
    span.setAttribute(SpanAttribute.observationType, 'tool');
    span.setAttribute(SpanAttribute.genAiOperation, 'execute_tool');
    span.setAttribute(SpanAttribute.genAiToolName, info.agent);
    span.setAttribute(SpanAttribute.genAiToolCallId, info.toolCallId);
    if (info.correlationId) span.setAttribute(SpanAttribute.correlationId, info.correlationId);
    span.setAttribute(SpanAttribute.observationInput, plainJson(info.message));
  }
  return span;
}

/** The result of an agent call, for {@link endAgentSpan}. */
export interface AgentSpanResult {
  /** `paused`: the agent waits for a person's approval (its call runs again once decided). */
  status: 'ok' | 'error' | 'paused';
  /** The reply, or the error text the orchestrator sees. */
  content: string;
  /** The failure (thrown error or timeout), recorded as an exception. */
  error?: Error;
}

/** Ends an agent span with its reply and status; a failed call gets ERROR status and the exception. */
export function endAgentSpan(span: Span, result: AgentSpanResult): void {
  if (span.isRecording()) {
    span.setAttribute(SpanAttribute.observationOutput, plainJson(result.content));
    span.setAttribute(SpanAttribute.agentStatus, result.status);
    if (result.status === 'error') {
      if (result.error) recordError(span, result.error);
      else {
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.content });
        span.setAttribute(SpanAttribute.observationLevel, 'ERROR');
      }
    }
  }
  endSpan(span);
}

/** The trace id of a span, or undefined when tracing is off or the trace is not sampled (so never exported). */
export function traceIdOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  const sampled = (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
  return sampled && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
