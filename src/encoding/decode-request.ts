import { decodeOtlpProto, type OtlpObject } from './otlp-proto-decode.js';
import type { MessageName } from './otlp-schema.js';

/**
 * Reading one stored request back, per format (the formats table's `decode`). Errors say what is
 * wrong with the data; the reader puts the object's key in front.
 */

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** OTLP/JSON: exactly one line holding one ExportMetricsServiceRequest object. */
export function decodeJsonRequest(raw: Buffer): OtlpObject {
  return decodeJson(raw, 'ExportMetricsServiceRequest');
}

/** OTLP protobuf: the serialized ExportMetricsServiceRequest. */
export function decodeProtoRequest(raw: Buffer): OtlpObject {
  return decodeProto(raw, 'ExportMetricsServiceRequest');
}

/**
 * The decoders of one signal's request (`ExportTraceServiceRequest`, …), in both OTLP formats,
 * each building at most `maxObjects` objects and arrays (see objectBudget).
 */
export function requestDecoders(request: MessageName): {
  json: (raw: Buffer, maxObjects?: number) => OtlpObject;
  proto: (raw: Buffer, maxObjects?: number) => OtlpObject;
} {
  return {
    json: (raw, maxObjects) => decodeJson(raw, request, maxObjects),
    proto: (raw, maxObjects) => decodeProto(raw, request, maxObjects),
  };
}

/**
 * Decoded objects cost tens of bytes each however few bytes made them: a 6 KB zstd frame of
 * `{},{},…` (or of empty protobuf messages) within maxDecompressedBytes became 33 million of them
 * and ended the process out of memory. Their density cannot tell: an attribute array of nulls is
 * as dense, legally. So a read builds at most one object or array (a protobuf message) per
 * OBJECT_BYTES of maxDecompressedBytes, as a Parquet read decodes at most one value per byte of
 * it: 4 million at the default 64 MiB, a few hundred MB. Realistic requests hold one per 37-44
 * characters of OTLP/JSON and one per 20-25 bytes of protobuf (this package's encodings of
 * metrics, spans and log records), so an object of any size the limit lets through is read.
 */
const OBJECT_BYTES = 16;

/** The objects a read of objects of at most `maxDecompressedBytes` may build. */
export const objectBudget = (maxDecompressedBytes: number): number =>
  Math.max(1024, Math.floor(maxDecompressedBytes / OBJECT_BYTES));

function decodeJson(
  raw: Buffer,
  message: MessageName,
  maxObjects = Number.POSITIVE_INFINITY,
): OtlpObject {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch (error) {
    // TextDecoder's fatal mode throws a TypeError; a RangeError is a text longer than V8's strings.
    throw new Error(
      error instanceof TypeError
        ? 'invalid UTF-8 in OTLP/JSON'
        : `cannot decode: ${messageOf(error)}`,
      { cause: error },
    );
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected one JSON line, found ${lines.length}`);
  const line = lines[0] as string;
  const containers = containersIn(line);
  if (containers > maxObjects) {
    throw new Error(
      `${containers} JSON objects and arrays, more than the ${maxObjects} a read builds (a decompression bomb of empty values?)`,
    );
  }
  let request: unknown;
  try {
    request = JSON.parse(line);
  } catch (error) {
    throw new Error(`invalid JSON: ${messageOf(error)}`, { cause: error });
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new Error(`the JSON line is not an ${message} object`);
  }
  return request as OtlpObject;
}

/** JSON objects and arrays in `text` (their opening brackets outside strings). */
function containersIn(text: string): number {
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) count++;
  }
  return count;
}

function decodeProto(
  raw: Buffer,
  request: MessageName,
  maxObjects = Number.POSITIVE_INFINITY,
): OtlpObject {
  try {
    return decodeOtlpProto(raw, request, maxObjects);
  } catch (error) {
    // The decoder recurses per message: a hostile nesting runs out of stack before the end.
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      throw new Error('invalid OTLP protobuf: messages nested too deep to decode', {
        cause: error,
      });
    }
    throw error;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
