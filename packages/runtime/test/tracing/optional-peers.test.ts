import { createRequire } from 'node:module';
import { LANGFUSE_SDK_VERSION } from '@langfuse/core';
import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ConfigurationError } from '@switchboard/core';
import { traceContextSlot } from '@switchboard/core/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';
import { langfuseSdkVersion, protobufExporterClass } from '../../src/tracing/langfuse-processor.js';
import { serializeSpansAsProtobuf } from '../../src/tracing/otlp-protobuf.js';
import {
  loadProtobufExporterClass,
  type OtlpExporterClass,
  switchboardProtobufExporterClass,
} from '../../src/tracing/otlp-protobuf-exporter.js';
import { sharedContextManager } from '../../src/tracing/shared-context-manager.js';

// What tracing takes from its optional peers, through the runtime's own resolution, and what it does
// when one cannot be loaded (simulated with a `require` that fails for it).

const runtimeRequire = createRequire(import.meta.url);
/** A `require` for which the modules in `missing` are not installed. */
const without =
  (...missing: string[]) =>
  (id: string): unknown => {
    if (missing.includes(id))
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    return runtimeRequire(id);
  };

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** Exports two finished spans with a new `Exporter` to a fresh receiver; returns its one request and the spans' bytes. */
async function exportWith(Exporter: OtlpExporterClass) {
  receiver = await createOtlpReceiver();
  const spans = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'peers' }),
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  const tracer = provider.getTracer('switchboard');
  tracer.startSpan('turn', { attributes: { answer: 42, text: 'héllo' } }).end();
  tracer.startSpan('route 0').end();
  const finished = spans.getFinishedSpans();
  const exporter = new Exporter({
    url: `${receiver.url}/v1/traces`,
    headers: { Authorization: 'Basic abc' },
  });
  const code = await new Promise<number>((resolve) =>
    exporter.export(finished, (result) => resolve(result.code)),
  );
  await exporter.shutdown();
  return { code, request: receiver.requests[0], expected: Buffer.from(serializeSpansAsProtobuf(finished)) };
}

describe('the protobuf trace exporter', () => {
  it("is Switchboard's own serialiser over OpenTelemetry's delegate when the declared peers are installed", async () => {
    const fast = switchboardProtobufExporterClass();
    expect(fast?.name).toBe('SwitchboardProtobufTraceExporter');
    expect(protobufExporterClass()).toBe(fast);
    expect(protobufExporterClass()).not.toBe(OTLPTraceExporter);

    const { code, request, expected } = await exportWith(protobufExporterClass());
    expect(code).toBe(0);
    expect(request?.path).toBe('/v1/traces');
    expect(request?.headers['content-type']).toBe('application/x-protobuf');
    expect(request?.headers.authorization).toBe('Basic abc');
    expect(request?.raw?.equals(expected)).toBe(true);
    expect(request?.spans.map((span) => span.name)).toEqual(['turn', 'route 0']);
  });

  it('is not built when a peer is missing or no longer exports what it needs', () => {
    expect(loadProtobufExporterClass(runtimeRequire)).toBeDefined();
    expect(loadProtobufExporterClass(without('@opentelemetry/otlp-transformer'))).toBeUndefined();
    expect(loadProtobufExporterClass(without('@opentelemetry/otlp-exporter-base/node-http'))).toBeUndefined();
    const moved = (id: string) =>
      id.endsWith('/node-http')
        ? { ...(runtimeRequire(id) as object), convertLegacyHttpOptions: undefined }
        : runtimeRequire(id);
    expect(loadProtobufExporterClass(moved)).toBeUndefined();
  });

  it("falls back to @opentelemetry/exporter-trace-otlp-proto's exporter, which sends the same bytes", async () => {
    const fallback = protobufExporterClass(without('@opentelemetry/otlp-exporter-base'));
    expect(fallback).toBe(OTLPTraceExporter);
    const { code, request, expected } = await exportWith(fallback);
    expect(code).toBe(0);
    expect(request?.headers['content-type']).toBe('application/x-protobuf');
    expect(request?.raw?.equals(expected)).toBe(true);
  });

  it('without either, refuses http/protobuf at start-up, naming what to install', () => {
    const none = () =>
      protobufExporterClass(
        without('@opentelemetry/otlp-transformer', '@opentelemetry/exporter-trace-otlp-proto'),
      );
    expect(none).toThrow(ConfigurationError);
    expect(none).toThrow(/otlp-exporter-base.*otlp-transformer.*exporter-trace-otlp-proto.*http\/json/);
  });
});

describe('the other optional peers of tracing', () => {
  it("keeps the trace context in the request context's storage with @opentelemetry/context-async-hooks", () => {
    const manager = sharedContextManager();
    expect(manager).toBeDefined();
    const traced = ROOT_CONTEXT.setValue(createContextKey('peer'), 'value');
    expect(manager?.with(traced, () => traceContextSlot.get())).toBe(traced);
    expect(sharedContextManager(without('@opentelemetry/context-async-hooks'))).toBeUndefined();
  });

  it("sends @langfuse/core's SDK version when it is installed, and none when it is not", () => {
    expect(langfuseSdkVersion()).toBe(LANGFUSE_SDK_VERSION);
    expect(langfuseSdkVersion(without('@langfuse/core'))).toBeUndefined();
  });
});
