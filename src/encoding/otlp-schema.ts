/**
 * The OTLP messages of the three signals, written from the OpenTelemetry protocol specification
 * (opentelemetry/proto metrics/v1, trace/v1, logs/v1, common/v1, resource/v1 and the requests of
 * collector/{metrics,trace,logs}/v1).
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
  | 'fixed32'
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
  | 'ExportTraceServiceRequest'
  | 'ResourceSpans'
  | 'ScopeSpans'
  | 'Span'
  | 'Span.Event'
  | 'Span.Link'
  | 'Status'
  | 'ExportLogsServiceRequest'
  | 'ResourceLogs'
  | 'ScopeLogs'
  | 'LogRecord'
  | 'KeyValue'
  | 'AnyValue'
  | 'ArrayValue'
  | 'KeyValueList';

const message = <const T extends Record<number, FieldSpec>>(fields: T) => fields;

/**
 * One signal's request and the messages around its items, as its .proto names them and with the
 * same field numbers for every signal (ENVELOPE): `Export<Service>ServiceRequest` lists
 * `resource<Group>` of `Resource<Group>`, which hold the resource and list `scope<Group>` of
 * `Scope<Group>`, which hold the scope and list the items.
 */
function envelope<
  const Service extends string,
  const Group extends 'Metrics' | 'Spans' | 'Logs',
  const Items extends string,
  const Item extends MessageName,
>(service: Service, group: Group, items: Items, item: Item) {
  const request = `Export${service}ServiceRequest` as const;
  const list = `resource${group}` as const;
  return {
    row: { message: request, listField: list, scopesField: `scope${group}`, itemsField: items },
    request: message({ 1: { name: list, kind: `Resource${group}`, repeated: true } }),
    resource: message({
      1: { name: 'resource', kind: 'Resource' },
      2: { name: `scope${group}`, kind: `Scope${group}`, repeated: true },
      3: { name: 'schemaUrl', kind: 'string' },
    }),
    scope: message({
      1: { name: 'scope', kind: 'InstrumentationScope' },
      2: { name: items, kind: item, repeated: true },
      3: { name: 'schemaUrl', kind: 'string' },
    }),
  };
}

const METRICS = envelope('Metrics', 'Metrics', 'metrics', 'Metric');
const TRACES = envelope('Trace', 'Spans', 'spans', 'Span');
const LOGS = envelope('Logs', 'Logs', 'logRecords', 'LogRecord');

