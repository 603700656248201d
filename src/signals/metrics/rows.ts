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

/** One data point, flattened with its resource, scope and metric. */
export interface PointRow {
  resource: Record<string, PlainValue>;
  scope: string;
  metric: string;
  unit: string;
  type: MetricType;
  temporality: 'delta' | 'cumulative' | undefined;
  monotonic: boolean | undefined;
  startTimeUnixNano: string;
  timeUnixNano: string;
  attributes: Record<string, PlainValue>;
  /** Sum and gauge points. */
  value?: number;
  /** Histogram, exponential histogram and summary points. */
  count?: number;
  sum?: number;
  min?: number;
  max?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
  scale?: number;
  zeroCount?: number;
  positive?: { offset: number; bucketCounts: number[] };
  negative?: { offset: number; bucketCounts: number[] };
}

// The OTLP walk's readers (src/encoding/otlp-walk.js), typed for this package's OTLP objects.
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

/** Every data point of an ExportMetricsServiceRequest (in the OTLP/JSON object shape), flattened. */
export function dataPointRows(request: OtlpObject): PointRow[] {
  const rows: PointRow[] = [];
  let resource: Record<string, PlainValue> = {};
  let scope = '';
  let base: Omit<PointRow, 'startTimeUnixNano' | 'timeUnixNano' | 'attributes'>;
  walkRequest(request, {
    resource(rm) {
      resource = attributes(obj(rm.resource as OtlpValue).attributes);
    },
    scope(sm) {
      scope = str(obj(sm.scope as OtlpValue).name);
    },
    metric(metric, code, data) {
      const type = METRIC_FIELDS[code] as MetricType;
      base = {
        resource,
        scope,
        metric: str(metric.name as OtlpValue),
        unit: str(metric.unit as OtlpValue),
        type,
        temporality: TEMPORALITY[temporalityOf(data)],
        monotonic: type === 'sum' ? data.isMonotonic === true : undefined,
      };
    },
    point(p) {
      rows.push({ ...base, ...point(base.type, p as OtlpObject) });
    },
  });
  return rows;
}

function point(
  type: MetricType,
  p: OtlpObject,
): Omit<PointRow, 'resource' | 'scope' | 'metric' | 'unit' | 'type' | 'temporality' | 'monotonic'> {
  const common = {
    startTimeUnixNano: str(p.startTimeUnixNano),
    timeUnixNano: str(p.timeUnixNano),
    attributes: attributes(p.attributes),
  };
  const optional = (name: 'sum' | 'min' | 'max') => (name in p ? { [name]: num(p[name]) } : {});
  // What both kinds of histogram have: a count, and a sum, min and max when they were recorded.
  const summary = () => ({
    ...common,
    count: num(p.count) ?? 0,
    ...optional('sum'),
    ...optional('min'),
    ...optional('max'),
  });
  switch (type) {
    case 'sum':
    case 'gauge':
      return { ...common, value: num(p.asInt) ?? num(p.asDouble) ?? 0 };
    case 'histogram':
      return {
        ...summary(),
        bucketCounts: nums(p.bucketCounts),
        explicitBounds: nums(p.explicitBounds),
      };
    case 'exponentialHistogram': {
      const buckets = (b: OtlpValue | undefined) => ({
        offset: num(obj(b).offset) ?? 0,
        bucketCounts: nums(obj(b).bucketCounts),
      });
      return {
        ...summary(),
        scale: num(p.scale) ?? 0,
        zeroCount: num(p.zeroCount) ?? 0,
        positive: buckets(p.positive),
        negative: buckets(p.negative),
      };
    }
    case 'summary':
      return { ...common, count: num(p.count) ?? 0, ...optional('sum') };
  }
}

/** What a metric is, in the instrument words people use. */
export type InstrumentKind =
  | 'counter'
  | 'up-down-counter'
  | 'gauge'
  | 'histogram'
  | 'exponential-histogram'
  | 'summary';

/** The kind of a row's metric: a monotonic sum is a counter, any other sum an up-down counter. */
export function instrumentKind(row: Pick<PointRow, 'type' | 'monotonic'>): InstrumentKind {
  switch (row.type) {
    case 'sum':
      return row.monotonic === true ? 'counter' : 'up-down-counter';
    case 'exponentialHistogram':
      return 'exponential-histogram';
    default:
      return row.type;
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
