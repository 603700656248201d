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
  let request: unknown;
  try {
    request = JSON.parse(lines[0] as string);
  } catch (error) {
    throw new Error(`invalid JSON: ${messageOf(error)}`, { cause: error });
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new Error(`the JSON line is not an ${message} object`);
  }
  return request as OtlpObject;
}

function decodeProto(raw: Buffer, request: MessageName): OtlpObject {
  try {
    return decodeOtlpProto(raw, request);
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
