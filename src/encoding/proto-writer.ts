/**
 * Minimal protobuf wire-format writer. Nested messages are written in place: `fork()` leaves one
 * byte for the length, `join()` fills it in and shifts the body when the length needs more, so
 * there is no second sizing pass and no intermediate buffer per message.
 */

import { release, takeOutput } from './handed-over.js';
import { HEX_VALUE, isLowerHex } from './hex-id.js';
import { hrTimeToNanosParts } from './hrtime.js';

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

const INITIAL_CAPACITY = 64 * 1024;
/** The initial capacity of a writer of small pieces (see json-writer.ts). */
export const SMALL_WRITER_CAPACITY = 4 * 1024;
/** Between exports a writer whose output was large holds no buffer, only the size of the next. */
const NONE = new Uint8Array(0);
const TWO_POW_32 = 2 ** 32;
const TWO_POW_64 = 2 ** 64;

const utf8 = new TextEncoder();

export class ProtoWriter {
  readonly #initialCapacity: number;
  #buf: Uint8Array<ArrayBuffer>;
  #view: DataView;
  #pos = 0;
  #forks: number[] = [];
  /** Capacity to allocate at the next output's first write (see finish()). */
  #sizeHint = 0;

  /** `initialCapacity`: an export's room by default; SMALL_WRITER_CAPACITY for small pieces. */
  constructor(initialCapacity = INITIAL_CAPACITY) {
    this.#initialCapacity = initialCapacity;
    // Allocated at the first write: a writer made at import may never write.
    this.#buf = NONE;
    this.#view = new DataView(NONE.buffer);
  }

  /** Bytes already encoded (a cached spelling), appended as they are. */
  raw(bytes: Uint8Array): void {
    this.#ensure(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  /** The bytes written, in a small Buffer of their own (for caches); the writer is reset. */
  snapshot(): Buffer {
    const out = Buffer.from(this.#buf.subarray(0, this.#pos));
    this.reset();
    return out;
  }

  /** Forgets what was written (after an encoder failed half-way). */
  reset(): void {
    this.#pos = 0;
    this.#forks.length = 0;
  }

  /**
   * The bytes written, in a Buffer at offset 0 of an ArrayBuffer nobody else uses (transferable
   * without a copy; see handed-over.ts); the writer is reset.
   */
  finish(): Buffer {
    const { record, nextCapacity } = takeOutput(this.#buf, this.#pos, this.#initialCapacity);
    this.reset();
    if (nextCapacity !== undefined) {
      this.#use(NONE);
      this.#sizeHint = nextCapacity;
    }
    return record;
  }

  #use(buf: Uint8Array<ArrayBuffer>): void {
    this.#buf = buf;
    this.#view = new DataView(buf.buffer);
  }

  #resize(capacity: number): void {
    // Copy everything, not just up to #pos: string() and join() write ahead of #pos.
    const next = new Uint8Array(capacity);
    next.set(this.#buf.subarray(0, Math.min(this.#buf.length, capacity)));
    const outgrown = this.#buf.buffer; // only ever ours: finish() hands a buffer over and drops it
    this.#use(next);
    release(outgrown);
  }

  #ensure(extra: number): void {
    const need = this.#pos + extra;
    if (need <= this.#buf.length) return;
    this.#resize(Math.max(need, this.#buf.length * 2, this.#sizeHint, this.#initialCapacity));
    this.#sizeHint = 0;
  }

  /** The tag and length of a field of `bytes` that follow, with room made for them. */
  #lengthDelimited(field: number, bytes: number): void {
    this.#tag(field, WIRE_LEN);
    this.#rawVarint(bytes);
    this.#ensure(bytes);
  }

  #tag(field: number, wire: number): void {
    this.#rawVarint(field * 8 + wire);
  }

  /** Unsigned varint of a non-negative integer below 2^64 (a double beyond 2^53 is still exact: dividing by 128 only shifts its exponent). */
  #rawVarint(value: number): void {
    // A caller's number outside (negative, NaN, Infinity, 2^64 on) would be written as bytes no
    // decoder reads, or, Infinity, never end: refused, with its export.
    if (!(value >= 0 && value < TWO_POW_64)) {
      throw new RangeError(
        `${value} is outside what a protobuf varint holds (a whole number from 0 to 2^64 - 1)`,
      );
    }
    this.#ensure(10);
    let v = value;
    while (v > 127) {
      this.#buf[this.#pos++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.#buf[this.#pos++] = v;
  }

  /** Starts a nested message (or packed field) in field `field`. */
  fork(field: number): void {
    this.#tag(field, WIRE_LEN);
    this.#ensure(1);
    this.#forks.push(this.#pos);
    this.#pos += 1;
  }

  /** Ends the innermost fork: writes its length, shifting the body if the length needs > 1 byte. */
  join(): void {
    const start = this.#forks.pop();
    if (start === undefined) throw new Error('ProtoWriter.join() without fork()');
    const bodyStart = start + 1;
    const length = this.#pos - bodyStart;
    if (length < 128) {
      this.#buf[start] = length;
      return;
    }
    let size = 1;
    for (let v = length; v > 127; v = Math.floor(v / 128)) size++;
    this.#ensure(size - 1);
    this.#buf.copyWithin(bodyStart + size - 1, bodyStart, this.#pos);
    this.#pos = start;
    this.#rawVarint(length);
    this.#pos += length;
  }

  uint(field: number, value: number): void {
    if (value === 0) return;
    this.#tag(field, WIRE_VARINT);
    this.#rawVarint(value);
  }

