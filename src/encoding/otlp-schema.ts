/**
 * The OTLP metrics messages, written from the OpenTelemetry protocol specification
 * (opentelemetry/proto metrics/v1, common/v1, resource/v1, collector/metrics/v1).
 * One table drives the protobuf decoder and gives the encoder its field numbers, so a field
 * number is written down exactly once.
 */

/**
 * Scalar kinds. `nanos` is a fixed64 timestamp rendered as a decimal string, the way OTLP/JSON
 * spells timestamps; other 64-bit integers are rendered as numbers while they are exact.
 * `hexBytes` are trace and span ids, which OTLP/JSON spells in hex rather than base64.
 */
export type Scalar =
  | 'string'
  | 'bytes'
  | 'bool'
  | 'uint32'
  | 'uint64'
  | 'int64'
  | 'sint32'
  | 'fixed64'
  | 'sfixed64'
  | 'nanos'
  | 'double'
  | 'enum'
  | 'hexBytes';

export interface FieldSpec {
  /** OTLP/JSON (lowerCamelCase) name. */
  readonly name: string;
  readonly kind: Scalar | MessageName;
  readonly repeated?: boolean;
}

/** Listed by hand to break the type cycle FieldSpec → MessageName → SCHEMA; `satisfies` keeps both in step. */
export type MessageName =
  | 'ExportMetricsServiceRequest'
  | 'ResourceMetrics'
  | 'Resource'
  | 'ScopeMetrics'
  | 'InstrumentationScope'
  | 'Metric'
  | 'Gauge'
  | 'Sum'
  | 'Histogram'
  | 'ExponentialHistogram'
  | 'Summary'
  | 'NumberDataPoint'
  | 'HistogramDataPoint'
  | 'ExponentialHistogramDataPoint'
  | 'Buckets'
  | 'SummaryDataPoint'
  | 'ValueAtQuantile'
  | 'Exemplar'
  | 'KeyValue'
  | 'AnyValue'
  | 'ArrayValue'
  | 'KeyValueList';

const message = <const T extends Record<number, FieldSpec>>(fields: T) => fields;

