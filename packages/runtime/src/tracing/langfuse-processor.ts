import { isDefaultExportSpan, LangfuseSpanProcessor, type LangfuseSpanProcessorParams } from '@langfuse/otel';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  isSwitchboardSpan,
  ReparentingSpanProcessor,
  type SpanPredicate,
} from './reparenting-span-processor.js';

/** Options of {@link switchboardSpanProcessor}: Langfuse's own options, with the export filter replaced. */
export interface SwitchboardSpanProcessorOptions
  extends Omit<LangfuseSpanProcessorParams, 'shouldExportSpan'> {
  /**
   * Which other spans to send besides Switchboard's own (which always go).
   * Default: Langfuse's default filter — Langfuse SDK spans, spans with
   * `gen_ai.*` attributes and known LLM instrumentations.
   */
  alsoExport?: SpanPredicate;
}

/**
 * The predicate Switchboard's Langfuse export uses: Switchboard's scopes
 * (`switchboard`, `switchboard.observe`) plus `alsoExport`.
 */
export function langfuseExportFilter(alsoExport: SpanPredicate = isDefaultExportSpan): SpanPredicate {
  return (span: ReadableSpan) => isSwitchboardSpan(span) || alsoExport(span);
}

/**
 * A span processor that sends Switchboard's spans to Langfuse: a
 * `LangfuseSpanProcessor` (from `@langfuse/otel`) whose filter keeps
 * Switchboard's turns, routing decisions, agent calls and `observe` spans,
 * behind a {@link ReparentingSpanProcessor} so that no exported span points at
 * a parent the filter dropped. Keys and URL come from the options or from
 * `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY` and `LANGFUSE_BASE_URL`.
 *
 * Use it when you run your own OpenTelemetry SDK; otherwise `setupTracing()`
 * does this for you.
 *
 * @example
 * ```ts
 * import { NodeSDK } from '@opentelemetry/sdk-node';
 * import { switchboardSpanProcessor } from '@switchboard/runtime/otel';
 *
 * const sdk = new NodeSDK({ spanProcessors: [switchboardSpanProcessor(), yourOtherProcessor] });
 * sdk.start();
 * ```
 */
export function switchboardSpanProcessor(options: SwitchboardSpanProcessorOptions = {}): SpanProcessor {
  const { alsoExport, ...params } = options;
  const keep = langfuseExportFilter(alsoExport);
  const langfuse = new LangfuseSpanProcessor({
    ...params,
    shouldExportSpan: ({ otelSpan }) => keep(otelSpan),
  });
  return new ReparentingSpanProcessor({ processor: langfuse, keep });
}
