// A reader for OTLP/protobuf trace exports (opentelemetry/proto/collector/trace/v1/trace_service.proto)
// that builds the object OpenTelemetry's OTLP/JSON serialiser writes, so a test reads a protobuf export
// and a JSON one alike. Proto3 semantics: an absent field reads as its default; an empty optional
// string or id (parentSpanId, traceState, status message, scope version, schemaUrl) is left out, as
// OpenTelemetry's JSON leaves out an unset one.

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

type Json = Record<string, unknown>;

/** Reads one message's bytes, `pos` to `end`; every read checks the bytes are there. */
class ProtobufReader {
  private readonly view: DataView;
  private static readonly utf8 = new TextDecoder('utf-8');

  constructor(
    private readonly bytes: Uint8Array,
    public pos: number,
    private readonly end: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  private need(count: number, what: string): void {
    if (count > this.end - this.pos)
      throw new Error(
        `OTLP protobuf: truncated ${what} at byte ${this.pos}: needs ${count} bytes, ${this.end - this.pos} left`,
      );
  }

  /** An unsigned varint as a bigint (up to 64 bits). */
  varintBig(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      this.need(1, 'varint');
      const byte = this.bytes[this.pos++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return BigInt.asUintN(64, result);
    }
    throw new Error(`OTLP protobuf: varint longer than 10 bytes before byte ${this.pos}`);
  }

  /** An unsigned varint as a number: lengths, counts and tags, which fit in 32 bits. */
  varint(): number {
    this.need(1, 'varint');
    const first = this.bytes[this.pos] as number;
    if (first < 0x80) {
      this.pos++;
      return first;
    }
    return Number(this.varintBig());
  }

  /** An int32 varint (enums): negative values arrive sign-extended to 64 bits. */
  int32(): number {
    return Number(BigInt.asIntN(32, this.varintBig()));
  }

  /** An int64 varint: a number when exactly representable, else its decimal string. */
  int64(): number | string {
    const value = BigInt.asIntN(64, this.varintBig());
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : value.toString();
  }

  fixed32(): number {
    this.need(4, 'fixed32');
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  /** A fixed64 as its decimal string (nanosecond timestamps exceed 2^53). */
  fixed64(): string {
    this.need(8, 'fixed64');
    const value = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return value.toString();
  }

  double(): number {
    this.need(8, 'double');
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  /** The bytes of a length-delimited field. */
  bytesField(): Uint8Array {
    const length = this.varint();
    this.need(length, 'length-delimited field');
    const slice = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return slice;
  }

  string(): string {
    return ProtobufReader.utf8.decode(this.bytesField());
  }

  hex(): string {
    return Buffer.from(this.bytesField()).toString('hex');
  }

  base64(): string {
    return Buffer.from(this.bytesField()).toString('base64');
  }

  /** A reader over an embedded message. */
  message(): ProtobufReader {
    const length = this.varint();
    this.need(length, 'embedded message');
    const reader = new ProtobufReader(this.bytes, this.pos, this.pos + length);
    this.pos += length;
    return reader;
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wire: number } {
    const key = this.varint();
    const field = Math.floor(key / 8);
    if (field === 0) throw new Error(`OTLP protobuf: invalid field number 0 before byte ${this.pos}`);
    return { field, wire: key & 7 };
  }

  /** Skips a field this reader does not know, by its wire type. */
  skip(field: number, wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.varintBig();
        return;
      case WIRE_FIXED64:
        this.need(8, 'fixed64');
        this.pos += 8;
        return;
      case WIRE_LENGTH:
        this.bytesField();
        return;
      case WIRE_FIXED32:
        this.need(4, 'fixed32');
        this.pos += 4;
        return;
      case WIRE_START_GROUP:
        for (;;) {
          if (this.done) throw new Error(`OTLP protobuf: truncated group ${field} at byte ${this.pos}`);
          const inner = this.tag();
          if (inner.wire === WIRE_END_GROUP) {
            if (inner.field !== field)
              throw new Error(
                `OTLP protobuf: group ${field} closed by ${inner.field} before byte ${this.pos}`,
              );
            return;
          }
          this.skip(inner.field, inner.wire);
        }
      default:
        throw new Error(
          `OTLP protobuf: unexpected wire type ${wire} for field ${field} before byte ${this.pos}`,
        );
    }
  }
}

/**
 * Calls `read(field)` for each field whose wire type is the one `wires` expects for that field
 * number; skips every other field.
 */
function readFields(
  reader: ProtobufReader,
  wires: Readonly<Record<number, number>>,
  read: (field: number) => void,
): void {
  while (!reader.done) {
    const { field, wire } = reader.tag();
    if (wires[field] === wire) read(field);
    else reader.skip(field, wire);
  }
}

function readAnyValue(reader: ProtobufReader): Json {
  let value: Json = {};
  // A oneof: the last member on the wire wins.
  readFields(
    reader,
    {
      1: WIRE_LENGTH,
      2: WIRE_VARINT,
      3: WIRE_VARINT,
      4: WIRE_FIXED64,
      5: WIRE_LENGTH,
      6: WIRE_LENGTH,
      7: WIRE_LENGTH,
    },
    (field) => {
      if (field === 1) value = { stringValue: reader.string() };
      else if (field === 2) value = { boolValue: reader.varintBig() !== 0n };
      else if (field === 3) value = { intValue: reader.int64() };
      else if (field === 4) value = { doubleValue: reader.double() };
      else if (field === 5) value = { arrayValue: { values: readRepeated(reader.message(), readAnyValue) } };
      else if (field === 6) value = { kvlistValue: { values: readRepeated(reader.message(), readKeyValue) } };
      else value = { bytesValue: reader.base64() };
    },
  );
  return value;
}

/** ArrayValue and KeyValueList: field 1 repeated. */
function readRepeated(reader: ProtobufReader, readItem: (reader: ProtobufReader) => Json): Json[] {
  const values: Json[] = [];
  readFields(reader, { 1: WIRE_LENGTH }, () => values.push(readItem(reader.message())));
  return values;
}

function readKeyValue(reader: ProtobufReader): Json {
  let key = '';
  let value: Json = {};
  readFields(reader, { 1: WIRE_LENGTH, 2: WIRE_LENGTH }, (field) => {
    if (field === 1) key = reader.string();
    else value = readAnyValue(reader.message());
  });
  return { key, value };
}

function readResource(reader: ProtobufReader): Json {
  const attributes: Json[] = [];
  let droppedAttributesCount = 0;
  readFields(reader, { 1: WIRE_LENGTH, 2: WIRE_VARINT }, (field) => {
    if (field === 1) attributes.push(readKeyValue(reader.message()));
    else droppedAttributesCount = reader.varint();
  });
  return { attributes, droppedAttributesCount };
}

function readScope(reader: ProtobufReader): Json {
  const scope: Json = { name: '' };
  const attributes: Json[] = [];
  let droppedAttributesCount = 0;
  readFields(reader, { 1: WIRE_LENGTH, 2: WIRE_LENGTH, 3: WIRE_LENGTH, 4: WIRE_VARINT }, (field) => {
    if (field === 1) scope.name = reader.string();
    else if (field === 2) scope.version = reader.string() || undefined;
    else if (field === 3) attributes.push(readKeyValue(reader.message()));
    else droppedAttributesCount = reader.varint();
  });
  if (scope.version === undefined) delete scope.version;
  // OpenTelemetry's JSON has scope attributes (and their dropped count) only when there are some.
  if (attributes.length > 0 || droppedAttributesCount > 0) {
    scope.attributes = attributes;
    scope.droppedAttributesCount = droppedAttributesCount;
  }
  return scope;
}

function readEvent(reader: ProtobufReader): Json {
  const event: Json = { timeUnixNano: '0', name: '', attributes: [], droppedAttributesCount: 0 };
  const attributes = event.attributes as Json[];
  readFields(reader, { 1: WIRE_FIXED64, 2: WIRE_LENGTH, 3: WIRE_LENGTH, 4: WIRE_VARINT }, (field) => {
    if (field === 1) event.timeUnixNano = reader.fixed64();
    else if (field === 2) event.name = reader.string();
    else if (field === 3) attributes.push(readKeyValue(reader.message()));
    else event.droppedAttributesCount = reader.varint();
  });
  return event;
}

function readLink(reader: ProtobufReader): Json {
  const link: Json = { traceId: '', spanId: '', attributes: [], droppedAttributesCount: 0, flags: 0 };
  const attributes = link.attributes as Json[];
  readFields(
    reader,
    { 1: WIRE_LENGTH, 2: WIRE_LENGTH, 3: WIRE_LENGTH, 4: WIRE_LENGTH, 5: WIRE_VARINT, 6: WIRE_FIXED32 },
    (field) => {
      if (field === 1) link.traceId = reader.hex();
      else if (field === 2) link.spanId = reader.hex();
      else if (field === 3) link.traceState = reader.string() || undefined;
      else if (field === 4) attributes.push(readKeyValue(reader.message()));
      else if (field === 5) link.droppedAttributesCount = reader.varint();
      else link.flags = reader.fixed32();
    },
  );
  if (link.traceState === undefined) delete link.traceState;
  return link;
}

function readStatus(reader: ProtobufReader): Json {
  const status: Json = { code: 0 };
  readFields(reader, { 2: WIRE_LENGTH, 3: WIRE_VARINT }, (field) => {
    if (field === 2) status.message = reader.string() || undefined;
    else status.code = reader.int32();
  });
  if (status.message === undefined) delete status.message;
  return status;
}

const SPAN_WIRES: Readonly<Record<number, number>> = {
  1: WIRE_LENGTH,
  2: WIRE_LENGTH,
  3: WIRE_LENGTH,
  4: WIRE_LENGTH,
  5: WIRE_LENGTH,
  6: WIRE_VARINT,
  7: WIRE_FIXED64,
  8: WIRE_FIXED64,
  9: WIRE_LENGTH,
  10: WIRE_VARINT,
  11: WIRE_LENGTH,
  12: WIRE_VARINT,
  13: WIRE_LENGTH,
  14: WIRE_VARINT,
  15: WIRE_LENGTH,
  16: WIRE_FIXED32,
};

function readSpan(reader: ProtobufReader): Json {
  const span: Json = {
    traceId: '',
    spanId: '',
    name: '',
    kind: 0,
    startTimeUnixNano: '0',
    endTimeUnixNano: '0',
    attributes: [],
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    status: { code: 0 },
    links: [],
    droppedLinksCount: 0,
    flags: 0,
  };
  const attributes = span.attributes as Json[];
  const events = span.events as Json[];
  const links = span.links as Json[];
  readFields(reader, SPAN_WIRES, (field) => {
    switch (field) {
      case 1:
        span.traceId = reader.hex();
        break;
      case 2:
        span.spanId = reader.hex();
        break;
      case 3:
        span.traceState = reader.string() || undefined;
        break;
      case 4:
        span.parentSpanId = reader.hex() || undefined;
        break;
      case 5:
        span.name = reader.string();
        break;
      case 6:
        span.kind = reader.int32();
        break;
      case 7:
        span.startTimeUnixNano = reader.fixed64();
        break;
      case 8:
        span.endTimeUnixNano = reader.fixed64();
        break;
      case 9:
        attributes.push(readKeyValue(reader.message()));
        break;
      case 10:
        span.droppedAttributesCount = reader.varint();
        break;
      case 11:
        events.push(readEvent(reader.message()));
        break;
      case 12:
        span.droppedEventsCount = reader.varint();
        break;
      case 13:
        links.push(readLink(reader.message()));
        break;
      case 14:
        span.droppedLinksCount = reader.varint();
        break;
      case 15:
        span.status = readStatus(reader.message());
        break;
      default:
        span.flags = reader.fixed32();
    }
  });
  if (span.traceState === undefined) delete span.traceState;
  if (span.parentSpanId === undefined) delete span.parentSpanId;
  return span;
}

function readScopeSpans(reader: ProtobufReader): Json {
  const scopeSpans: Json = { scope: { name: '' }, spans: [] };
  const spans = scopeSpans.spans as Json[];
  readFields(reader, { 1: WIRE_LENGTH, 2: WIRE_LENGTH, 3: WIRE_LENGTH }, (field) => {
    if (field === 1) scopeSpans.scope = readScope(reader.message());
    else if (field === 2) spans.push(readSpan(reader.message()));
    else scopeSpans.schemaUrl = reader.string() || undefined;
  });
  if (scopeSpans.schemaUrl === undefined) delete scopeSpans.schemaUrl;
  return scopeSpans;
}

function readResourceSpans(reader: ProtobufReader): Json {
  const resourceSpans: Json = { resource: { attributes: [], droppedAttributesCount: 0 }, scopeSpans: [] };
  const scopeSpans = resourceSpans.scopeSpans as Json[];
  readFields(reader, { 1: WIRE_LENGTH, 2: WIRE_LENGTH, 3: WIRE_LENGTH }, (field) => {
    if (field === 1) resourceSpans.resource = readResource(reader.message());
    else if (field === 2) scopeSpans.push(readScopeSpans(reader.message()));
    else resourceSpans.schemaUrl = reader.string() || undefined;
  });
  if (resourceSpans.schemaUrl === undefined) delete resourceSpans.schemaUrl;
  return resourceSpans;
}

/**
 * Decodes an OTLP/protobuf trace export (`ExportTraceServiceRequest`, what an
 * `http/protobuf` exporter posts to `/v1/traces`) into the object
 * OpenTelemetry's OTLP/JSON serialiser writes for the same spans, once parsed:
 * ids as lower-case hex, timestamps as decimal strings, an `intValue` as a
 * number (a decimal string beyond 2^53), a `bytesValue` as base64. So
 * `flattenOtlpTraces` reads either encoding. Unknown fields are
 * skipped; truncated or malformed input throws an `Error` that names the byte
 * where reading failed.
 *
 * @example
 * ```ts
 * const body = decodeOtlpTraceRequest(new Uint8Array(await request.arrayBuffer()));
 * const names = flattenOtlpTraces(body).map((span) => span.name);
 * ```
 */
export function decodeOtlpTraceRequest(bytes: Uint8Array): unknown {
  const reader = new ProtobufReader(bytes, 0, bytes.length);
  const resourceSpans: Json[] = [];
  readFields(reader, { 1: WIRE_LENGTH }, () => resourceSpans.push(readResourceSpans(reader.message())));
  return { resourceSpans };
}