export const SCHEMA = {
  ExportMetricsServiceRequest: message({
    1: { name: 'resourceMetrics', kind: 'ResourceMetrics', repeated: true },
  }),
  ResourceMetrics: message({
    1: { name: 'resource', kind: 'Resource' },
    2: { name: 'scopeMetrics', kind: 'ScopeMetrics', repeated: true },
    3: { name: 'schemaUrl', kind: 'string' },
  }),
  Resource: message({
    1: { name: 'attributes', kind: 'KeyValue', repeated: true },
    2: { name: 'droppedAttributesCount', kind: 'uint32' },
  }),
  ScopeMetrics: message({
    1: { name: 'scope', kind: 'InstrumentationScope' },
    2: { name: 'metrics', kind: 'Metric', repeated: true },
    3: { name: 'schemaUrl', kind: 'string' },
  }),
  InstrumentationScope: message({
    1: { name: 'name', kind: 'string' },
    2: { name: 'version', kind: 'string' },
    3: { name: 'attributes', kind: 'KeyValue', repeated: true },
    4: { name: 'droppedAttributesCount', kind: 'uint32' },
  }),
  Metric: message({
    1: { name: 'name', kind: 'string' },
    2: { name: 'description', kind: 'string' },
    3: { name: 'unit', kind: 'string' },
    5: { name: 'gauge', kind: 'Gauge' },
    7: { name: 'sum', kind: 'Sum' },
    9: { name: 'histogram', kind: 'Histogram' },
    10: { name: 'exponentialHistogram', kind: 'ExponentialHistogram' },
    11: { name: 'summary', kind: 'Summary' },
    12: { name: 'metadata', kind: 'KeyValue', repeated: true },
  }),
  Gauge: message({
    1: { name: 'dataPoints', kind: 'NumberDataPoint', repeated: true },
  }),
  Sum: message({
    1: { name: 'dataPoints', kind: 'NumberDataPoint', repeated: true },
    2: { name: 'aggregationTemporality', kind: 'enum' },
    3: { name: 'isMonotonic', kind: 'bool' },
  }),
  Histogram: message({
    1: { name: 'dataPoints', kind: 'HistogramDataPoint', repeated: true },
    2: { name: 'aggregationTemporality', kind: 'enum' },
  }),
  ExponentialHistogram: message({
    1: { name: 'dataPoints', kind: 'ExponentialHistogramDataPoint', repeated: true },
    2: { name: 'aggregationTemporality', kind: 'enum' },
  }),
  Summary: message({
    1: { name: 'dataPoints', kind: 'SummaryDataPoint', repeated: true },
  }),
  NumberDataPoint: message({
    7: { name: 'attributes', kind: 'KeyValue', repeated: true },
    2: { name: 'startTimeUnixNano', kind: 'nanos' },
    3: { name: 'timeUnixNano', kind: 'nanos' },
    4: { name: 'asDouble', kind: 'double' },
    6: { name: 'asInt', kind: 'sfixed64' },
    5: { name: 'exemplars', kind: 'Exemplar', repeated: true },
    8: { name: 'flags', kind: 'uint32' },
  }),
  HistogramDataPoint: message({
    9: { name: 'attributes', kind: 'KeyValue', repeated: true },
    2: { name: 'startTimeUnixNano', kind: 'nanos' },
    3: { name: 'timeUnixNano', kind: 'nanos' },
    4: { name: 'count', kind: 'fixed64' },
    5: { name: 'sum', kind: 'double' },
    6: { name: 'bucketCounts', kind: 'fixed64', repeated: true },
    7: { name: 'explicitBounds', kind: 'double', repeated: true },
    8: { name: 'exemplars', kind: 'Exemplar', repeated: true },
    10: { name: 'flags', kind: 'uint32' },
    11: { name: 'min', kind: 'double' },
    12: { name: 'max', kind: 'double' },
  }),
  ExponentialHistogramDataPoint: message({
    1: { name: 'attributes', kind: 'KeyValue', repeated: true },
    2: { name: 'startTimeUnixNano', kind: 'nanos' },
    3: { name: 'timeUnixNano', kind: 'nanos' },
    4: { name: 'count', kind: 'fixed64' },
    5: { name: 'sum', kind: 'double' },
    6: { name: 'scale', kind: 'sint32' },
    7: { name: 'zeroCount', kind: 'fixed64' },
    8: { name: 'positive', kind: 'Buckets' },
    9: { name: 'negative', kind: 'Buckets' },
    10: { name: 'flags', kind: 'uint32' },
    11: { name: 'exemplars', kind: 'Exemplar', repeated: true },
    12: { name: 'min', kind: 'double' },
    13: { name: 'max', kind: 'double' },
    14: { name: 'zeroThreshold', kind: 'double' },
  }),
  Buckets: message({
    1: { name: 'offset', kind: 'sint32' },
    2: { name: 'bucketCounts', kind: 'uint64', repeated: true },
  }),
  SummaryDataPoint: message({
    7: { name: 'attributes', kind: 'KeyValue', repeated: true },
    2: { name: 'startTimeUnixNano', kind: 'nanos' },
    3: { name: 'timeUnixNano', kind: 'nanos' },
    4: { name: 'count', kind: 'fixed64' },
    5: { name: 'sum', kind: 'double' },
    6: { name: 'quantileValues', kind: 'ValueAtQuantile', repeated: true },
    8: { name: 'flags', kind: 'uint32' },
  }),
  ValueAtQuantile: message({
    1: { name: 'quantile', kind: 'double' },
    2: { name: 'value', kind: 'double' },
  }),
  Exemplar: message({
    7: { name: 'filteredAttributes', kind: 'KeyValue', repeated: true },
    2: { name: 'timeUnixNano', kind: 'nanos' },
    3: { name: 'asDouble', kind: 'double' },
    6: { name: 'asInt', kind: 'sfixed64' },
    4: { name: 'spanId', kind: 'hexBytes' },
    5: { name: 'traceId', kind: 'hexBytes' },
  }),
  KeyValue: message({
    1: { name: 'key', kind: 'string' },
    2: { name: 'value', kind: 'AnyValue' },
  }),
  AnyValue: message({
    1: { name: 'stringValue', kind: 'string' },
    2: { name: 'boolValue', kind: 'bool' },
    3: { name: 'intValue', kind: 'int64' },
    4: { name: 'doubleValue', kind: 'double' },
    5: { name: 'arrayValue', kind: 'ArrayValue' },
    6: { name: 'kvlistValue', kind: 'KeyValueList' },
    7: { name: 'bytesValue', kind: 'bytes' },
  }),
  ArrayValue: message({
    1: { name: 'values', kind: 'AnyValue', repeated: true },
  }),
  KeyValueList: message({
    1: { name: 'values', kind: 'KeyValue', repeated: true },
  }),
} as const satisfies Record<MessageName, Record<number, FieldSpec>>;

type FieldNumbers<M> = {
  readonly [K in keyof M as M[K] extends { name: infer N extends string } ? N : never]: K;
};

function invert<M extends Record<number, FieldSpec>>(fields: M): FieldNumbers<M> {
  const out: Record<string, number> = {};
  for (const [num, spec] of Object.entries(fields)) out[spec.name] = Number(num);
  return out as unknown as FieldNumbers<M>;
}

/** Field numbers by message and OTLP/JSON field name, for the encoder: `FIELD.Metric.sum` is 7. */
export const FIELD = Object.fromEntries(
  Object.entries(SCHEMA).map(([name, fields]) => [name, invert(fields)]),
) as { readonly [K in MessageName]: FieldNumbers<(typeof SCHEMA)[K]> };

/** AggregationTemporality in OTLP. */
export const OTLP_TEMPORALITY = { unspecified: 0, delta: 1, cumulative: 2 } as const;

const INT64_BOUND = 2 ** 63;

/**
 * Whether a number is written as an int64 (an attribute's intValue, an INT point's asInt): any
 * integer an int64 holds, as the official serializer decides for attributes; beyond int64 it
 * would wrap around, so it goes as a double (doubleValue, asDouble).
 */
export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -INT64_BOUND && value < INT64_BOUND;
}
