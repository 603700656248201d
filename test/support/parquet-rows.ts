import type { PlainValue } from '../../src/reader.js';
import { isoNanos, type RawPointRow } from './reader-fixtures.js';

/**
 * A TIMESTAMP cell as decimal nanoseconds: DuckDB's JSON text (`2026-11-30 04:00:00.123456+00`),
 * a JS Date (Polars, hyparquet by default: milliseconds), or a bigint of microseconds (hyparquet
 * with a `timestampFromMicroseconds` parser that keeps the raw value).
 */
function timestampNanos(v: unknown): string {
  if (v instanceof Date) return (BigInt(v.getTime()) * 1_000_000n).toString();
  if (typeof v === 'bigint') return (v * 1_000n).toString();
  if (typeof v === 'string') return isoNanos(v);
  throw new Error(`not a timestamp: ${String(v)}`);
}

/**
 * A row of the Parquet table, as an independent engine returns it, back in the shape of OTLP
 * (RawPointRow): so the readers' results compare with what was recorded. MAP columns may come
 * as [{ key, value }] (DuckDB, Polars) or as a plain object (hyparquet); 64-bit integers as
 * bigint, number or decimal string; timestamps as timestampNanos() reads them.
 */
export function pointRowOfTable(row: Record<string, unknown>): RawPointRow {
  const num = (v: unknown) => (v === null || v === undefined ? undefined : Number(v));
  const nums = (v: unknown) => (Array.isArray(v) ? v.map((x) => Number(x)) : []);
  const map = (v: unknown): Record<string, PlainValue> => {
    if (Array.isArray(v)) {
      return Object.fromEntries(
        v.map((e: { key: string; value: string | null }) => [e.key, e.value]),
      );
    }
    return typeof v === 'object' && v !== null ? (v as Record<string, PlainValue>) : {};
  };
  const type = String(row.MetricType);
  const temporality = { 1: 'delta', 2: 'cumulative' }[Number(row.AggregationTemporality)] as
    | 'delta'
    | 'cumulative'
    | undefined;
  const out: RawPointRow = {
    resource: map(row.ResourceAttributes),
    scope: String(row.ScopeName),
    metric: String(row.MetricName),
    unit: String(row.MetricUnit),
    type: type === 'exponential_histogram' ? 'exponentialHistogram' : (type as RawPointRow['type']),
    temporality: type === 'gauge' ? undefined : temporality,
    monotonic: type === 'sum' ? row.IsMonotonic === true : undefined,
    startTimeUnixNano: timestampNanos(row.StartTimeUnix),
    timeUnixNano: timestampNanos(row.TimeUnix),
    attributes: map(row.Attributes),
  };
  if (type === 'sum' || type === 'gauge') {
    const value = num(row.Value);
    if (value !== undefined) out.value = value;
    return out;
  }
  for (const [field, column] of [
    ['count', 'Count'],
    ['sum', 'Sum'],
    ['min', 'Min'],
    ['max', 'Max'],
  ] as const) {
    const v = num(row[column]);
    if (v !== undefined) out[field] = v;
  }
  if (type === 'histogram') {
    out.bucketCounts = nums(row.BucketCounts);
    out.explicitBounds = nums(row.ExplicitBounds);
  } else {
    out.scale = num(row.Scale) ?? 0;
    out.zeroCount = num(row.ZeroCount) ?? 0;
    out.positive = {
      offset: num(row.PositiveOffset) ?? 0,
      bucketCounts: nums(row.PositiveBucketCounts),
    };
    out.negative = {
      offset: num(row.NegativeOffset) ?? 0,
      bucketCounts: nums(row.NegativeBucketCounts),
    };
  }
  return out;
}
