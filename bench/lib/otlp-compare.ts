/**
 * Checks that what our exporter stored decodes to the same data as the official serializers'
 * output on the same input (the comparison of test/unit/signals/otlp-encoding.test.ts).
 */
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  decodeOtlpProto,
  type OtlpObject,
  type OtlpValue,
} from '../../src/encoding/otlp-proto-decode.js';
import { withoutDefaults } from '../../test/support/otlp-defaults.js';

/** Path and values of the first difference, or undefined when equal. */
function firstDifference(a: OtlpValue, b: OtlpValue, path = '$'): string | undefined {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Object.is(a, b) ? undefined : `${path}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array vs object`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = (a as Record<string, OtlpValue | undefined>)[key];
    const y = (b as Record<string, OtlpValue | undefined>)[key];
    if (x === undefined || y === undefined) {
      return `${path}.${key}: ${x === undefined ? 'missing in ours' : 'missing in official'}`;
    }
    const diff = firstDifference(x, y, `${path}.${key}`);
    if (diff !== undefined) return diff;
  }
  return undefined;
}

/** undefined if our stored JSON object holds the same data as the official JSON serializer's. */
export function compareJson(ours: Buffer, rm: ResourceMetrics): string | undefined {
  const official = JSON.parse(
    Buffer.from(JsonMetricsSerializer.serializeRequest(rm) ?? []).toString(),
  ) as OtlpObject;
  return firstDifference(JSON.parse(ours.toString()) as OtlpObject, withoutDefaults(official));
}

/** undefined if our stored protobuf object holds the same data as the official serializer's. */
export function compareProto(ours: Buffer, rm: ResourceMetrics): string | undefined {
  const official = decodeOtlpProto(
    ProtobufMetricsSerializer.serializeRequest(rm) ?? new Uint8Array(),
  );
  return firstDifference(decodeOtlpProto(ours), withoutDefaults(official));
}
