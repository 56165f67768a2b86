import { gzipSync } from 'node:zlib';
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeOtlpTraceRequest } from '../../src/testing/otlp-protobuf-decode.js';
import { createOtlpReceiver, type OtlpReceiver } from '../../src/testing/otlp-receiver.js';

const protobufOf = (spans: ReadableSpan[]): Uint8Array => {
  const bytes = ProtobufTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new Error('ProtobufTraceSerializer wrote nothing');
  return bytes;
};

const jsonOf = (spans: ReadableSpan[]): unknown =>
  JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString('utf8'));

const LONG = `${'long value, '.repeat(20)}end`;
const HUGE = 'ü€😀 '.repeat(2_000); // 2 000 × 10 bytes of UTF-8: over 16 KB

/** Records spans through the SDK, covering every field an OTLP span carries. */
async function recordSpans(): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(
      { 'service.name': 'proto-svc', 'service.instance.count': 3 },
      { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' },
    ),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('switchboard', '1.2.3', { schemaUrl: 'https://example.test/schema' });
  const other = provider.getTracer('other-scope');

  // A remote parent with a trace state: the root's parentSpanId, traceState and remote flag.
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: createTraceState('vendor=a1,other=b2'),
  });
  const root = tracer.startSpan(
    'turn ünïcödé 会话',
    {
      kind: SpanKind.SERVER,
      attributes: {
        text: 'hello',
        empty: '',
        nonAscii: 'héllo wörld — 你好 😀',
        long: LONG,
        huge: HUGE,
        yes: true,
        no: false,
        zero: 0,
        count: 42,
        negative: -7,
        bigNegative: -(2 ** 40),
        large: 2 ** 60,
        ratio: 0.25,
        negativeRatio: -1.5e-10,
        strings: ['a', 'b', 'ç'],
        numbers: [1, 2.5, -3],
        flags: [true, false],
        emptyArray: [],
      },
      links: [
        {
          context: {
            traceId: 'f'.repeat(32),
            spanId: '1'.repeat(16),
            traceFlags: TraceFlags.NONE,
            traceState: createTraceState('k=v'),
          },
          attributes: { 'link.reason': 'follows', 'link.index': 1 },
        },
        { context: { traceId: 'e'.repeat(32), spanId: '2'.repeat(16), traceFlags: TraceFlags.SAMPLED } },
      ],
    },
    remote,
  );
  root.addEvent('checkpoint', { step: 3, label: 'mid-turn', ok: true });
  root.addEvent('bare');
  const child = tracer.startSpan(
    'agent echo',
    { kind: SpanKind.CLIENT },
    trace.setSpan(context.active(), root),
  );
  child.recordException(new Error('model unreachable'));
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'model unreachable' });
  child.end();
  const okSpan = other.startSpan('tool call', { kind: SpanKind.PRODUCER });
  okSpan.setStatus({ code: SpanStatusCode.OK });
  okSpan.end();
  other.startSpan('consume', { kind: SpanKind.CONSUMER }).end();
  tracer.startSpan('internal').end();
  root.end();
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

// One object: OpenTelemetry's protobuf serialiser groups spans by scope identity, its JSON one by name and version.
const scopeWithAttributes = {
  name: 'scoped',
  version: '0.0.1',
  schemaUrl: 'https://example.test/scoped',
  attributes: { 'scope.kind': 'plugin', 'scope.weight': 2 },
};

/** `span` with values the SDK's span API would refuse (bytes, a map, null) and a scope with attributes. */
function withRawAttributes(span: ReadableSpan): ReadableSpan {
  return Object.assign(Object.create(span) as ReadableSpan, {
    attributes: {
      ...span.attributes,
      bytes: new Uint8Array([0, 1, 2, 250, 255]),
      map: { model: 'gpt', tokens: 12, nested: { deep: [1, 'two'] } },
      nothing: null,
    },
    instrumentationScope: scopeWithAttributes,
  });
}

