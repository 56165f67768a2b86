import { type Context, INVALID_TRACEID, type Span, trace } from '@opentelemetry/api';

/**
 * The context with `span` active. With no tracer provider the span is a no-op
 * with an invalid context, and in a turn that was not sampled it is the
 * parent's own span (`startChildSpan`): either way the parent is returned as
 * is, with nothing allocated on the turn path.
 */
export function withSpan(parent: Context, span: Span): Context {
  return span.spanContext().traceId === INVALID_TRACEID || trace.getSpan(parent) === span
    ? parent
    : trace.setSpan(parent, span);
}
