// @ts-check
// OTLP metrics requests (in their OTLP/JSON object shape) as the columns of the Parquet table:
// one row per data point, column names of the OpenTelemetry Collector's ClickHouse exporter.
// Plain JavaScript with JSDoc types: it runs inside the body worker, from src/ and from dist/.

/**
 * @typedef {Record<string, unknown>} Json
 * @typedef {{ name: string, data: unknown[] | BigInt64Array | Int32Array }} Column
 */

const METRIC_TYPES = /** @type {const} */ ([
  ['gauge', 'gauge'],
  ['sum', 'sum'],
  ['histogram', 'histogram'],
  ['exponentialHistogram', 'exponential_histogram'],
  ['summary', 'summary'],
]);

const TEMPORALITY = /** @type {Record<string, number>} */ ({
  AGGREGATION_TEMPORALITY_UNSPECIFIED: 0,
  AGGREGATION_TEMPORALITY_DELTA: 1,
  AGGREGATION_TEMPORALITY_CUMULATIVE: 2,
});

/** @param {unknown} v @returns {Json} */
const obj = (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? /** @type {Json} */ (v) : {};
/** @param {unknown} v @returns {unknown[]} */
const list = (v) => (Array.isArray(v) ? v : []);
/** @param {unknown} v */
const str = (v) => (typeof v === 'string' ? v : '');

/** A JSON-mapped double: a number, or "NaN" / "Infinity" / "-Infinity". @param {unknown} v */
function double(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '') return Number(v);
  return null;
}

/** An int64 / uint64, as JSON spells it (a string or a number). @param {unknown} v */
function int64(v) {
  if (typeof v === 'string' && v !== '') return BigInt(v);
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return null;
}

/** Nanoseconds since the epoch, cut to microseconds (the unit every engine reads). @param {unknown} v */
function micros(v) {
  const ns = int64(v) ?? 0n;
  return ns / 1000n;
}

/**
 * An attribute value as text, as the ClickHouse exporter stores it: strings as they are, other
 * scalars spelled out, arrays and maps as JSON.
 * @param {unknown} value
 * @returns {string | null}
 */
export function attributeText(value) {
  const v = obj(value);
  if ('stringValue' in v) return str(v.stringValue);
  if ('boolValue' in v) return v.boolValue === true ? 'true' : 'false';
  if ('intValue' in v) return String(v.intValue);
  if ('doubleValue' in v) return String(double(v.doubleValue));
  if ('bytesValue' in v) return str(v.bytesValue);
  if ('arrayValue' in v || 'kvlistValue' in v) return JSON.stringify(plain(v));
  return null;
}

/**
 * An AnyValue as plain JSON (for arrays and maps), iteratively: no recursion on hostile depth.
 * @param {Json} root
 */
function plain(root) {
  /** @type {{ value: Json, set: (x: unknown) => void }[]} */
  const stack = [];
  /** @type {unknown} */
  let result;
  stack.push({ value: root, set: (x) => (result = x) });
  while (stack.length > 0) {
    const { value, set } = /** @type {{ value: Json, set: (x: unknown) => void }} */ (stack.pop());
    if ('arrayValue' in value) {
      const items = list(obj(value.arrayValue).values);
      /** @type {unknown[]} */
      const out = new Array(items.length);
      set(out);
      items.forEach((item, i) => {
        stack.push({ value: obj(item), set: (x) => (out[i] = x) });
      });
    } else if ('kvlistValue' in value) {
      /** @type {Record<string, unknown>} */
      const out = {};
      set(out);
      for (const kv of list(obj(value.kvlistValue).values)) {
        const key = str(obj(kv).key);
        stack.push({ value: obj(obj(kv).value), set: (x) => (out[key] = x) });
      }
    } else if ('stringValue' in value) set(str(value.stringValue));
    else if ('boolValue' in value) set(value.boolValue === true);
    else if ('intValue' in value) set(String(value.intValue));
    else if ('doubleValue' in value) set(double(value.doubleValue));
    else if ('bytesValue' in value) set(str(value.bytesValue));
    else set(null);
  }
  return result;
}

/** KeyValue list → [{ key, value }] map entries (the Parquet MAP's key_value group). @param {unknown} attributes */
function entries(attributes) {
  return list(attributes).map((kv) => ({
    key: str(obj(kv).key),
    value: attributeText(obj(kv).value),
  }));
}

/**
 * The columns, in schema order (see schema.js), for every data point of `requests`.
 * @param {Json[]} requests ExportMetricsServiceRequests in their OTLP/JSON shape
 * @returns {{ rows: number, columns: Column[] }}
 */