/**
 * OpenTelemetry's JSON, normalised where OTLP/JSON and the proto differ by design:
 * - an int64 beyond 2^53 is a decimal string in OTLP/JSON; OpenTelemetry writes it as a (rounded) JSON number;
 * - OpenTelemetry's JSON also copies the resource's schema URL into `resource`, a message with no
 *   `schema_url` field in the proto (it is on `ResourceSpans`, which both have).
 */
function normalised(json: unknown): unknown {
  return JSON.parse(JSON.stringify(json), (key, value: unknown) => {
    if (key === 'intValue' && typeof value === 'number' && !Number.isSafeInteger(value))
      return BigInt(value).toString();
    if (key === 'resource' && typeof value === 'object' && value !== null) {
      const { schemaUrl: _copied, ...resource } = value as Record<string, unknown>;
      return resource;
    }
    return value;
  });
}

describe('decodeOtlpTraceRequest', () => {
  it('reads a protobuf export of real spans as the same object OpenTelemetry writes as JSON', async () => {
    const spans = await recordSpans();
    expect(spans).toHaveLength(5);
    const decoded = decodeOtlpTraceRequest(protobufOf(spans));
    expect(decoded).toEqual(normalised(jsonOf(spans)));

    // Spot checks of what the deep equality covers, in a form a reader can follow.
    const flat = JSON.stringify(decoded);
    expect(flat).toContain(JSON.stringify(HUGE));
    expect(flat).toContain('"intValue":-7');
    expect(flat).toContain('"intValue":"1152921504606846976"');
    expect(flat).toContain('"parentSpanId":"b7ad6b7169203331"');
    expect(flat).toContain('"traceState":"vendor=a1,other=b2"');
    expect(flat).toContain('"message":"model unreachable"');
    expect(flat).toContain('"name":"exception"');
  });

  it('reads bytes, map and null values and scope attributes, which the SDK span API does not set', async () => {
    const spans = (await recordSpans()).map(withRawAttributes);
    const decoded = decodeOtlpTraceRequest(protobufOf(spans));
    expect(decoded).toEqual(normalised(jsonOf(spans)));
    const attributes = (
      decoded as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ attributes: unknown[] }> }> }> }
    ).resourceSpans[0]?.scopeSpans[0]?.spans[0]?.attributes;
    expect(attributes).toContainEqual({ key: 'bytes', value: { bytesValue: 'AAEC+v8=' } });
    expect(attributes).toContainEqual({ key: 'nothing', value: {} });
  });

  it('skips fields it does not know, of every wire type', async () => {
    const [span] = await recordSpans();
    if (!span) throw new Error('no span');
    const bytes = protobufOf([span]);
    // Unknown top-level fields 20 (varint), 21 (fixed64), 22 (bytes), 23 (fixed32), 24 (group) around the export.
    const unknown = Buffer.from([
      0xa0, 0x01, 0x96, 0x01, 0xa9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0xb2, 0x01, 2, 0xaa, 0xbb, 0xbd, 0x01, 1, 2,
      3, 4, 0xc3, 0x01, 0x08, 0x01, 0xc4, 0x01,
    ]);
    expect(decodeOtlpTraceRequest(Buffer.concat([unknown, bytes, unknown]))).toEqual(
      decodeOtlpTraceRequest(bytes),
    );
  });

  it('throws a clear error on truncated input, wherever it is cut', async () => {
    const bytes = protobufOf(await recordSpans());
    for (const cut of [1, 2, 10, Math.floor(bytes.length / 2), bytes.length - 1])
      expect(() => decodeOtlpTraceRequest(bytes.subarray(0, cut)), `cut at ${cut}`).toThrow(
        /OTLP protobuf: truncated/,
      );
    expect(decodeOtlpTraceRequest(new Uint8Array())).toEqual({ resourceSpans: [] });
  });
});

