import { type FieldSpec, type MessageName, SCHEMA, type Scalar } from './otlp-schema.js';

/** A decoded message in the OTLP/JSON shape: the same object JSON.parse gives for a JSON object. */
export type OtlpObject = { [field: string]: OtlpValue };
export type OtlpValue = string | number | boolean | OtlpObject | OtlpValue[];

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;
const TWO_POW_32 = 2 ** 32;

/** ignoreBOM keeps a string's leading U+FEFF: it is the string's first character, not a byte-order mark. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class ProtoDecodeError extends Error {
  constructor(message: string, offset: number) {
    super(`invalid OTLP protobuf at byte ${offset}: ${message}`);
    this.name = 'ProtoDecodeError';
  }
}

/**
 * Decodes an ExportMetricsServiceRequest, ExportTraceServiceRequest or ExportLogsServiceRequest
 * (or any message of the schema) from protobuf into the OTLP/JSON object shape: trace and span
 * ids in hex, as OTLP/JSON spells them, not base64. Unknown fields are skipped, as protobuf
 * requires.
 */
export function decodeOtlpProto(
  bytes: Uint8Array,
  message: MessageName = 'ExportMetricsServiceRequest',
  maxMessages = Number.POSITIVE_INFINITY,
): OtlpObject {
  return new Reader(bytes, maxMessages).message(message, bytes.length);
}

class Reader {
  readonly #buf: Uint8Array;
  readonly #view: DataView;
  #pos = 0;
  /** Messages a decode may still make (decode-request.ts, objectBudget). */
  #messagesLeft: number;

  readonly #maxMessages: number;
  /**
   * Values of repeated scalar fields a decode may still make: four per message allowed (a
   * histogram's bucket counts are one byte each packed; a read of 8 MiB of them is 8 million).
   */
  #valuesLeft: number;

  constructor(buf: Uint8Array, maxMessages: number) {
    this.#buf = buf;
    this.#view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.#messagesLeft = maxMessages;
    this.#maxMessages = maxMessages;
    this.#valuesLeft = 4 * maxMessages;
  }

