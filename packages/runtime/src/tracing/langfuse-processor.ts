import { createRequire } from 'node:module';
import { isDefaultExportSpan, LangfuseSpanProcessor, type LangfuseSpanProcessorParams } from '@langfuse/otel';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConfigurationError } from '@switchboard/core';
import {
  loadProtobufExporterClass,
  type OtlpExporterClass,
  switchboardProtobufExporterClass,
} from './otlp-protobuf-exporter.js';

export type { OtlpExporterClass } from './otlp-protobuf-exporter.js';

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
  /**
   * How spans travel to Langfuse: OTLP/HTTP as protobuf (half the bytes, and
   * half the CPU of JSON with Switchboard's serialiser) or as JSON (Langfuse's
   * own default). Both go to the same endpoint with the same headers. Default:
   * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, then `OTEL_EXPORTER_OTLP_PROTOCOL`,
   * then `http/protobuf`. Ignored when you pass your own `exporter`.
   */
  protocol?: 'http/json' | 'http/protobuf';
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
  const {
    alsoExport,
    mediaUploadEnabled = mediaUploadFromEnv(process.env),
    protocol = protocolFromEnv(process.env),
    ...params
  } = options;
  const keep = langfuseExportFilter(alsoExport);
  const exporter = params.exporter ?? (protocol === 'http/protobuf' ? protobufExporter(params) : undefined);
  const langfuse = new DirectLangfuseSpanProcessor(
    {
      ...params,
      ...(exporter ? { exporter } : {}),
      mediaUploadEnabled,
      shouldExportSpan: ({ otelSpan }) => keep(otelSpan),
    },
    keep,
  );
  return new ReparentingSpanProcessor({ processor: langfuse, keep });
}

/**
 * The OTLP protocol the environment asks for: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`,
 * then `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf` (OpenTelemetry's
 * default, and half the CPU of JSON with Switchboard's serialiser).
 * @throws ConfigurationError for any other protocol (grpc is not supported).
 */
export function protocolFromEnv(env: Record<string, string | undefined>): 'http/json' | 'http/protobuf' {
  const asked = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || undefined;
  if (asked === undefined || asked === 'http/protobuf') return 'http/protobuf';
  if (asked === 'http/json') return 'http/json';
  throw new ConfigurationError({
    message: `Unsupported OTLP protocol '${asked}': use http/json or http/protobuf (or add your own exporter to your OpenTelemetry SDK)`,
  });
}

/**
 * The OTLP/protobuf trace exporter class: Switchboard's own serialiser over
 * OpenTelemetry's HTTP export delegate ({@link switchboardProtobufExporterClass};
 * the same bytes as `@opentelemetry/exporter-trace-otlp-proto`, serialised at about
 * 40 % of the CPU) when its optional peers `@opentelemetry/otlp-exporter-base`
 * and `@opentelemetry/otlp-transformer` are installed, else that package's
 * exporter. `load` replaces Switchboard's own `require` for both (the fast
 * class is then built anew rather than taken from the cache).
 * @throws ConfigurationError when neither can be loaded.
 */
export function protobufExporterClass(load?: (id: string) => unknown): OtlpExporterClass {
  const own = load ? loadProtobufExporterClass(load) : switchboardProtobufExporterClass();
  if (own) return own;
  try {
    return (
      (load ?? createRequire(import.meta.url))('@opentelemetry/exporter-trace-otlp-proto') as {
        OTLPTraceExporter: OtlpExporterClass;
      }
    ).OTLPTraceExporter;
  } catch (error) {
    throw new ConfigurationError({
      message:
        "OTLP protocol 'http/protobuf' needs '@opentelemetry/otlp-exporter-base' and '@opentelemetry/otlp-transformer' (Switchboard's fast exporter) or '@opentelemetry/exporter-trace-otlp-proto' installed, or use http/json (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)",
      cause: error,
    });
  }
}