describe('createOtlpReceiver with protobuf', () => {
  let receiver: OtlpReceiver | undefined;
  afterEach(() => receiver?.close());

  const post = (body: Uint8Array, headers: Record<string, string>, path = '/v1/traces') =>
    fetch(`${receiver?.url}${path}`, { method: 'POST', body, headers });

  it('decodes a protobuf export end to end: spans, attributes, parents and raw bytes', async () => {
    receiver = await createOtlpReceiver();
    const spans = await recordSpans();
    const bytes = protobufOf(spans);
    const response = await post(bytes, { 'content-type': 'application/x-protobuf' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-protobuf');

    const [request] = receiver.requests;
    expect(request?.error).toBeUndefined();
    expect(request?.raw?.equals(Buffer.from(bytes))).toBe(true);
    expect(request?.body).toEqual(normalised(jsonOf(spans)));
    const received = receiver.spans();
    expect(received.map((span) => span.name).sort()).toEqual(
      ['agent echo', 'consume', 'internal', 'tool call', 'turn ünïcödé 会话'].sort(),
    );
    const root = received.find((span) => span.name === 'turn ünïcödé 会话');
    expect(root).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
      kind: 2,
      scope: 'switchboard',
      resource: { 'service.name': 'proto-svc', 'service.instance.count': 3 },
      attributes: {
        text: 'hello',
        nonAscii: 'héllo wörld — 你好 😀',
        long: LONG,
        huge: HUGE,
        yes: true,
        no: false,
        count: 42,
        negative: -7,
        ratio: 0.25,
        strings: ['a', 'b', 'ç'],
        numbers: [1, 2.5, -3],
      },
      events: [
        { name: 'checkpoint', attributes: { step: 3, label: 'mid-turn', ok: true } },
        { name: 'bare' },
      ],
      links: [
        { traceId: 'f'.repeat(32), spanId: '1'.repeat(16) },
        { traceId: 'e'.repeat(32), spanId: '2'.repeat(16) },
      ],
    });
    const child = received.find((span) => span.name === 'agent echo');
    expect(child).toMatchObject({
      parentSpanId: root?.spanId,
      traceId: root?.traceId,
      kind: 3,
      status: { code: 2, message: 'model unreachable' },
      events: [{ name: 'exception', attributes: { 'exception.message': 'model unreachable' } }],
    });
    expect(received.find((span) => span.name === 'tool call')).toMatchObject({
      scope: 'other-scope',
      kind: 4,
    });
  });

  it('gunzips a gzip protobuf body before decoding it', async () => {
    receiver = await createOtlpReceiver();
    const bytes = protobufOf(await recordSpans());
    const response = await post(gzipSync(bytes), {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    });
    expect(response.status).toBe(200);
    expect(receiver.requests[0]?.raw?.equals(Buffer.from(bytes))).toBe(true);
    expect(receiver.spans()).toHaveLength(5);
  });

  it('answers a truncated protobuf body with 400 and records why', async () => {
    receiver = await createOtlpReceiver();
    const bytes = protobufOf(await recordSpans());
    const response = await post(bytes.subarray(0, bytes.length - 5), {
      'content-type': 'application/x-protobuf',
    });
    expect(response.status).toBe(400);
    expect(receiver.requests[0]?.error).toMatch(/OTLP protobuf: truncated/);
    expect(receiver.requests[0]?.body).toBeUndefined();
    expect(receiver.spans()).toEqual([]);
    // A test waiting for spans is told why none came.
    await expect(receiver.waitForSpans((spans) => spans.length > 0, { timeoutMs: 20 })).rejects.toThrow(
      /0 spans received; the last request that could not be read: OTLP protobuf: truncated/,
    );
  });

  it('keeps a protobuf metrics export undecoded instead of reading it as spans', async () => {
    receiver = await createOtlpReceiver();
    const bytes = protobufOf(await recordSpans());
    const response = await post(bytes, { 'content-type': 'application/x-protobuf' }, '/v1/metrics');
    expect(response.status).toBe(200);
    expect(receiver.requests[0]?.error).toMatch(/not decoded/);
    expect(receiver.requests[0]?.raw?.equals(Buffer.from(bytes))).toBe(true);
    expect(receiver.spans()).toEqual([]);
  });
});