export function requestsToColumns(requests) {
  /** @type {bigint[]} */ const time = [];
  /** @type {bigint[]} */ const start = [];
  /** @type {string[]} */ const serviceName = [];
  /** @type {string[]} */ const resourceSchemaUrl = [];
  /** @type {unknown[]} */ const resourceAttributes = [];
  /** @type {string[]} */ const scopeName = [];
  /** @type {string[]} */ const scopeVersion = [];
  /** @type {string[]} */ const scopeSchemaUrl = [];
  /** @type {string[]} */ const metricName = [];
  /** @type {string[]} */ const description = [];
  /** @type {string[]} */ const unit = [];
  /** @type {string[]} */ const metricType = [];
  /** @type {unknown[]} */ const attributes = [];
  /** @type {number[]} */ const temporality = [];
  /** @type {boolean[]} */ const monotonic = [];
  /** @type {(number | null)[]} */ const value = [];
  /** @type {(bigint | null)[]} */ const valueAsInt = [];
  /** @type {(bigint | null)[]} */ const count = [];
  /** @type {(number | null)[]} */ const sum = [];
  /** @type {(number | null)[]} */ const min = [];
  /** @type {(number | null)[]} */ const max = [];
  /** @type {bigint[][]} */ const bucketCounts = [];
  /** @type {number[][]} */ const explicitBounds = [];
  /** @type {(number | null)[]} */ const scale = [];
  /** @type {(bigint | null)[]} */ const zeroCount = [];
  /** @type {(number | null)[]} */ const positiveOffset = [];
  /** @type {bigint[][]} */ const positiveBuckets = [];
  /** @type {(number | null)[]} */ const negativeOffset = [];
  /** @type {bigint[][]} */ const negativeBuckets = [];
  /** @type {number[]} */ const flags = [];

  const counts = /** @param {unknown} v */ (v) => list(v).map((c) => int64(c) ?? 0n);
  const int32 = /** @param {unknown} v */ (v) => (typeof v === 'number' ? v : 0);

  for (const rmValue of requests.flatMap((r) => list(r.resourceMetrics))) {
    const rm = obj(rmValue);
    const resource = obj(rm.resource);
    const resourceEntries = entries(resource.attributes);
    const service = resourceEntries.find((e) => e.key === 'service.name')?.value ?? '';
    for (const smValue of list(rm.scopeMetrics)) {
      const sm = obj(smValue);
      const scope = obj(sm.scope);
      for (const metricValue of list(sm.metrics)) {
        const metric = obj(metricValue);
        const found = METRIC_TYPES.find(([field]) => field in metric);
        if (found === undefined) continue;
        const [field, type] = found;
        const data = obj(metric[field]);
        const t = data.aggregationTemporality;
        const agg = typeof t === 'number' ? t : (TEMPORALITY[str(t)] ?? 0);
        for (const pointValue of list(data.dataPoints)) {
          const p = obj(pointValue);
          time.push(micros(p.timeUnixNano));
          start.push(micros(p.startTimeUnixNano));
          serviceName.push(service);
          resourceSchemaUrl.push(str(rm.schemaUrl));
          resourceAttributes.push(resourceEntries);
          scopeName.push(str(scope.name));
          scopeVersion.push(str(scope.version));
          scopeSchemaUrl.push(str(sm.schemaUrl));
          metricName.push(str(metric.name));
          description.push(str(metric.description));
          unit.push(str(metric.unit));
          metricType.push(type);
          attributes.push(entries(p.attributes));
          temporality.push(agg);
          monotonic.push(data.isMonotonic === true);
          const numeric = type === 'gauge' || type === 'sum';
          const asInt = numeric ? int64(p.asInt) : null;
          value.push(numeric ? (asInt !== null ? Number(asInt) : double(p.asDouble)) : null);
          valueAsInt.push(asInt);
          count.push(numeric ? null : int64(p.count));
          sum.push(numeric ? null : double(p.sum));
          min.push(numeric ? null : double(p.min));
          max.push(numeric ? null : double(p.max));
          bucketCounts.push(type === 'histogram' ? counts(p.bucketCounts) : []);
          explicitBounds.push(
            type === 'histogram' ? list(p.explicitBounds).map((b) => double(b) ?? 0) : [],
          );
          const exponential = type === 'exponential_histogram';
          const positive = obj(p.positive);
          const negative = obj(p.negative);
          scale.push(exponential ? int32(p.scale) : null);
          zeroCount.push(exponential ? (int64(p.zeroCount) ?? 0n) : null);
          positiveOffset.push(exponential ? int32(positive.offset) : null);
          positiveBuckets.push(exponential ? counts(positive.bucketCounts) : []);
          negativeOffset.push(exponential ? int32(negative.offset) : null);
          negativeBuckets.push(exponential ? counts(negative.bucketCounts) : []);
          flags.push(int32(p.flags));
        }
      }
    }
  }
  return {
    rows: time.length,
    columns: [
      { name: 'TimeUnix', data: BigInt64Array.from(time) },
      { name: 'StartTimeUnix', data: BigInt64Array.from(start) },
      { name: 'ServiceName', data: serviceName },
      { name: 'ResourceSchemaUrl', data: resourceSchemaUrl },
      { name: 'ResourceAttributes', data: resourceAttributes },
      { name: 'ScopeName', data: scopeName },
      { name: 'ScopeVersion', data: scopeVersion },
      { name: 'ScopeSchemaUrl', data: scopeSchemaUrl },
      { name: 'MetricName', data: metricName },
      { name: 'MetricDescription', data: description },
      { name: 'MetricUnit', data: unit },
      { name: 'MetricType', data: metricType },
      { name: 'Attributes', data: attributes },
      { name: 'AggregationTemporality', data: Int32Array.from(temporality) },
      { name: 'IsMonotonic', data: monotonic },
      { name: 'Value', data: value },
      { name: 'ValueAsInt', data: valueAsInt },
      { name: 'Count', data: count },
      { name: 'Sum', data: sum },
      { name: 'Min', data: min },
      { name: 'Max', data: max },
      { name: 'BucketCounts', data: bucketCounts },
      { name: 'ExplicitBounds', data: explicitBounds },
      { name: 'Scale', data: scale },
      { name: 'ZeroCount', data: zeroCount },
      { name: 'PositiveOffset', data: positiveOffset },
      { name: 'PositiveBucketCounts', data: positiveBuckets },
      { name: 'NegativeOffset', data: negativeOffset },
      { name: 'NegativeBucketCounts', data: negativeBuckets },
      { name: 'Flags', data: Int32Array.from(flags) },
    ],
  };
}
