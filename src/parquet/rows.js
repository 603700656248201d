// @ts-check
// OTLP metrics requests (in their OTLP/JSON object shape) as the columns of the Parquet table:
// one row per data point, column names of the OpenTelemetry Collector's ClickHouse exporter.
// Plain JavaScript with JSDoc types: it runs inside the body worker, from src/ and from dist/.

/**
 * @typedef {Record<string, unknown>} Json
 * @typedef {{ name: string, data: unknown[] | BigInt64Array | Int32Array }} Column
 */

/** The metric's data field in OTLP/JSON, and its MetricType in the table. */
export const METRIC_TYPES = /** @type {const} */ ([
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

/** The table's columns as they fill, one array per column. */
function emptyColumns() {
  return {
    /** @type {bigint[]} */ time: [],
    /** @type {bigint[]} */ start: [],
    /** @type {string[]} */ serviceName: [],
    /** @type {string[]} */ resourceSchemaUrl: [],
    /** @type {unknown[]} */ resourceAttributes: [],
    /** @type {string[]} */ scopeName: [],
    /** @type {string[]} */ scopeVersion: [],
    /** @type {string[]} */ scopeSchemaUrl: [],
    /** @type {string[]} */ metricName: [],
    /** @type {string[]} */ description: [],
    /** @type {string[]} */ unit: [],
    /** @type {string[]} */ metricType: [],
    /** @type {unknown[]} */ attributes: [],
    /** @type {number[]} */ temporality: [],
    /** @type {boolean[]} */ monotonic: [],
    /** @type {(number | null)[]} */ value: [],
    /** @type {(bigint | null)[]} */ valueAsInt: [],
    /** @type {(bigint | null)[]} */ count: [],
    /** @type {(number | null)[]} */ sum: [],
    /** @type {(number | null)[]} */ min: [],
    /** @type {(number | null)[]} */ max: [],
    /** @type {bigint[][]} */ bucketCounts: [],
    /** @type {number[][]} */ explicitBounds: [],
    /** @type {(number | null)[]} */ scale: [],
    /** @type {(bigint | null)[]} */ zeroCount: [],
    /** @type {(number | null)[]} */ positiveOffset: [],
    /** @type {bigint[][]} */ positiveBuckets: [],
    /** @type {(number | null)[]} */ negativeOffset: [],
    /** @type {bigint[][]} */ negativeBuckets: [],
    /** @type {number[]} */ flags: [],
  };
}

const counts = /** @param {unknown} v */ (v) => list(v).map((c) => int64(c) ?? 0n);
const int32 = /** @param {unknown} v */ (v) => (typeof v === 'number' ? v : 0);

/**
 * Builds the table one ResourceMetrics at a time, so that a batch's records can be parsed one by
 * one and each parsed tree dropped before the next: the peak holds the columns and one record,
 * not every record's tree at once.
 */
export class TableBuilder {
  #c = emptyColumns();

  /** Appends a row per data point of one ResourceMetrics (OTLP/JSON object shape). @param {unknown} rmValue */
  addResourceMetrics(rmValue) {
    const c = this.#c;
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
          c.time.push(micros(p.timeUnixNano));
          c.start.push(micros(p.startTimeUnixNano));
          c.serviceName.push(service);
          c.resourceSchemaUrl.push(str(rm.schemaUrl));
          c.resourceAttributes.push(resourceEntries);
          c.scopeName.push(str(scope.name));
          c.scopeVersion.push(str(scope.version));
          c.scopeSchemaUrl.push(str(sm.schemaUrl));
          c.metricName.push(str(metric.name));
          c.description.push(str(metric.description));
          c.unit.push(str(metric.unit));
          c.metricType.push(type);
          c.attributes.push(entries(p.attributes));
          c.temporality.push(agg);
          c.monotonic.push(data.isMonotonic === true);
          const numeric = type === 'gauge' || type === 'sum';
          const asInt = numeric ? int64(p.asInt) : null;
          c.value.push(numeric ? (asInt !== null ? Number(asInt) : double(p.asDouble)) : null);
          c.valueAsInt.push(asInt);
          c.count.push(numeric ? null : int64(p.count));
          c.sum.push(numeric ? null : double(p.sum));
          c.min.push(numeric ? null : double(p.min));
          c.max.push(numeric ? null : double(p.max));
          c.bucketCounts.push(type === 'histogram' ? counts(p.bucketCounts) : []);
          c.explicitBounds.push(
            type === 'histogram' ? list(p.explicitBounds).map((b) => double(b) ?? 0) : [],
          );
          const exponential = type === 'exponential_histogram';
          const positive = obj(p.positive);
          const negative = obj(p.negative);
          c.scale.push(exponential ? int32(p.scale) : null);
          c.zeroCount.push(exponential ? (int64(p.zeroCount) ?? 0n) : null);
          c.positiveOffset.push(exponential ? int32(positive.offset) : null);
          c.positiveBuckets.push(exponential ? counts(positive.bucketCounts) : []);
          c.negativeOffset.push(exponential ? int32(negative.offset) : null);
          c.negativeBuckets.push(exponential ? counts(negative.bucketCounts) : []);
          c.flags.push(int32(p.flags));
        }
      }
    }
  }

  /** The rows so far, and the columns in schema order (see schema.js). @returns {{ rows: number, columns: Column[] }} */
  build() {
    const c = this.#c;
    return {
      rows: c.time.length,
      columns: [
        { name: 'TimeUnix', data: BigInt64Array.from(c.time) },
        { name: 'StartTimeUnix', data: BigInt64Array.from(c.start) },
        { name: 'ServiceName', data: c.serviceName },
        { name: 'ResourceSchemaUrl', data: c.resourceSchemaUrl },
        { name: 'ResourceAttributes', data: c.resourceAttributes },
        { name: 'ScopeName', data: c.scopeName },
        { name: 'ScopeVersion', data: c.scopeVersion },
        { name: 'ScopeSchemaUrl', data: c.scopeSchemaUrl },
        { name: 'MetricName', data: c.metricName },
        { name: 'MetricDescription', data: c.description },
        { name: 'MetricUnit', data: c.unit },
        { name: 'MetricType', data: c.metricType },
        { name: 'Attributes', data: c.attributes },
        { name: 'AggregationTemporality', data: Int32Array.from(c.temporality) },
        { name: 'IsMonotonic', data: c.monotonic },
        { name: 'Value', data: c.value },
        { name: 'ValueAsInt', data: c.valueAsInt },
        { name: 'Count', data: c.count },
        { name: 'Sum', data: c.sum },
        { name: 'Min', data: c.min },
        { name: 'Max', data: c.max },
        { name: 'BucketCounts', data: c.bucketCounts },
        { name: 'ExplicitBounds', data: c.explicitBounds },
        { name: 'Scale', data: c.scale },
        { name: 'ZeroCount', data: c.zeroCount },
        { name: 'PositiveOffset', data: c.positiveOffset },
        { name: 'PositiveBucketCounts', data: c.positiveBuckets },
        { name: 'NegativeOffset', data: c.negativeOffset },
        { name: 'NegativeBucketCounts', data: c.negativeBuckets },
        { name: 'Flags', data: Int32Array.from(c.flags) },
      ],
    };
  }
}
