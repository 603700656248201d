import type { OtlpObject, OtlpValue } from '../../encoding/otlp-proto-decode.js';
import {
  attributes,
  enumOf,
  list,
  nanosText,
  nanosToIso,
  num,
  obj,
  type PlainValue,
  str,
} from '../plain-values.js';
import { METRIC_FIELDS, TEMPORALITY_NAMES, walkRequest } from './otlp-walk.js';

// Shared by every signal's rows; exported here too, where the reader's API has always had them.
export { anyValue, attributes, nanosToIso, type PlainValue } from '../plain-values.js';

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
  /** Another writer's temporality outside the enum is its value as stored, as text (`'3'`). */
  temporality: 'delta' | 'cumulative' | '' | (string & {});
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

const nums = (v: OtlpValue | undefined): number[] => list(v).map((x) => num(x) ?? 0);

const TEMPORALITY: Readonly<Record<number, PointRow['temporality']>> = {
  0: '',
  1: 'delta',
  2: 'cumulative',
};

/** A metric's temporality as a row shows it; another writer's 3, 2.5 or name as stored, as text. */
function temporality(data: OtlpObject): PointRow['temporality'] {
  const stored = enumOf(data.aggregationTemporality, TEMPORALITY_NAMES);
  return (
    (typeof stored === 'number' && Object.hasOwn(TEMPORALITY, stored)
      ? TEMPORALITY[stored]
      : undefined) ?? String(stored)
  );
}

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
        temporality: temporality(data as OtlpObject),
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
    // Times as text or, as OTLP/JSON also allows, numbers (spans' and log records' rows too).
    time: nanosToIso(nanosText(p.timeUnixNano)),
    start: nanosToIso(nanosText(p.startTimeUnixNano)),
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
