import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Protobuf from 'protobufjs';

// Decoding is protobufjs's, from OpenTelemetry's own .proto files (the package's proto/ folder, copied
// unchanged from opentelemetry-proto; see proto/README.md). This file only turns the decoded message
// into the object OpenTelemetry's OTLP/JSON serialiser writes, so a test reads a protobuf export and a
// JSON one alike. Proto3 semantics: an absent field reads as its default; an empty optional string or
// id (parentSpanId, traceState, status message, scope version, schemaUrl) is left out, as
// OpenTelemetry's JSON leaves out an unset one.

// The package's proto/ folder: two levels up from src/testing/ and from dist/testing/ alike.
const PROTO_ROOT = fileURLToPath(new URL('../../proto/', import.meta.url));
const REQUEST = 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest';

type Json = Record<string, unknown>;
/** An int64 or fixed64 as protobufjs decodes it: a number, or a `Long` when the `long` package is there. */
type Int64 = number | { toString(): string };

// The decoded messages, as far as this file reads them (protobufjs names fields in camelCase).
interface AnyValueMessage {
  /** The oneof: which member is set. */
  value?: string;
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: { values: AnyValueMessage[] };
  kvlistValue?: { values: KeyValueMessage[] };
  bytesValue?: Uint8Array;
}
interface KeyValueMessage {
  key: string;
  value?: AnyValueMessage | null;
}
interface Attributed {
  attributes: KeyValueMessage[];
  droppedAttributesCount: number;
}
interface ScopeMessage extends Attributed {
  name: string;
  version: string;
}
interface EventMessage extends Attributed {
  timeUnixNano: Int64;
  name: string;
}
interface LinkMessage extends Attributed {
  traceId: Uint8Array;
  spanId: Uint8Array;
  traceState: string;
  flags: number;
}
interface SpanMessage extends Attributed {
  traceId: Uint8Array;
  spanId: Uint8Array;
  traceState: string;
  parentSpanId: Uint8Array;
  flags: number;
  name: string;
  kind: number;
  startTimeUnixNano: Int64;
  endTimeUnixNano: Int64;
  events: EventMessage[];
  droppedEventsCount: number;
  links: LinkMessage[];
  droppedLinksCount: number;
  status?: { message: string; code: number } | null;
}
interface ScopeSpansMessage {
  scope?: ScopeMessage | null;
  spans: SpanMessage[];
  schemaUrl: string;
}
interface ResourceSpansMessage {
  resource?: Attributed | null;
  scopeSpans: ScopeSpansMessage[];
  schemaUrl: string;
}
interface RequestMessage {
  resourceSpans: ResourceSpansMessage[];
}

let requestType: Protobuf.Type | undefined;

