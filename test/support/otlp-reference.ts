import { readFileSync } from 'node:fs';
import {
  createFileRegistry,
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonValue,
  toBinary,
  toJson,
} from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';

/**
 * Decoders independent of src/: the official opentelemetry-proto messages (vendored, see
 * third_party/opentelemetry-proto/README.md) read by @bufbuild/protobuf, a runtime that passes the protobuf
 * conformance suite, for the binary format and the protobuf JSON mapping alike (strict: unknown
 * fields, an int64 out of range or a string that is not valid Unicode are errors).
 */
function registryOf(file: string) {
  return createFileRegistry(
    fromBinary(
      FileDescriptorSetSchema,
      readFileSync(new URL(`./third_party/opentelemetry-proto/${file}`, import.meta.url)),
    ),
  );
}

function message(registry: ReturnType<typeof registryOf>, name: string): DescMessage {
  const desc = registry.getMessage(name);
  if (desc === undefined) throw new Error(`${name} is not in the descriptor set`);
  return desc;
}

const REQUEST = message(
  registryOf('otlp-metrics.binpb'),
  'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest',
);

/**
 * A decoded message in one canonical form, for comparison: its protobuf JSON mapping as an
 * object (fields at their implicit default left out, 64-bit integers as exact decimal strings,
 * NaN and the infinities as strings, -0 kept as -0).
 */
export type Canonical = JsonValue;

/** An ExportMetricsServiceRequest in protobuf. */
export function decodeProtobuf(bytes: Uint8Array): Canonical {
  return toJson(REQUEST, fromBinary(REQUEST, bytes));
}

/** An ExportMetricsServiceRequest in protobuf's JSON mapping, encoded as protobuf. */
export function encodeProtobuf(json: JsonValue): Uint8Array {
  return toBinary(REQUEST, fromJson(REQUEST, json));
}

/**
 * An ExportMetricsServiceRequest in OTLP/JSON, each number taken at the digits written, as the
 * mapping reads them: JSON.parse would round an integer beyond 2^53 before the mapping sees it,
 * and so let through an int64 written out of range (e.g. -9223372036854776000).
 */
export function decodeJsonExact(text: string): Canonical {
  return toJson(REQUEST, fromJson(REQUEST, JSON.parse(quoteLargeIntegers(text)) as JsonValue));
}

/** The same JSON read as a JavaScript reader does, JSON.parse first (and so at double precision). */
export function decodeJsonParsed(text: string): Canonical {
  return toJson(REQUEST, fromJson(REQUEST, JSON.parse(text) as JsonValue));
}

/** A JSON string (skipped as it is) or a number. */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * Every integer literal beyond 2^53 in quotes: the mapping reads a quoted number as the same
 * value, for an integer field and a double alike, and the quotes keep its digits past JSON.parse.
 */
function quoteLargeIntegers(text: string): string {
  return text.replace(TOKEN, (token) =>
    token.startsWith('"') || !/^-?\d+$/.test(token) || Number.isSafeInteger(Number(token))
      ? token
      : `"${token}"`,
  );
}

/** The three decoders of one signal's request, as those of metrics above. */
export interface ReferenceDecoders {
  decodeProtobuf(bytes: Uint8Array): Canonical;
  /**
   * OTLP/JSON read at its written digits. Trace and span ids are lower-case hex in OTLP/JSON and
   * base64 in protobuf's own JSON mapping: they are converted first (and anything that is not
   * lower-case hex of even length is an error).
   */
  decodeJsonExact(text: string): Canonical;
  /** The same after JSON.parse (double precision), ids converted as above. */
  decodeJsonParsed(text: string): Canonical;
}

function decodersOf(file: string, request: string): ReferenceDecoders {
  const desc = message(registryOf(file), request);
  const fromOtlpJson = (json: JsonValue) =>
    toJson(desc, fromJson(desc, idsToBase64(json) as JsonValue));
  return {
    decodeProtobuf: (bytes) => toJson(desc, fromBinary(desc, bytes)),
    decodeJsonExact: (text) => fromOtlpJson(JSON.parse(quoteLargeIntegers(text)) as JsonValue),
    decodeJsonParsed: (text) => fromOtlpJson(JSON.parse(text) as JsonValue),
  };
}

export const traceReference = decodersOf(
  'otlp-traces.binpb',
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
);

export const logsReference = decodersOf(
  'otlp-logs.binpb',
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
);

/** The OTLP/JSON fields that hold ids (in Span, Span.Link, LogRecord and Exemplar). */
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

function idsToBase64(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(idsToBase64);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (ID_FIELDS.has(key)) {
      if (typeof v !== 'string' || !/^(?:[0-9a-f]{2})*$/.test(v)) {
        throw new Error(`${key} ${JSON.stringify(v)} is not lower-case hex`);
      }
      out[key] = Buffer.from(v, 'hex').toString('base64');
    } else out[key] = idsToBase64(v);
  }
  return out;
}
