import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { RequestContext } from '@switchboard/core';

/**
 * The span attribute keys Switchboard writes: Langfuse's keys (read by its
 * OTLP endpoint), GenAI semantic-convention names, and Switchboard's own.
 * Deliberately no bare `model` key: Langfuse turns any span carrying one
 * into a generation.
 */
export const SpanAttribute = {
  observationType: 'langfuse.observation.type',
  observationInput: 'langfuse.observation.input',
  observationOutput: 'langfuse.observation.output',
  observationLevel: 'langfuse.observation.level',
  observationStatusMessage: 'langfuse.observation.status_message',
  traceName: 'langfuse.trace.name',
  traceTags: 'langfuse.trace.tags',
  traceInput: 'langfuse.trace.input',
  traceOutput: 'langfuse.trace.output',
  sessionId: 'session.id',
  userId: 'user.id',
  genAiOperation: 'gen_ai.operation.name',
  genAiAgentName: 'gen_ai.agent.name',
  genAiToolName: 'gen_ai.tool.name',
  genAiToolCallId: 'gen_ai.tool.call.id',
  genAiConversationId: 'gen_ai.conversation.id',
  turnId: 'switchboard.turn.id',
  turnStatus: 'switchboard.turn.status',
  turnResumed: 'switchboard.turn.resumed',
  tenantId: 'switchboard.tenant.id',
  keyName: 'switchboard.auth.key_name',
  turnPreviousTraces: 'switchboard.turn.previous_traces',
  orchestrator: 'switchboard.orchestrator',
  hop: 'switchboard.hop',
  candidates: 'switchboard.candidates',
  decisionKind: 'switchboard.decision.kind',
  decisionAgents: 'switchboard.decision.agents',
  decisionThought: 'switchboard.decision.thought',
  decisionReason: 'switchboard.decision.reason',
  decisionDurationMs: 'switchboard.decision.duration_ms',
  agentStatus: 'switchboard.agent.status',
  stepAnnotations: 'switchboard.step.annotations',
  stepNotes: 'switchboard.step.notes',
  correlationId: 'switchboard.correlation_id',
} as const;

/** Langfuse observation types (`langfuse.observation.type`). */
export type ObservationType =
  | 'span'
  | 'generation'
  | 'event'
  | 'agent'
  | 'tool'
  | 'chain'
  | 'retriever'
  | 'evaluator'
  | 'embedding'
  | 'guardrail';

/**
 * Serialises a value for `langfuse.observation.input` / `.output`: JSON that
 * survives cycles, `bigint`s and `Error`s. Returns undefined for `undefined`.
 */
export function toJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return JSON.stringify(value);
  const ancestors: object[] = [];
  try {
    return JSON.stringify(value, function replace(this: unknown, _key: string, item: unknown) {
      if (typeof item === 'bigint') return item.toString();
      if (item instanceof Error) return { name: item.name, message: item.message };
      if (typeof item !== 'object' || item === null) return item;
      // `this` is the object holding `item`: drop finished siblings from the path before checking for a cycle.
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
      if (ancestors.includes(item)) return '[Circular]';
      ancestors.push(item);
      return item;
    });
  } catch {
    return JSON.stringify(String(value));
  }
}

/**
 * {@link toJson} for values whose shape Switchboard controls (strings, numbers,
 * plain objects and arrays of them): plain `JSON.stringify`, falling back to
 * the safe serialiser only when that throws (a cycle or a `bigint` from a
 * hand-written orchestrator). Several times cheaper than `toJson`.
 */
export function plainJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return toJson(value) ?? 'null';
  }
}

/**
 * Sets `session.id` and `user.id` on `span` (falling back to the current
 * `RequestContext`): Langfuse reads the trace's session and user from any of
 * its spans and filters observations by them, so every Switchboard span
 * carries them. Also sets
 * `gen_ai.conversation.id` too with `{ conversation: true }`: that GenAI
 * name belongs on GenAI operations (a turn, an agent call), and every byte a
 * span carries is paid again at export.
 */
export function setSessionAttributes(
  span: Span,
  sessionId?: string,
  userId?: string,
  { conversation = false }: { conversation?: boolean } = {},
): void {
  let session = sessionId;
  let user = userId;
  if (session === undefined || user === undefined) {
    const request = RequestContext.tryCurrent();
    session ??= request?.sessionId;
    user ??= request?.userId;
  }
  if (session !== undefined) {
    span.setAttribute(SpanAttribute.sessionId, session);
    if (conversation) span.setAttribute(SpanAttribute.genAiConversationId, session);
  }
  if (user !== undefined) span.setAttribute(SpanAttribute.userId, user);
}

/** Records `error` on `span`: an exception event, ERROR status and Langfuse's ERROR level. */
export function recordError(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
  span.setAttributes({
    [SpanAttribute.observationLevel]: 'ERROR',
    [SpanAttribute.observationStatusMessage]: exception.message,
  });
}