/**
 * The exporter Langfuse would make (its URL, Basic auth and SDK headers,
 * its timeout), sending protobuf instead of JSON.
 */
function protobufExporter(params: LangfuseSpanProcessorParams): SpanExporter {
  const Exporter = protobufExporterClass();
  const env = process.env;
  const publicKey = params.publicKey ?? env.LANGFUSE_PUBLIC_KEY;
  const secretKey = params.secretKey ?? env.LANGFUSE_SECRET_KEY;
  const baseUrl = (
    params.baseUrl ??
    env.LANGFUSE_BASE_URL ??
    env.LANGFUSE_BASEURL ??
    'https://cloud.langfuse.com'
  ).replace(/\/+$/, '');
  const timeoutSeconds = params.timeout ?? Number(env.LANGFUSE_TIMEOUT ?? 5);
  const sdkVersion = langfuseSdkVersion();
  return new Exporter({
    url: `${baseUrl}/api/public/otel/v1/traces`,
    headers: {
      Authorization: `Basic ${Buffer.from(`${publicKey}:${secretKey}`).toString('base64')}`,
      'x-langfuse-sdk-name': 'javascript',
      ...(sdkVersion ? { 'x-langfuse-sdk-version': sdkVersion } : {}),
      'x-langfuse-public-key': publicKey ?? '<missing>',
      ...params.additionalHeaders,
    },
    timeoutMillis: timeoutSeconds * 1000,
  });
}

/**
 * `@langfuse/core`'s SDK version, the one `@langfuse/otel` sends, from the
 * optional peer `@langfuse/core` (`load` is the `require` that finds it);
 * undefined when it is not installed.
 */
export function langfuseSdkVersion(
  load: (id: string) => unknown = createRequire(import.meta.url),
): string | undefined {
  try {
    const version = (load('@langfuse/core') as Partial<typeof import('@langfuse/core')>).LANGFUSE_SDK_VERSION;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** Langfuse's own log level for debug output (`LogLevel.DEBUG` of `@langfuse/core`). */
const LANGFUSE_DEBUG = 0;

/** The parts of `LangfuseSpanProcessor` its `onEnd` uses, read to take the direct path. */
interface LangfuseInternals {
  mask?: unknown;
  mediaUploadEnabled?: boolean;
  processor?: SpanProcessor;
  spanExportExpectationById?: Map<string, boolean>;
  logger?: { isLevelEnabled?(level: number): boolean };
}

/**
 * `LangfuseSpanProcessor`, whose `onEnd` hands a kept span straight to its
 * batch processor when there is nothing to do in between: no `mask`, no
 * media upload, no debug logging. Langfuse's own `onEnd` awaits its mask
 * step for every span even without a mask (half a dozen promises a span);
 * this path exports the very same span, attributes untouched. Should a
 * release of `@langfuse/otel` change those internals, it takes Langfuse's
 * own path.
 */
class DirectLangfuseSpanProcessor extends LangfuseSpanProcessor {
  readonly #keep: SpanPredicate;
  readonly #direct: boolean;

  constructor(params: LangfuseSpanProcessorParams, keep: SpanPredicate) {
    super(params);
    this.#keep = keep;
    const internals = this as unknown as LangfuseInternals;
    this.#direct =
      internals.mask === undefined &&
      internals.mediaUploadEnabled === false &&
      typeof internals.processor?.onEnd === 'function' &&
      internals.spanExportExpectationById instanceof Map;
  }

  override onEnd(span: ReadableSpan): void {
    const internals = this as unknown as LangfuseInternals;
    if (!this.#direct || internals.logger?.isLevelEnabled?.(LANGFUSE_DEBUG) !== false) {
      super.onEnd(span);
      return;
    }
    internals.spanExportExpectationById?.delete(span.spanContext().spanId);
    let kept: boolean;
    try {
      kept = this.#keep(span);
    } catch {
      return;
    }
    if (kept) internals.processor?.onEnd(span);
  }
}