/** `ExportTraceServiceRequest`, loaded once from the protos with the optional peer protobufjs. */
function exportTraceServiceRequest(): Protobuf.Type {
  if (requestType) return requestType;
  let protobuf: typeof Protobuf;
  try {
    protobuf = createRequire(import.meta.url)('protobufjs') as typeof Protobuf;
  } catch (error) {
    throw new Error(
      "OTLP protobuf: decoding a protobuf export needs the package 'protobufjs' (an optional peer of @switchboard/runtime): install it",
      { cause: error },
    );
  }
  const root = new protobuf.Root();
  // Imports name files from the proto root ("opentelemetry/proto/trace/v1/trace.proto").
  root.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  requestType = root.lookupType(REQUEST);
  return requestType;
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
/** An int64 value: a number when exactly representable, else its decimal string. */
function int64(value: Int64): number | string {
  const text = String(value);
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : text;
}
/** Sets `object[key]` to `value` unless it is empty (an unset proto3 string or id). */
function setIfPresent(object: Json, key: string, value: string): void {
  if (value) object[key] = value;
}

function anyValue(value: AnyValueMessage | null | undefined): Json {
  switch (value?.value) {
    case 'stringValue':
      return { stringValue: value.stringValue };
    case 'boolValue':
      return { boolValue: value.boolValue };
    case 'intValue':
      return { intValue: int64(value.intValue ?? 0) };
    case 'doubleValue':
      return { doubleValue: value.doubleValue };
    case 'arrayValue':
      return { arrayValue: { values: (value.arrayValue?.values ?? []).map(anyValue) } };
    case 'kvlistValue':
      return { kvlistValue: { values: (value.kvlistValue?.values ?? []).map(keyValue) } };
    case 'bytesValue':
      return { bytesValue: Buffer.from(value.bytesValue ?? []).toString('base64') };
    default:
      return {};
  }
}

function keyValue({ key, value }: KeyValueMessage): Json {
  return { key, value: anyValue(value) };
}

function attributed({ attributes, droppedAttributesCount }: Attributed): Json {
  return { attributes: attributes.map(keyValue), droppedAttributesCount };
}

function scope(message: ScopeMessage | null | undefined): Json {
  const scope: Json = { name: message?.name ?? '' };
  if (!message) return scope;
  setIfPresent(scope, 'version', message.version);
  // OpenTelemetry's JSON has scope attributes (and their dropped count) only when there are some.
  if (message.attributes.length > 0 || message.droppedAttributesCount > 0)
    Object.assign(scope, attributed(message));
  return scope;
}

function event(message: EventMessage): Json {
  return { timeUnixNano: String(message.timeUnixNano), name: message.name, ...attributed(message) };
}

function link(message: LinkMessage): Json {
  const link: Json = { traceId: hex(message.traceId), spanId: hex(message.spanId) };
  setIfPresent(link, 'traceState', message.traceState);
  return { ...link, ...attributed(message), flags: message.flags };
}

function span(message: SpanMessage): Json {
  const span: Json = { traceId: hex(message.traceId), spanId: hex(message.spanId) };
  setIfPresent(span, 'traceState', message.traceState);
  setIfPresent(span, 'parentSpanId', hex(message.parentSpanId));
  const status: Json = { code: message.status?.code ?? 0 };
  setIfPresent(status, 'message', message.status?.message ?? '');
  return {
    ...span,
    name: message.name,
    kind: message.kind,
    startTimeUnixNano: String(message.startTimeUnixNano),
    endTimeUnixNano: String(message.endTimeUnixNano),
    ...attributed(message),
    events: message.events.map(event),
    droppedEventsCount: message.droppedEventsCount,
    status,
    links: message.links.map(link),
    droppedLinksCount: message.droppedLinksCount,
    flags: message.flags,
  };
}

function scopeSpans(message: ScopeSpansMessage): Json {
  const scopeSpans: Json = { scope: scope(message.scope), spans: message.spans.map(span) };
  setIfPresent(scopeSpans, 'schemaUrl', message.schemaUrl);
  return scopeSpans;
}

function resourceSpans(message: ResourceSpansMessage): Json {
  const resourceSpans: Json = {
    resource: message.resource ? attributed(message.resource) : { attributes: [], droppedAttributesCount: 0 },
    scopeSpans: message.scopeSpans.map(scopeSpans),
  };
  setIfPresent(resourceSpans, 'schemaUrl', message.schemaUrl);
  return resourceSpans;
}

/**
 * Decodes an OTLP/protobuf trace export (`ExportTraceServiceRequest`, what an
 * `http/protobuf` exporter posts to `/v1/traces`) with protobufjs and
 * OpenTelemetry's own protos, into the object OpenTelemetry's OTLP/JSON
 * serialiser writes for the same spans, once parsed: ids as lower-case hex,
 * timestamps as decimal strings, an `intValue` as a number (a decimal string
 * beyond 2^53), a `bytesValue` as base64. So `flattenOtlpTraces` reads either
 * encoding. Unknown fields are skipped; truncated or malformed input throws an
 * `Error` starting `OTLP protobuf: truncated or malformed export:`, then
 * protobufjs's reason. Needs the optional peer `protobufjs` (7 or 8); without
 * it, throws an `Error` that says so.
 *
 * @example
 * ```ts
 * const body = decodeOtlpTraceRequest(new Uint8Array(await request.arrayBuffer()));
 * const names = flattenOtlpTraces(body).map((span) => span.name);
 * ```
 */
export function decodeOtlpTraceRequest(bytes: Uint8Array): unknown {
  const type = exportTraceServiceRequest();
  let request: RequestMessage;
  try {
    request = type.decode(bytes) as unknown as RequestMessage;
  } catch (error) {
    throw new Error(`OTLP protobuf: truncated or malformed export: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { resourceSpans: request.resourceSpans.map(resourceSpans) };
}
