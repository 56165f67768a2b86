import { createRequire } from 'node:module';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { serializeSpansAsProtobuf } from './otlp-protobuf.js';

type ExporterBaseModule = typeof import('@opentelemetry/otlp-exporter-base');
type NodeHttpModule = typeof import('@opentelemetry/otlp-exporter-base/node-http');
type TransformerModule = typeof import('@opentelemetry/otlp-transformer');

/** What an OTLP trace exporter class is constructed with (the subset Switchboard passes). */
export interface OtlpExporterConfig {
  url: string;
  headers?: Record<string, string>;
  timeoutMillis?: number;
}

/** An OTLP trace exporter class, as `@opentelemetry/exporter-trace-otlp-*` export it. */
export type OtlpExporterClass = new (config: OtlpExporterConfig) => SpanExporter;

/**
 * The optional peers {@link switchboardProtobufExporterClass} is built from,
 * both public OpenTelemetry packages: the OTLP/HTTP export delegate and
 * `OTLPExporterBase` (`@opentelemetry/otlp-exporter-base` and its
 * `/node-http` export), and the response deserialiser and exporter metrics
 * helper (`@opentelemetry/otlp-transformer`).
 */
export const FAST_PROTOBUF_EXPORTER_PEERS = [
  '@opentelemetry/otlp-exporter-base',
  '@opentelemetry/otlp-transformer',
] as const;

/**
 * An OTLP/HTTP protobuf trace exporter class that writes requests with
 * {@link serializeSpansAsProtobuf} and sends them through OpenTelemetry's own
 * HTTP export delegate (its timeout, retries, concurrency limit, proxy and
 * compression options), built from {@link FAST_PROTOBUF_EXPORTER_PEERS}.
 * Undefined when `load` (a `require`; Switchboard's own by default) cannot
 * load them, or they no longer export what this needs: the caller then takes
 * the packaged exporter.
 */
export function loadProtobufExporterClass(
  load: (id: string) => unknown = createRequire(import.meta.url),
): OtlpExporterClass | undefined {
  let base: ExporterBaseModule;
  let http: NodeHttpModule;
  let transformer: TransformerModule;
  try {
    base = load('@opentelemetry/otlp-exporter-base') as ExporterBaseModule;
    http = load('@opentelemetry/otlp-exporter-base/node-http') as NodeHttpModule;
    transformer = load('@opentelemetry/otlp-transformer') as TransformerModule;
  } catch {
    return undefined;
  }
  const { OTLPExporterBase } = base;
  const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = http;
  const { ProtobufTraceSerializer, TraceExporterMetricsHelper } = transformer;
  // A release that moved these would fail at the first `new`: take the packaged exporter instead.
  if (
    typeof OTLPExporterBase !== 'function' ||
    typeof createOtlpHttpExportDelegate !== 'function' ||
    typeof convertLegacyHttpOptions !== 'function' ||
    typeof ProtobufTraceSerializer?.deserializeResponse !== 'function'
  )
    return undefined;
  const serializer: typeof ProtobufTraceSerializer = {
    serializeRequest: serializeSpansAsProtobuf,
    deserializeResponse: (bytes) => ProtobufTraceSerializer.deserializeResponse(bytes),
  };
  return class SwitchboardProtobufTraceExporter extends OTLPExporterBase<
    Parameters<typeof serializeSpansAsProtobuf>[0]
  > {
    constructor(config: OtlpExporterConfig) {
      super(
        createOtlpHttpExportDelegate(
          convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', {
            'Content-Type': 'application/x-protobuf',
          }),
          serializer,
          'otlp_http_span_exporter',
          TraceExporterMetricsHelper,
          undefined,
        ),
      );
    }
  };
}

// Loaded once: null until first asked for.
let exporterClass: OtlpExporterClass | undefined | null = null;

/**
 * {@link loadProtobufExporterClass} with Switchboard's own `require`, loaded
 * once: the fast protobuf exporter, or undefined when its optional peers are
 * not installed.
 */
export function switchboardProtobufExporterClass(): OtlpExporterClass | undefined {
  if (exporterClass === null) exporterClass = loadProtobufExporterClass();
  return exporterClass;
}
