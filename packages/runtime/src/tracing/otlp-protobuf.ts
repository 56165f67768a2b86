import type { Attributes, AttributeValue, Link } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { ReverseWriter, tag } from './protobuf-reverse-writer.js';

// OTLP/protobuf (opentelemetry/proto/collector/trace/v1/trace_service.proto) written back to front: a
// message's content is written first, so its length is known when its length prefix is written, in one
// pass and with no size estimate. The output is what OpenTelemetry's own serialiser writes (the same fields,
// in field order), at about 40 % of its CPU (a traced turn's spans against @opentelemetry/otlp-transformer
// 0.223.1, alternating in one process): strings go to the buffer through Buffer's native UTF-8 writer.
// This file encodes spans, their scopes and resources; the wire writer is in protobuf-reverse-writer.ts.

const SPAN_FLAGS_HAS_IS_REMOTE = 0x100;
const SPAN_FLAGS_IS_REMOTE = 0x200;
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

// Attribute keys repeat on every span: each is encoded once, as its whole KeyValue.key field.
const KEY_FIELDS = new Map<string, Uint8Array>();
const MAX_KEY_FIELDS = 1024;

function keyField(key: string): Uint8Array {
  let field = KEY_FIELDS.get(key);
  if (field === undefined) {
    const writer = new ReverseWriter(Buffer.byteLength(key) + 12);
    writer.string(tag(1, 2), key);
    field = Uint8Array.from(writer.buffer.subarray(writer.pos));
    if (KEY_FIELDS.size < MAX_KEY_FIELDS) KEY_FIELDS.set(key, field);
  }
  return field;
}

function writeAnyValue(writer: ReverseWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      writer.string(tag(1, 2), value);
      return;
    case 'boolean':
      writer.uint32(value ? 1 : 0);
      writer.uint32(tag(2, 0));
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        writer.int64(value);
        writer.uint32(tag(3, 0));
      } else {
        writer.double(value);
        writer.uint32(tag(4, 1));
      }
      return;
  }
  if (value instanceof Uint8Array) {
    writer.bytes(tag(7, 2), value);
  } else if (Array.isArray(value)) {
    const arrayEnd = writer.written;
    for (let index = value.length - 1; index >= 0; index--) {
      const itemEnd = writer.written;
      writeAnyValue(writer, value[index]);
      writer.close(tag(1, 2), itemEnd);
    }
    writer.close(tag(5, 2), arrayEnd);
  } else if (typeof value === 'object' && value !== null) {
    const listEnd = writer.written;
    writeKeyValues(writer, value as Record<string, unknown>, tag(1, 2));
    writer.close(tag(6, 2), listEnd);
  }
}

/** The own keys of `values`, in order, as repeated KeyValue fields of `fieldTag`. */
function writeKeyValues(writer: ReverseWriter, values: Record<string, unknown>, fieldTag: number): void {
  const keys = Object.keys(values);
  for (let index = keys.length - 1; index >= 0; index--) {
    const key = keys[index] as string;
    // The KeyValue and its value end at the same byte (written back to front).
    const entryEnd = writer.written;
    writeAnyValue(writer, values[key] as AttributeValue);
    writer.close(tag(2, 2), entryEnd);
    writer.encoded(keyField(key));
    writer.close(fieldTag, entryEnd);
  }
}

function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | SPAN_FLAGS_HAS_IS_REMOTE | (isRemote ? SPAN_FLAGS_IS_REMOTE : 0);
}

function writeEvent(writer: ReverseWriter, event: TimedEvent): void {
  const end = writer.written;
  writer.uint32(event.droppedAttributesCount ?? 0);
  writer.uint32(tag(4, 0));
  if (event.attributes) writeKeyValues(writer, event.attributes, tag(3, 2));
  writer.string(tag(2, 2), event.name);
  writer.time(event.time);
  writer.uint32(tag(1, 1));
  writer.close(tag(11, 2), end);
}

function writeLink(writer: ReverseWriter, link: Link): void {
  const end = writer.written;
  const { context } = link;
  writer.fixed32(spanFlags(context.traceFlags, context.isRemote));
  writer.uint32(tag(6, 5));
  writer.uint32(link.droppedAttributesCount ?? 0);
  writer.uint32(tag(5, 0));
  if (link.attributes) writeKeyValues(writer, link.attributes, tag(4, 2));
  const traceState = context.traceState?.serialize();
  if (traceState) writer.string(tag(3, 2), traceState);
  writer.hex(tag(2, 2), context.spanId);
  writer.hex(tag(1, 2), context.traceId);
  writer.close(tag(13, 2), end);
}