export const SCHEMA = {
  ExportMetricsServiceRequest: METRICS.request,
  ResourceMetrics: METRICS.resource,
  ScopeMetrics: METRICS.scope,
  Resource: message({
    1: { name: 'attributes', kind: 'KeyValue', repeated: true },
    2: { name: 'droppedAttributesCount', kind: 'uint32' },
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
  ExportTraceServiceRequest: TRACES.request,
  ResourceSpans: TRACES.resource,
  ScopeSpans: TRACES.scope,
  Span: message({
    1: { name: 'traceId', kind: 'hexBytes' },
    2: { name: 'spanId', kind: 'hexBytes' },
    3: { name: 'traceState', kind: 'string' },
    4: { name: 'parentSpanId', kind: 'hexBytes' },
    16: { name: 'flags', kind: 'fixed32' },
    5: { name: 'name', kind: 'string' },
    6: { name: 'kind', kind: 'enum' },
    7: { name: 'startTimeUnixNano', kind: 'nanos' },
    8: { name: 'endTimeUnixNano', kind: 'nanos' },
    9: { name: 'attributes', kind: 'KeyValue', repeated: true },
    10: { name: 'droppedAttributesCount', kind: 'uint32' },
    11: { name: 'events', kind: 'Span.Event', repeated: true },
    12: { name: 'droppedEventsCount', kind: 'uint32' },
    13: { name: 'links', kind: 'Span.Link', repeated: true },
    14: { name: 'droppedLinksCount', kind: 'uint32' },
    15: { name: 'status', kind: 'Status' },
  }),
  'Span.Event': message({
    1: { name: 'timeUnixNano', kind: 'nanos' },
    2: { name: 'name', kind: 'string' },
    3: { name: 'attributes', kind: 'KeyValue', repeated: true },
    4: { name: 'droppedAttributesCount', kind: 'uint32' },
  }),
  'Span.Link': message({
    1: { name: 'traceId', kind: 'hexBytes' },
    2: { name: 'spanId', kind: 'hexBytes' },
    3: { name: 'traceState', kind: 'string' },
    4: { name: 'attributes', kind: 'KeyValue', repeated: true },
    5: { name: 'droppedAttributesCount', kind: 'uint32' },
    6: { name: 'flags', kind: 'fixed32' },
  }),
  Status: message({
    // Field 1 is reserved (a deprecated code).
    2: { name: 'message', kind: 'string' },
    3: { name: 'code', kind: 'enum' },
  }),
  ExportLogsServiceRequest: LOGS.request,
  ResourceLogs: LOGS.resource,
  ScopeLogs: LOGS.scope,
  LogRecord: message({
    1: { name: 'timeUnixNano', kind: 'nanos' },
    11: { name: 'observedTimeUnixNano', kind: 'nanos' },
    2: { name: 'severityNumber', kind: 'enum' },
    3: { name: 'severityText', kind: 'string' },
    5: { name: 'body', kind: 'AnyValue' },
    6: { name: 'attributes', kind: 'KeyValue', repeated: true },
    7: { name: 'droppedAttributesCount', kind: 'uint32' },
    8: { name: 'flags', kind: 'fixed32' },
    9: { name: 'traceId', kind: 'hexBytes' },
    10: { name: 'spanId', kind: 'hexBytes' },
    12: { name: 'eventName', kind: 'string' },
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

/**
 * The field numbers of the envelope (see envelope()), the same in every signal's messages: for
 * the encoders that write any signal's.
 */
export const ENVELOPE = {
  list: FIELD.ExportMetricsServiceRequest.resourceMetrics,
  resource: FIELD.ResourceMetrics.resource,
  scopes: FIELD.ResourceMetrics.scopeMetrics,
  resourceSchemaUrl: FIELD.ResourceMetrics.schemaUrl,
  scope: FIELD.ScopeMetrics.scope,
  items: FIELD.ScopeMetrics.metrics,
  scopeSchemaUrl: FIELD.ScopeMetrics.schemaUrl,
};

/**
 * The request message of each signal, the name of its one (repeated) field, and the names of the
 * lists of scopes and of items inside (OTLP/JSON).
 */
export const REQUEST = { metrics: METRICS.row, traces: TRACES.row, logs: LOGS.row };

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

/**
 * Refuses a count (a histogram's count, bucket count or zero count: a uint64) a uint64 does not
 * hold: negative, NaN, infinite, 2^64 or more, or not a whole number. No format could store it as
 * it is (the official protobuf serializer writes 0 for some and cuts a fraction, its JSON
 * serializer "NaN", a negative number or the fraction), so its export is refused, in every
 * format alike.
 */
export function checkCount(what: string, value: number): void {
  if (!(Number.isInteger(value) && value >= 0 && value < 2 * INT64_BOUND)) {
    throw new RangeError(
      `${what} ${value} is not a count: a uint64 holds a whole number from 0 to 2^64 - 1`,
    );
  }
}

/**
 * Refuses a dropped count (of attributes, events or links: a uint32) a uint32 does not hold:
 * negative, NaN, infinite, 2^32 or more, or not a whole number. OTLP/protobuf would write a
 * fraction cut and refuse a negative one, OTLP/JSON both as they are (so do the official
 * serializers), Parquet keeps none: every format refuses its export alike. 0 and undefined are
 * none dropped.
 */
export function checkDropped(what: string, value: number | undefined): void {
  if (value === undefined || value === 0) return;
  if (!(Number.isInteger(value) && value > 0 && value < 2 ** 32)) {
    throw new RangeError(
      `${what} ${value} is not a count: a uint32 holds a whole number from 0 to 2^32 - 1`,
    );
  }
}

/**
 * Refuses a span context's trace flags that a log record's flags do not hold: the W3C trace flags
 * are 8 bits, and OTLP reserves bits 8-31 of a log record's flags (writers set them to 0). OTLP/JSON
 * and protobuf wrote 256 as 256 (2.5 as 2 and 2.5), Parquet's TraceFlags column (ClickHouse's
 * UInt8) as 0: every format refuses its export alike. undefined is none.
 */
export function checkTraceFlags(value: number | undefined): void {
  if (value === undefined) return;
  if (!(Number.isInteger(value) && value >= 0 && value <= 255)) {
    throw new RangeError(
      `trace flags ${value} are not trace flags: a whole number from 0 to 255 (bits 8-31 of a log record's flags are reserved)`,
    );
  }
}

/**
 * Refuses a value of an int32 field (a log record's severity number, an exponential histogram's
 * scale and bucket offsets) an int32 does not hold: NaN, infinite, outside -2^31 to 2^31 - 1, or
 * not a whole number. OTLP/protobuf would write it cut (2.5 as 2) or wrapped, OTLP/JSON as it is,
 * Parquet's INT32 column cut and wrapped (2^40 as 0): every format refuses its export alike.
 */
export function checkInt32(what: string, value: number): void {
  if (!(Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31)) {
    throw new RangeError(`${what} ${value} is not an int32: a whole number from -2^31 to 2^31 - 1`);
  }
}

/** checkCount() of each of `values`. */
export function checkCounts(what: string, values: readonly number[]): void {
  for (let i = 0; i < values.length; i++) checkCount(what, values[i] as number);
}
