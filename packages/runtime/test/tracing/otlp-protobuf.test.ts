import {
  type Attributes,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { serializeSpansAsProtobuf } from '../../src/tracing/otlp-protobuf.js';

function recorder(resource: Attributes = { 'service.name': 'otlp-test' }) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { provider, spans: () => exporter.getFinishedSpans() };
}

const official = (spans: ReadableSpan[]) =>
  Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? []);
const ours = (spans: ReadableSpan[]) => Buffer.from(serializeSpansAsProtobuf(spans));

describe('OTLP protobuf serialiser', () => {
  it('writes the same bytes as OpenTelemetry for every kind of attribute, event, link and status', () => {
    const { provider, spans } = recorder();
    const tracer = provider.getTracer('switchboard', '1.2.3');
    const other = provider.getTracer('switchboard.observe');
    const root = tracer.startSpan('turn', {
      kind: SpanKind.SERVER,
      attributes: {
        text: 'plain',
        unicode: 'weather: sunny, 21 °C — ☀️ 日本語',
        empty: '',
        long: 'x'.repeat(300),
        truth: true,
        lie: false,
        zero: 0,
        small: 7,
        large: 2 ** 40,
        huge: 2 ** 62,
        negative: -1,
        veryNegative: -(2 ** 45),
        ratio: 0.139,
        negativeRatio: -2.5,
        strings: ['billing', 'shipping', 'weather'],
        numbers: [1, 2.5, -3],
        flags: [true, false],
        emptyArray: [],
      },
    });
    root.addEvent('checkpoint', { step: 3, note: 'événement' }, [1_700_000_000, 5]);
    root.recordException(new Error('boom: ünïcode'));
    root.setStatus({ code: SpanStatusCode.ERROR, message: 'the agent failed' });
    const rootContext = root.spanContext();
    const child = other.startSpan(
      'agent weather',
      {
        kind: SpanKind.CLIENT,
        links: [
          {
            context: {
              traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
              spanId: 'bbbbbbbbbbbbbbbb',
              traceFlags: TraceFlags.SAMPLED,
              isRemote: true,
            },
            attributes: { 'switchboard.link': 'earlier part of the turn' },
          },
        ],
      },
      trace.setSpanContext(ROOT_CONTEXT, rootContext),
    );
    child.setStatus({ code: SpanStatusCode.OK });
    child.end();
    root.end();
    const finished = spans();
    expect(finished).toHaveLength(2);
    expect(ours(finished).equals(official(finished))).toBe(true);
  });

  it('writes exact nanosecond times, far past 2038 and up to the last nanosecond of a second', () => {
    const { provider, spans } = recorder();
    const tracer = provider.getTracer('times');
    for (const [seconds, nanos] of [
      [0, 0],
      [1, 999_999_999],
      [1_764_000_000, 123_456_789],
      [4_102_444_800, 999_999_999], // 2100-01-01
      [17_000_000_000, 1],
    ] as const) {
      tracer.startSpan(`at ${seconds}`, { startTime: [seconds, nanos] }).end([seconds + 1, nanos]);
    }
    const finished = spans();
    expect(ours(finished).equals(official(finished))).toBe(true);
  });

  it('groups spans by resource and scope as OpenTelemetry does', () => {
    const first = recorder({ 'service.name': 'one' });
    const second = recorder({ 'service.name': 'two', 'deployment.environment': 'test' });
    first.provider.getTracer('a').startSpan('a1').end();
    second.provider.getTracer('b').startSpan('b1').end();
    first.provider.getTracer('c').startSpan('c1').end();
    first.provider.getTracer('a').startSpan('a2').end();
    const mixed = [...first.spans(), ...second.spans()];
    expect(ours(mixed).equals(official(mixed))).toBe(true);
  });

  it('grows its buffer for a batch far larger than the last one, and never mixes two batches', () => {
    const { provider, spans } = recorder();
    const tracer = provider.getTracer('big');
    tracer.startSpan('small').end();
    const small = [...spans()];
    const smallBytes = serializeSpansAsProtobuf(small);
    for (let index = 0; index < 200; index++)
      tracer.startSpan(`span ${index}`, { attributes: { body: `${index} `.repeat(500) } }).end();
    const big = spans();
    const bigBytes = ours(big);
    expect(bigBytes.length).toBeGreaterThan(200_000);
    expect(bigBytes.equals(official(big))).toBe(true);
    // The first result is the caller's: serialising again did not overwrite it.
    expect(Buffer.from(smallBytes).equals(official(small))).toBe(true);
  });

  it('writes attribute keys beyond its key cache the same way', () => {
    const { provider, spans } = recorder();
    const tracer = provider.getTracer('keys');
    for (let batch = 0; batch < 12; batch++) {
      const attributes: Attributes = {};
      for (let index = 0; index < 100; index++) attributes[`key.${batch}.${index}.ключ`] = index;
      tracer.startSpan(`keys ${batch}`, { attributes }).end();
    }
    const finished = spans();
    expect(ours(finished).equals(official(finished))).toBe(true);
  });
});
