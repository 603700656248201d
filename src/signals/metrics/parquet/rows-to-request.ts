import type { OtlpObject, OtlpValue } from '../../../encoding/otlp-proto-decode.js';
import { mapAttributes, type Row, text } from '../../parquet-values.js';
import { METRIC_TYPES } from './sealed.js';

/** MetricType in the table → the metric's data field in OTLP/JSON. */
const TYPE_FIELD: Readonly<Record<string, string>> = Object.fromEntries(
  METRIC_TYPES.map(([field, type]) => [type, field]),
);

/** Microseconds as nanoseconds, in the OTLP/JSON spelling (a decimal string). */
const nanos = (micros: unknown) => `${typeof micros === 'bigint' ? micros * 1000n : 0n}`;
/** A double in the OTLP/JSON spelling: NaN and the infinities as strings. */
const double = (v: unknown): OtlpValue =>
  typeof v === 'number' && !Number.isFinite(v) ? String(v) : (v as number);

/**
 * A count (a uint64) as decimal text: one of 2^63 or more is kept in INT64 as its 64 bits, which
 * read as a negative number (docs/parquet.md).
 */
const uint64 = (v: unknown): string =>
  typeof v === 'bigint' ? BigInt.asUintN(64, v).toString() : String(v);

/** One data point of a row, in the OTLP/JSON shape of its metric type. */
function point(row: Row, type: string): OtlpObject {
  const p: OtlpObject = {
    attributes: mapAttributes(row.Attributes),
    startTimeUnixNano: nanos(row.StartTimeUnix),
    timeUnixNano: nanos(row.TimeUnix),
  };
  if (type === 'gauge' || type === 'sum') {
    if (typeof row.ValueAsInt === 'bigint') p.asInt = String(row.ValueAsInt);
    else if (row.Value !== null && row.Value !== undefined) p.asDouble = double(row.Value);
  } else {
    if (typeof row.Count === 'bigint') p.count = uint64(row.Count);
    for (const field of ['Sum', 'Min', 'Max'] as const) {
      const v = row[field];
      if (typeof v === 'number') p[field.toLowerCase()] = double(v);
    }
  }
  const counts = (v: unknown) => (Array.isArray(v) ? v.map(uint64) : []);
  if (type === 'histogram') {
    p.bucketCounts = counts(row.BucketCounts);
    p.explicitBounds = Array.isArray(row.ExplicitBounds) ? row.ExplicitBounds.map(double) : [];
  }
  if (type === 'exponential_histogram') {
    p.scale = Number(row.Scale ?? 0);
    p.zeroCount = uint64(row.ZeroCount ?? 0n);
    p.positive = {
      offset: Number(row.PositiveOffset ?? 0),
      bucketCounts: counts(row.PositiveBucketCounts),
    };
    p.negative = {
      offset: Number(row.NegativeOffset ?? 0),
      bucketCounts: counts(row.NegativeBucketCounts),
    };
  }
  if (typeof row.Flags === 'number' && row.Flags !== 0) p.flags = row.Flags >>> 0; // uint32 in INT32
  return p;
}

/** Groups in first-seen order, by a key. */
function group<T>(items: T[], keyOf: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [item]);
    else list.push(item);
  }
  return [...groups.values()];
}

/**
 * Rows of the Parquet table as one ExportMetricsServiceRequest, in its OTLP/JSON shape: rows
 * that share a resource, a scope and a metric come back together. What the table does not keep
 * is documented as its losses: attribute values are text, times are microseconds.
 */
export function rowsToRequest(rows: Row[]): OtlpObject {
  const resourceKey = (r: Row) => JSON.stringify([r.ResourceSchemaUrl, r.ResourceAttributes]);
  const scopeKey = (r: Row) => JSON.stringify([r.ScopeName, r.ScopeVersion, r.ScopeSchemaUrl]);
  const metricKey = (r: Row) =>
    JSON.stringify([
      r.MetricName,
      r.MetricDescription,
      r.MetricUnit,
      r.MetricType,
      r.AggregationTemporality,
      r.IsMonotonic,
    ]);
  return {
    resourceMetrics: group(rows, resourceKey).map((resourceRows) => {
      const first = resourceRows[0] as Row;
      const rm: OtlpObject = {
        resource: { attributes: mapAttributes(first.ResourceAttributes) },
        scopeMetrics: group(resourceRows, scopeKey).map((scopeRows) => {
          const s = scopeRows[0] as Row;
          const sm: OtlpObject = {
            scope: { name: text(s.ScopeName), version: text(s.ScopeVersion) },
            metrics: group(scopeRows, metricKey).map((metricRows) => {
              const m = metricRows[0] as Row;
              const type = text(m.MetricType);
              const data: OtlpObject = { dataPoints: metricRows.map((row) => point(row, type)) };
              if (type === 'sum' || type === 'histogram' || type === 'exponential_histogram')
                data.aggregationTemporality = Number(m.AggregationTemporality ?? 0);
              if (type === 'sum') data.isMonotonic = m.IsMonotonic === true;
              return {
                name: text(m.MetricName),
                description: text(m.MetricDescription),
                unit: text(m.MetricUnit),
                [TYPE_FIELD[type] ?? 'gauge']: data,
              };
            }),
          };
          if (text(s.ScopeSchemaUrl) !== '') sm.schemaUrl = text(s.ScopeSchemaUrl);
          return sm;
        }),
      };
      if (text(first.ResourceSchemaUrl) !== '') rm.schemaUrl = text(first.ResourceSchemaUrl);
      return rm;
    }),
  };
}
