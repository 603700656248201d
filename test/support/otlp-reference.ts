import { readFileSync } from 'node:fs';
import {
  createFileRegistry,
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonValue,
  toJson,
} from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';

/**
 * Decoders independent of src/: the official opentelemetry-proto messages (vendored, see
 * opentelemetry-proto/README.md) read by @bufbuild/protobuf, a runtime that passes the protobuf
 * conformance suite, for the binary format and the protobuf JSON mapping alike (strict: unknown
 * fields, an int64 out of range or a string that is not valid Unicode are errors).
 */
const registry = createFileRegistry(
  fromBinary(
    FileDescriptorSetSchema,
    readFileSync(new URL('./opentelemetry-proto/otlp-metrics.binpb', import.meta.url)),
  ),
);

function message(name: string): DescMessage {
  const desc = registry.getMessage(name);
  if (desc === undefined) throw new Error(`${name} is not in the descriptor set`);
  return desc;
}

const REQUEST = message('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');

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
