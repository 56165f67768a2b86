/**
 * The protobuf wire writer under the OTLP span encoding (`otlp-protobuf.ts`):
 * a buffer filled back to front, so that a message's content is written
 * first and its length is known when its length prefix is written, in one
 * pass and with no size estimate.
 *
 * @module
 */
import type { HrTime } from '@opentelemetry/api';

/** @internal A Buffer filled from its end toward its start: `pos` is the first written byte. */
export class ReverseWriter {
  buffer: Buffer;
  pos: number;

  constructor(size: number) {
    this.buffer = Buffer.allocUnsafe(size);
    this.pos = size;
  }

  /** Bytes written so far: a message's end, to measure its length by. */
  get written(): number {
    return this.buffer.length - this.pos;
  }

  reserve(size: number): void {
    if (this.pos >= size) return;
    const used = this.written;
    let capacity = this.buffer.length * 2;
    while (capacity - used < size) capacity *= 2;
    const grown = Buffer.allocUnsafe(capacity);
    this.buffer.copy(grown, capacity - used, this.pos);
    this.buffer = grown;
    this.pos = capacity - used;
  }

  /** A varint of an unsigned 32-bit value (a tag, a length, a count). */
  uint32(value: number): void {
    this.reserve(5);
    const buffer = this.buffer;
    if (value < 0x80) {
      buffer[--this.pos] = value;
      return;
    }
    const size = value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
    let at = this.pos - size;
    this.pos = at;
    let rest = value >>> 0;
    while (rest > 0x7f) {
      buffer[at++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    buffer[at] = rest;
  }

  /** A varint of an int64 given as a JS number (two's complement when negative: ten bytes). */
  int64(value: number): void {
    if (value >= 0 && value <= 0xffffffff) {
      this.uint32(value);
      return;
    }
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = Math.floor(value / 0x100000000) >>> 0;
    } else {
      const magnitude = -value;
      low = ~(magnitude >>> 0) >>> 0;
      high = ~(Math.floor(magnitude / 0x100000000) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    const bytes: number[] = [];
    while (high !== 0 || low > 0x7f) {
      bytes.push((low & 0x7f) | 0x80);
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    bytes.push(low);
    this.reserve(bytes.length);
    this.pos -= bytes.length;
    for (let index = 0; index < bytes.length; index++) this.buffer[this.pos + index] = bytes[index] as number;
  }

  fixed32(value: number): void {
    this.reserve(4);
    this.pos -= 4;
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
  }

  double(value: number): void {
    this.reserve(8);
    this.pos -= 8;
    this.buffer.writeDoubleLE(value, this.pos);
  }

  /** An hrtime as fixed64 nanoseconds since the epoch, exact (seconds × 1e9 exceeds 2^53). */
  time([seconds, nanos]: HrTime): void {
    this.reserve(8);
    this.pos -= 8;
    const lowSeconds = seconds & 0xffff;
    const highSeconds = Math.floor(seconds / 0x10000);
    const fromLow = lowSeconds * 1e9;
    const fromHigh = highSeconds * 1e9;
    const low = (fromLow % 0x100000000) + (fromHigh % 0x10000) * 0x10000 + nanos;
    const high =
      Math.floor(fromLow / 0x100000000) + Math.floor(fromHigh / 0x10000) + Math.floor(low / 0x100000000);
    this.buffer.writeUInt32LE(low >>> 0, this.pos);
    this.buffer.writeUInt32LE(high >>> 0, this.pos + 4);
  }

  /** A length-delimited string field: content, length, tag. */
  string(tag: number, value: string): void {
    const length = value.length;
    this.reserve(3 * length + 10);
    // Short ASCII strings (keys, ids, names) are copied here: cheaper than a call into Buffer's writer.
    let size = length;
    if (length <= SHORT_STRING) {
      const buffer = this.buffer;
      const start = this.pos - length;
      for (let index = 0; index < length; index++) {
        const code = value.charCodeAt(index);
        if (code >= 0x80) {
          size = -1;
          break;
        }
        buffer[start + index] = code;
      }
    } else size = -1;
    if (size >= 0) this.pos -= length;
    else {
      size = Buffer.byteLength(value);
      this.pos -= size;
      utf8Write(this.buffer, value, this.pos, size);
    }
    this.uint32(size);
    this.uint32(tag);
  }

  /** Bytes encoded before (a cached field). */
  encoded(bytes: Uint8Array): void {
    const size = bytes.length;
    this.reserve(size);
    this.pos -= size;
    const buffer = this.buffer;
    for (let index = 0, at = this.pos; index < size; index++, at++) buffer[at] = bytes[index] as number;
  }

  /** A length-delimited bytes field from a hex id (trace and span ids). */
  hex(tag: number, value: string): void {
    const size = value.length >>> 1;
    this.reserve(size + 10);
    this.pos -= size;
    const buffer = this.buffer;
    for (let index = 0, at = this.pos; index < value.length; index += 2, at++)
      buffer[at] =
        (HEX[value.charCodeAt(index)] as number) * 16 + (HEX[value.charCodeAt(index + 1)] as number);
    this.uint32(size);
    this.uint32(tag);
  }

  bytes(tag: number, value: Uint8Array): void {
    this.reserve(value.length + 10);
    this.pos -= value.length;
    this.buffer.set(value, this.pos);
    this.uint32(value.length);
    this.uint32(tag);
  }

  /** Closes a length-delimited message that began when `written` was `end`. */
  close(tag: number, end: number): void {
    this.uint32(this.written - end);
    this.uint32(tag);
  }
}

// Hex digit values by character code (ids are lower-case hex; upper case is accepted too).
const HEX = new Uint8Array(128);
for (let digit = 0; digit < 16; digit++) {
  HEX['0123456789abcdef'.charCodeAt(digit)] = digit;
  HEX['0123456789ABCDEF'.charCodeAt(digit)] = digit;
}

// Up to this length a string is tried as ASCII, byte by byte.
const SHORT_STRING = 64;

type Utf8Writer = (this: Buffer, value: string, offset: number, length: number) => number;
// Buffer's own UTF-8 writer, without `write`'s argument parsing (a third of the cost for short strings).
const nativeUtf8Write = (Buffer.prototype as unknown as { utf8Write?: Utf8Writer }).utf8Write;
const utf8Write: (buffer: Buffer, value: string, offset: number, length: number) => void = nativeUtf8Write
  ? (buffer, value, offset, length) => nativeUtf8Write.call(buffer, value, offset, length)
  : (buffer, value, offset, length) => buffer.write(value, offset, length, 'utf8');

/** @internal A field's tag: (field number << 3) | wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
export const tag = (field: number, wire: number) => (field << 3) | wire;
