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
  /**
   * Langfuse's media handling: scan every exported input and output for
   * base64 data URIs and upload them as Langfuse media. Default: the
   * `LANGFUSE_MEDIA_UPLOAD_ENABLED` variable, else **off** (Langfuse's own
   * default is on). Switchboard's spans carry text, and the scan costs about
   * as much CPU per span as serialising the span for export; turn it on when
   * your agents or models trace images or files as data URIs.
   */
  mediaUploadEnabled?: boolean;
}

/** `LANGFUSE_MEDIA_UPLOAD_ENABLED` read the way Langfuse reads it, but off when unset. */
export function mediaUploadFromEnv(env: Record<string, string | undefined>): boolean {
  const value = env.LANGFUSE_MEDIA_UPLOAD_ENABLED;
  return value ? !['false', '0'].includes(value.toLowerCase()) : false;
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
 * Throughput: spans are sent in batches of `flushAt` (default 512; also
 * `LANGFUSE_FLUSH_AT`), one batch at a time, and at most 2048 finished spans
 * wait; more are dropped. A process can therefore export about `flushAt`
 * spans per round trip to Langfuse — with 512 and 200 ms, some 2 500 spans/s,
 * i.e. 600 turns/s that call one agent each (such a turn makes 4 spans).
 * Raise `flushAt` (at most 2048) for more, or run more replicas.
 * `flushInterval` (seconds, default 5; `LANGFUSE_FLUSH_INTERVAL`) bounds how
 * long a span waits when traffic is light.
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
  const { alsoExport, mediaUploadEnabled = mediaUploadFromEnv(process.env), ...params } = options;
  const keep = langfuseExportFilter(alsoExport);
  const langfuse = new LangfuseSpanProcessor({
    ...params,
    mediaUploadEnabled,
    shouldExportSpan: ({ otelSpan }) => keep(otelSpan),
  });
  return new ReparentingSpanProcessor({ processor: langfuse, keep });
}