function writeSpan(writer: ReverseWriter, span: ReadableSpan): void {
  const end = writer.written;
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  writer.fixed32(spanFlags(context.traceFlags, parent?.isRemote));
  writer.uint32(tag(16, 5));
  const statusEnd = writer.written;
  writer.uint32(span.status.code);
  writer.uint32(tag(3, 0));
  if (span.status.message) writer.string(tag(2, 2), span.status.message);
  writer.close(tag(15, 2), statusEnd);
  writer.uint32(span.droppedLinksCount);
  writer.uint32(tag(14, 0));
  for (let index = span.links.length - 1; index >= 0; index--) writeLink(writer, span.links[index] as Link);
  writer.uint32(span.droppedEventsCount);
  writer.uint32(tag(12, 0));
  for (let index = span.events.length - 1; index >= 0; index--)
    writeEvent(writer, span.events[index] as TimedEvent);
  writer.uint32(span.droppedAttributesCount);
  writer.uint32(tag(10, 0));
  writeKeyValues(writer, span.attributes, tag(9, 2));
  writer.time(span.endTime);
  writer.uint32(tag(8, 1));
  writer.time(span.startTime);
  writer.uint32(tag(7, 1));
  // The API's kinds start at INTERNAL = 0; OTLP's at UNSPECIFIED = 0.
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    writer.uint32(kind);
    writer.uint32(tag(6, 0));
  }
  writer.string(tag(5, 2), span.name);
  if (parent?.spanId) writer.hex(tag(4, 2), parent.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) writer.string(tag(3, 2), traceState);
  writer.hex(tag(2, 2), context.spanId);
  writer.hex(tag(1, 2), context.traceId);
  writer.close(tag(2, 2), end);
}

type Scope = ReadableSpan['instrumentationScope'] & {
  attributes?: Attributes;
  droppedAttributesCount?: number;
};

function writeScopeSpans(writer: ReverseWriter, spans: readonly ReadableSpan[]): void {
  const end = writer.written;
  const scope = (spans[0] as ReadableSpan).instrumentationScope as Scope;
  if (scope.schemaUrl) writer.string(tag(3, 2), scope.schemaUrl);
  for (let index = spans.length - 1; index >= 0; index--) writeSpan(writer, spans[index] as ReadableSpan);
  const scopeEnd = writer.written;
  if (scope.droppedAttributesCount) {
    writer.uint32(scope.droppedAttributesCount);
    writer.uint32(tag(4, 0));
  }
  if (scope.attributes) writeKeyValues(writer, scope.attributes, tag(3, 2));
  if (scope.version) writer.string(tag(2, 2), scope.version);
  writer.string(tag(1, 2), scope.name);
  writer.close(tag(1, 2), scopeEnd);
  writer.close(tag(2, 2), end);
}

function writeResourceSpans(
  writer: ReverseWriter,
  resource: ReadableSpan['resource'],
  scopes: Map<unknown, ReadableSpan[]>,
): void {
  const end = writer.written;
  if (resource.schemaUrl) writer.string(tag(3, 2), resource.schemaUrl);
  const groups = [...scopes.values()];
  for (let index = groups.length - 1; index >= 0; index--)
    writeScopeSpans(writer, groups[index] as ReadableSpan[]);
  const resourceEnd = writer.written;
  writer.uint32(0);
  writer.uint32(tag(2, 0));
  writeKeyValues(writer, resource.attributes, tag(1, 2));
  writer.close(tag(1, 2), resourceEnd);
  writer.close(tag(1, 2), end);
}

// The last request's size: the next one starts with a buffer that fits it, so it seldom grows.
let lastSize = 16 * 1024;

/**
 * Serialises spans as an OTLP `ExportTraceServiceRequest` in protobuf, grouped
 * by resource and then by instrumentation scope as OpenTelemetry's exporters
 * do. Returns a Buffer of its own (the caller may keep it).
 */
export function serializeSpansAsProtobuf(spans: readonly ReadableSpan[]): Uint8Array {
  const resources = new Map<ReadableSpan['resource'], Map<unknown, ReadableSpan[]>>();
  for (const span of spans) {
    let scopes = resources.get(span.resource);
    if (!scopes) {
      scopes = new Map();
      resources.set(span.resource, scopes);
    }
    const group = scopes.get(span.instrumentationScope);
    if (group) group.push(span);
    else scopes.set(span.instrumentationScope, [span]);
  }
  const writer = new ReverseWriter(Math.max(1024, Math.ceil(lastSize * 1.25)));
  const entries = [...resources];
  for (let index = entries.length - 1; index >= 0; index--) {
    const [resource, scopes] = entries[index] as [ReadableSpan['resource'], Map<unknown, ReadableSpan[]>];
    writeResourceSpans(writer, resource, scopes);
  }
  lastSize = writer.written;
  return writer.buffer.subarray(writer.pos);
}