  /**
   * int64 varint: negative values take ten bytes in two's complement. `keepDefault` writes a
   * zero too, as a member of a oneof needs (there presence is the value).
   */
  int64(field: number, value: number, keepDefault = false): void {
    if (value === 0 && !keepDefault) return;
    this.#tag(field, WIRE_VARINT);
    if (value > 0) {
      this.#rawVarint(value);
      return;
    }
    let v = BigInt.asUintN(64, BigInt(value));
    this.#ensure(10);
    while (v > 127n) {
      this.#buf[this.#pos++] = Number(v & 127n) | 128;
      v >>= 7n;
    }
    this.#buf[this.#pos++] = Number(v);
  }

  sint32(field: number, value: number): void {
    if (value === 0) return;
    this.#tag(field, WIRE_VARINT);
    this.#rawVarint(((value << 1) ^ (value >> 31)) >>> 0);
  }

  bool(field: number, value: boolean, keepDefault = false): void {
    if (!value && !keepDefault) return;
    this.#tag(field, WIRE_VARINT);
    this.#rawVarint(value ? 1 : 0);
  }

  double(field: number, value: number): void {
    this.#tag(field, WIRE_I64);
    this.#ensure(8);
    this.#view.setFloat64(this.#pos, value, true);
    this.#pos += 8;
  }

  /** fixed64 / sfixed64 from its two 32-bit halves. */
  fixed64Parts(field: number, lo: number, hi: number): void {
    this.#tag(field, WIRE_I64);
    this.#ensure(8);
    this.#view.setUint32(this.#pos, lo >>> 0, true);
    this.#view.setUint32(this.#pos + 4, hi >>> 0, true);
    this.#pos += 8;
  }

  /** A time as OTLP's fixed64 Unix nanoseconds, from an HrTime ([seconds, nanoseconds]). */
  nanos(field: number, time: readonly [number, number]): void {
    const { lo, hi } = hrTimeToNanosParts(time);
    this.fixed64Parts(field, lo, hi);
  }

  /**
   * fixed64 (or sfixed64) of an integer in its range, exact beyond 2^53 too: dividing by 2^32
   * only shifts the exponent, and the remainder is an integer below 2^32.
   */
  fixed64(field: number, value: number): void {
    const hi = Math.floor(value / TWO_POW_32);
    this.fixed64Parts(field, value - hi * TWO_POW_32, hi);
  }

  /** fixed32 of an integer below 2^32 (e.g. span flags); 0 is not written. */
  fixed32(field: number, value: number): void {
    if (value === 0) return;
    this.#tag(field, WIRE_I32);
    this.#ensure(4);
    this.#view.setUint32(this.#pos, value >>> 0, true);
    this.#pos += 4;
  }

  /**
   * A trace or span id given in hex, as its bytes (see hex-id.ts): lower-case hex is decoded here
   * without a copy. No bytes, no field, unless `keepDefault` (the official serializers write a
   * span's own ids whatever they hold).
   */
  hexBytes(field: number, hex: string, keepDefault = false): void {
    if (!isLowerHex(hex)) {
      this.bytes(field, Buffer.from(hex, 'hex'), keepDefault);
      return;
    }
    const n = hex.length >>> 1;
    if (n === 0 && !keepDefault) return;
    this.#lengthDelimited(field, n);
    const buf = this.#buf;
    let pos = this.#pos;
    for (let i = 0; i < hex.length; i += 2) {
      buf[pos++] =
        (HEX_VALUE[hex.charCodeAt(i)] as number) * 16 +
        (HEX_VALUE[hex.charCodeAt(i + 1)] as number);
    }
    this.#pos = pos;
  }

  string(field: number, value: string, keepDefault = false): void {
    if (value === '' && !keepDefault) return;
    this.#tag(field, WIRE_LEN);
    // Reserve the worst case (3 bytes per UTF-16 unit) so encodeInto never truncates.
    const max = value.length * 3;
    let lenSize = 1;
    for (let v = max; v > 127; v = Math.floor(v / 128)) lenSize++;
    this.#ensure(lenSize + max + 10);
    const bodyStart = this.#pos + lenSize;
    const written = utf8.encodeInto(value, this.#buf.subarray(bodyStart)).written;
    let actualSize = 1;
    for (let v = written; v > 127; v = Math.floor(v / 128)) actualSize++;
    if (actualSize !== lenSize)
      this.#buf.copyWithin(this.#pos + actualSize, bodyStart, bodyStart + written);
    this.#rawVarint(written);
    this.#pos += written;
  }

  bytes(field: number, value: Uint8Array, keepDefault = false): void {
    if (value.length === 0 && !keepDefault) return;
    this.#lengthDelimited(field, value.length);
    this.#buf.set(value, this.#pos);
    this.#pos += value.length;
  }

  /** Packed repeated fixed64 of integers below 2^64 (exact, as fixed64()). */
  packedFixed64(field: number, values: readonly number[]): void {
    if (values.length === 0) return;
    this.#lengthDelimited(field, values.length * 8);
    for (const value of values) {
      const hi = Math.floor(value / TWO_POW_32);
      this.#view.setUint32(this.#pos, (value - hi * TWO_POW_32) >>> 0, true);
      this.#view.setUint32(this.#pos + 4, hi >>> 0, true);
      this.#pos += 8;
    }
  }

  packedDouble(field: number, values: readonly number[]): void {
    if (values.length === 0) return;
    this.#lengthDelimited(field, values.length * 8);
    for (const value of values) {
      this.#view.setFloat64(this.#pos, value, true);
      this.#pos += 8;
    }
  }

  /** Packed repeated uint64 varints of non-negative integers below 2^64 (exact, as #rawVarint). */
  packedVarint(field: number, values: readonly number[]): void {
    if (values.length === 0) return;
    this.fork(field);
    for (const value of values) this.#rawVarint(value);
    this.join();
  }
}
