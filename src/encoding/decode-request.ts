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

/** The decoders of one signal's request (`ExportTraceServiceRequest`, …), in both OTLP formats. */
export function requestDecoders(request: MessageName): {
  json: (raw: Buffer) => OtlpObject;
  proto: (raw: Buffer) => OtlpObject;
} {
  return { json: (raw) => decodeJson(raw, request), proto: (raw) => decodeProto(raw, request) };
}

function decodeJson(raw: Buffer, message: MessageName): OtlpObject {
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
  if (containers > containerBudget(line.length, JSON_BYTES_PER_CONTAINER)) {
    throw new Error(
      `${containers} JSON objects and arrays in ${line.length} characters: more than an OTLP request of that size holds (a decompression bomb of empty values)`,
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

/**
 * Decoded objects cost tens of bytes each however few bytes made them: a 6 KB zstd frame of
 * `{},{},…` (or of empty protobuf messages) within maxDecompressedBytes became 33 million of them
 * and ended the process out of memory. A request's text holds one object or array in about 40
 * characters, its protobuf one message in about 20 bytes (realistic metrics, spans and log
 * records as this package encodes them: 37-44 and 20-25); five times as many is refused before
 * it is built, which bounds what the objects take to about eight times the decompressed bytes.
 */
const JSON_BYTES_PER_CONTAINER = 8;
const PROTO_BYTES_PER_MESSAGE = 4;
const containerBudget = (length: number, bytesPer: number) => 256 + Math.floor(length / bytesPer);

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

function decodeProto(raw: Buffer, request: MessageName): OtlpObject {
  try {
    return decodeOtlpProto(raw, request, containerBudget(raw.length, PROTO_BYTES_PER_MESSAGE));
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
