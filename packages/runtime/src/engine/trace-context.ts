import { type Context, INVALID_TRACEID, type Span, trace } from '@opentelemetry/api';

/**
 * The context with `span` active. With no tracer provider the span is a no-op
 * with an invalid context, and the parent is returned as is: nothing to
 * propagate, and no context allocated on the turn path.
 */
export function withSpan(parent: Context, span: Span): Context {
  return span.spanContext().traceId === INVALID_TRACEID ? parent : trace.setSpan(parent, span);
}