  /** Counts one value of a repeated scalar field against the read's allowance. */
  #value(): void {
    if (--this.#valuesLeft < 0) {
      throw new ProtoDecodeError(
        `more than ${4 * this.#maxMessages} values of repeated fields, the most a read builds (a decompression bomb of packed values?)`,
        this.#pos,
      );
    }
  }

  message(name: MessageName, end: number): OtlpObject {
    if (--this.#messagesLeft < 0) {
      throw new ProtoDecodeError(
        `more than ${this.#maxMessages} messages, the most a read builds (a decompression bomb of empty messages?)`,
        this.#pos,
      );
    }
    const fields: Record<number, FieldSpec> = SCHEMA[name];
    const out: OtlpObject = {};
    while (this.#pos < end) {
      const at = this.#pos;
      const key = this.#varint();
      // A tag is a uint32 of field number (1 to 2^29 - 1) and wire type: a larger one would lose
      // its low bits (the wire type) in a double, and its payload be read as fields.
      if (!(key >= 8 && key <= 0xffffffff))
        throw new ProtoDecodeError(`invalid field tag ${key}`, at);
      const num = Math.floor(key / 8);
      const wire = key % 8;
      const spec = fields[num];
      if (spec === undefined) {
        this.#skip(wire);
        continue;
      }
      if (spec.kind in SCHEMA) {
        this.#expect(wire, WIRE_LEN, spec);
        const length = this.#varint();
        const child = this.message(spec.kind as MessageName, this.#limit(length));
        this.#put(out, spec, child);
      } else if (
        spec.repeated &&
        wire === WIRE_LEN &&
        spec.kind !== 'string' &&
        spec.kind !== 'bytes'
      ) {
        const packedEnd = this.#limit(this.#varint());
        while (this.#pos < packedEnd) {
          this.#value();
          this.#put(out, spec, this.#scalar(spec.kind as Scalar));
        }
        if (this.#pos !== packedEnd) {
          throw new ProtoDecodeError(`packed field ${spec.name} runs past its length`, this.#pos);
        }
      } else {
        this.#expect(wire, wireOf(spec.kind as Scalar), spec);
        if (spec.repeated) this.#value();
        this.#put(out, spec, this.#scalar(spec.kind as Scalar));
      }
    }
    if (this.#pos !== end)
      throw new ProtoDecodeError('field runs past the end of its message', this.#pos);
    return out;
  }

  #put(out: OtlpObject, spec: FieldSpec, value: OtlpValue): void {
    if (!spec.repeated) {
      out[spec.name] = value;
      return;
    }
    const list = out[spec.name];
    if (Array.isArray(list)) list.push(value);
    else out[spec.name] = [value];
  }

  #expect(wire: number, expected: number, spec: FieldSpec): void {
    if (wire !== expected) {
      throw new ProtoDecodeError(
        `field ${spec.name} has wire type ${wire}, expected ${expected}`,
        this.#pos,
      );
    }
  }

  #limit(length: number): number {
    const end = this.#pos + length;
    if (end > this.#buf.length)
      throw new ProtoDecodeError('length past the end of the input', this.#pos);
    return end;
  }

  #scalar(kind: Scalar): OtlpValue {
    switch (kind) {
      case 'string': {
        const at = this.#pos;
        const bytes = this.#bytes();
        try {
          return utf8.decode(bytes);
        } catch {
          throw new ProtoDecodeError('invalid UTF-8 in a string field', at);
        }
      }
      case 'bytes':
        return Buffer.from(this.#bytes()).toString('base64');
      case 'hexBytes':
        return Buffer.from(this.#bytes()).toString('hex');
      case 'bool':
        return this.#varint() !== 0;
      // 32-bit fields take a varint's low 32 bits, as protobuf runtimes do (a negative int32 is
      // written sign-extended to 64 bits); enums are int32.
      case 'uint32':
        return this.#varint32();
      case 'enum':
        return this.#varint32() | 0;
      case 'fixed32':
        return this.#view.getUint32(this.#take(4), true);
      case 'uint64':
        return this.#varint64(false);
      case 'int64':
        return this.#varint64(true);
      case 'sint32': {
        const v = this.#varint32();
        return (v >>> 1) ^ -(v & 1);
      }
      case 'double': {
        const v = this.#view.getFloat64(this.#take(8), true);
        if (Number.isFinite(v)) return v;
        return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
      }
      case 'fixed64':
      case 'sfixed64':
      case 'nanos': {
        const at = this.#take(8);
        const lo = this.#view.getUint32(at, true);
        const hi =
          kind === 'sfixed64'
            ? this.#view.getInt32(at + 4, true)
            : this.#view.getUint32(at + 4, true);
        const value = hi * TWO_POW_32 + lo;
        if (kind !== 'nanos' && Number.isSafeInteger(value)) return value;
        const big = (BigInt(hi) << 32n) | BigInt(lo);
        return big.toString();
      }
    }
  }

  #take(n: number): number {
    const at = this.#pos;
    if (at + n > this.#buf.length) throw new ProtoDecodeError('truncated value', at);
    this.#pos += n;
    return at;
  }

  #bytes(): Uint8Array {
    const length = this.#varint();
    const at = this.#take(length);
    return this.#buf.subarray(at, at + length);
  }

  /** Varint as a number (exact up to 2^53; larger values only appear in 64-bit fields). */
  #varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.#buf[this.#pos++];
      if (byte === undefined) throw new ProtoDecodeError('truncated varint', this.#pos - 1);
      result += (byte & 127) * scale;
      if (byte < 128) return result;
      scale *= 128;
    }
    throw new ProtoDecodeError('varint longer than 10 bytes', this.#pos);
  }

  /** A varint's low 32 bits, unsigned (the rest of its bytes read past). */
  #varint32(): number {
    let low = 0;
    for (let i = 0; i < 10; i++) {
      const byte = this.#buf[this.#pos++];
      if (byte === undefined) throw new ProtoDecodeError('truncated varint', this.#pos - 1);
      if (i < 5) low = (low | ((byte & 127) << (7 * i))) >>> 0;
      if (byte < 128) return low;
    }
    throw new ProtoDecodeError('varint longer than 10 bytes', this.#pos);
  }

  #varint64(signed: boolean): number | string {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      const byte = this.#buf[this.#pos++];
      if (byte === undefined) throw new ProtoDecodeError('truncated varint', this.#pos - 1);
      result |= BigInt(byte & 127) << shift;
      if (byte < 128) {
        const value = signed ? BigInt.asIntN(64, result) : BigInt.asUintN(64, result);
        const n = Number(value);
        return Number.isSafeInteger(n) ? n : value.toString();
      }
      shift += 7n;
    }
    throw new ProtoDecodeError('varint longer than 10 bytes', this.#pos);
  }

  #skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.#varint();
        return;
      case WIRE_I64:
        this.#take(8);
        return;
      case WIRE_LEN:
        this.#take(this.#varint());
        return;
      case WIRE_I32:
        this.#take(4);
        return;
      default:
        throw new ProtoDecodeError(`unsupported wire type ${wire}`, this.#pos);
    }
  }
}

function wireOf(kind: Scalar): number {
  switch (kind) {
    case 'string':
    case 'bytes':
    case 'hexBytes':
      return WIRE_LEN;
    case 'double':
    case 'fixed64':
    case 'sfixed64':
    case 'nanos':
      return WIRE_I64;
    case 'fixed32':
      return WIRE_I32;
    default:
      return WIRE_VARINT;
  }
}
