/**
 * `@switchboard/runtime/otel`: export Switchboard's traces to Langfuse or any
 * OTLP backend. Importing this module registers nothing; call
 * {@link setupTracing} (or add {@link switchboardSpanProcessor} to your own
 * OpenTelemetry SDK).
 *
 * @module
 */
export { endGeneration, type GenerationStart, startGeneration } from './agents/llm-tracing.js';
export {
  langfuseExportFilter,
  type SwitchboardSpanProcessorOptions,
  switchboardSpanProcessor,
} from './tracing/langfuse-processor.js';
export { OBSERVE_TRACER_NAME } from './tracing/observe.js';
export {
  isSwitchboardSpan,
  ORIGINAL_PARENT_ATTRIBUTE,
  ReparentingSpanProcessor,
  type ReparentingSpanProcessorOptions,
  type SpanPredicate,
} from './tracing/reparenting-span-processor.js';
export {
  type OtlpOptions,
  type SetupTracingOptions,
  setupTracing,
  type TracingHandle,
} from './tracing/setup-tracing.js';
export { TRACER_NAME } from './tracing/spans.js';
