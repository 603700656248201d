import { MAX_NESTING_DEPTH } from '../../encoding/check-request.js';
import type { OtlpObject, OtlpValue } from '../../encoding/otlp-proto-decode.js';
import {
  list as listOf,
  METRIC_FIELDS,
  numberOf,
  obj as objectOf,
  str as stringOf,
  temporalityOf,
  walkRequest,
} from './otlp-walk.js';

export type PlainValue =
  | string
  | number
  | boolean
  | null
  | PlainValue[]
  | { [key: string]: PlainValue };

export type MetricType = (typeof METRIC_FIELDS)[number];

/** What a metric is, in the instrument words people use. */
export type InstrumentKind =
  | 'counter'
  | 'up-down-counter'
  | 'gauge'
  | 'histogram'
  | 'exponential-histogram'
  | 'summary';

export interface HistogramBuckets {
  /** Upper bounds; bucket i holds values in (explicitBounds[i-1], explicitBounds[i]]. */
  explicitBounds: number[];
  bucketCounts: number[];
}

export interface ExponentialBuckets {
  scale: number;
  zeroCount: number;
  positive: { offset: number; bucketCounts: number[] };
  negative: { offset: number; bucketCounts: number[] };
}

/**
 * One data point, flattened with its resource, scope and metric: the row of dataPointRows() and
 * of `otel-s3 points` (each `--format jsonl` line is one, CSV has these columns).
 */
export interface PointRow {
  /** End of the point's interval, ISO 8601 UTC with nanoseconds (`2026-12-01T04:52:18.004000000Z`). */
  time: string;
  /** Start of the interval (cumulative and delta points), else ''. */
  start: string;
  resource: Record<string, PlainValue>;
  scope: string;
  metric: string;
  type: InstrumentKind;
  unit: string;
  temporality: 'delta' | 'cumulative' | '';
  attributes: Record<string, PlainValue>;
  /** Counters, up-down counters and gauges. */
  value?: number;
  /** Histograms, exponential histograms and summaries. */
  count?: number;
  sum?: number;
  min?: number;
  max?: number;
  buckets?: HistogramBuckets | ExponentialBuckets;
}

// The OTLP walk's readers (otlp-walk.ts), typed for this package's OTLP objects.
const obj = objectOf as (v: OtlpValue | undefined) => OtlpObject;
const list = listOf as (v: OtlpValue | undefined) => OtlpValue[];
const num = numberOf as (v: OtlpValue | undefined) => number | undefined;
const nums = (v: OtlpValue | undefined): number[] => list(v).map((x) => num(x) ?? 0);
const str = stringOf as (v: OtlpValue | undefined) => string;

/**
 * An OTLP AnyValue as a plain JSON value. Throws a RangeError for arrays or key-value lists
 * nested deeper than MAX_NESTING_DEPTH (readMetrics never yields such a request), rather than
 * overflowing the stack.
 */
export function anyValue(v: OtlpValue | undefined): PlainValue {
  return plainValue(v, 0);
}

/** A KeyValue list as a plain object. */
export function attributes(v: OtlpValue | undefined): Record<string, PlainValue> {
  return plainKeyValues(v, 0);
}

function plainValue(v: OtlpValue | undefined, depth: number): PlainValue {
  if (depth > MAX_NESTING_DEPTH) {
    throw new RangeError(`attribute value nested deeper than ${MAX_NESTING_DEPTH} levels`);
  }
  const o = obj(v);
  if ('stringValue' in o) return str(o.stringValue);
  if ('boolValue' in o) return o.boolValue === true;
  if ('intValue' in o) return num(o.intValue) ?? 0;
  if ('doubleValue' in o) return num(o.doubleValue) ?? 0;
  if ('arrayValue' in o) return list(obj(o.arrayValue).values).map((x) => plainValue(x, depth + 1));
  if ('kvlistValue' in o) return plainKeyValues(obj(o.kvlistValue).values, depth + 1);
  if ('bytesValue' in o) return str(o.bytesValue);
  return null;
}

function plainKeyValues(v: OtlpValue | undefined, depth: number): Record<string, PlainValue> {
  const out: Record<string, PlainValue> = {};
  for (const kv of list(v)) {
    const o = obj(kv);
    out[str(o.key)] = plainValue(o.value, depth);
  }
  return out;
}

const TEMPORALITY: Record<number, 'delta' | 'cumulative'> = { 1: 'delta', 2: 'cumulative' };

/** The metric fields shared by its points. */
type MetricPart = Pick<PointRow, 'resource' | 'scope' | 'metric' | 'type' | 'unit' | 'temporality'>;

/**
 * Every data point of an ExportMetricsServiceRequest (in the OTLP/JSON object shape), flattened:
 * the rows `otel-s3 points` prints.
 */
export function dataPointRows(request: OtlpObject): PointRow[] {
  const rows: PointRow[] = [];
  let resource: Record<string, PlainValue> = {};
  let scope = '';
  let base: MetricPart;
  let otlpType: MetricType;
  walkRequest(request, {
    resource(rm) {
      resource = attributes(obj(rm.resource as OtlpValue).attributes);
    },
    scope(sm) {
      scope = str(obj(sm.scope as OtlpValue).name);
    },
    metric(metric, code, data) {
      otlpType = METRIC_FIELDS[code] as MetricType;
      base = {
        resource,
        scope,
        metric: str(metric.name as OtlpValue),
        type: instrumentKind({ type: otlpType, monotonic: data.isMonotonic === true }),
        unit: str(metric.unit as OtlpValue),
        temporality: TEMPORALITY[temporalityOf(data)] ?? '',
      };
    },
    point(p) {
      rows.push(point(base, otlpType, p as OtlpObject));
    },
  });
  return rows;
}

function point(base: MetricPart, type: MetricType, p: OtlpObject): PointRow {
  const row: PointRow = {
    time: nanosToIso(str(p.timeUnixNano)),
    start: nanosToIso(str(p.startTimeUnixNano)),
    ...base,
    attributes: attributes(p.attributes),
  };
  const optional = (name: 'sum' | 'min' | 'max') => {
    const v = num(p[name]);
    if (v !== undefined) row[name] = v;
  };
  // What both kinds of histogram have: a count, and a sum, min and max when they were recorded.
  const summary = () => {
    row.count = num(p.count) ?? 0;
    optional('sum');
    optional('min');
    optional('max');
  };
  switch (type) {
    case 'sum':
    case 'gauge':
      row.value = num(p.asInt) ?? num(p.asDouble) ?? 0;
      break;
    case 'histogram':
      summary();
      row.buckets = { explicitBounds: nums(p.explicitBounds), bucketCounts: nums(p.bucketCounts) };
      break;
    case 'exponentialHistogram': {
      const buckets = (b: OtlpValue | undefined) => ({
        offset: num(obj(b).offset) ?? 0,
        bucketCounts: nums(obj(b).bucketCounts),
      });
      summary();
      row.buckets = {
        scale: num(p.scale) ?? 0,
        zeroCount: num(p.zeroCount) ?? 0,
        positive: buckets(p.positive),
        negative: buckets(p.negative),
      };
      break;
    }
    case 'summary':
      row.count = num(p.count) ?? 0;
      optional('sum');
      break;
  }
  return row;
}

/** The kind of a metric: a monotonic sum is a counter, any other sum an up-down counter. */
export function instrumentKind(metric: { type: MetricType; monotonic: boolean }): InstrumentKind {
  switch (metric.type) {
    case 'sum':
      return metric.monotonic ? 'counter' : 'up-down-counter';
    case 'exponentialHistogram':
      return 'exponential-histogram';
    default:
      return metric.type;
  }
}

/** The last second a Date can hold: 8.64e15 ms after 1970. */
const MAX_DATE_SECONDS = 8_640_000_000_000n;

/**
 * An OTLP timestamp (decimal nanoseconds) as an ISO 8601 UTC time with nanoseconds; '' if unset.
 * Every uint64 (up to the year 2554) has one; past the last Date (year 275760) it throws a
 * RangeError naming the value.
 */
export function nanosToIso(nanos: string): string {
  if (!/^\d+$/.test(nanos) || /^0+$/.test(nanos)) return '';
  const ns = BigInt(nanos);
  const seconds = ns / 1_000_000_000n;
  if (seconds > MAX_DATE_SECONDS) {
    throw new RangeError(`timestamp ${nanos} ns is past the last date JavaScript can show`);
  }
  const iso = new Date(Number(seconds) * 1000).toISOString();
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, -5)}.${fraction}Z`;
}
