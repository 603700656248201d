import type { OtlpObject, OtlpValue } from '../../encoding/otlp-proto-decode.js';
import {
  attributes,
  attributesOk,
  checkAttributes,
  enumOf,
  FieldValueError,
  INT64,
  inItem,
  int32Field,
  int32Ok,
  int64Number,
  list,
  nanosText,
  nanosToIso,
  num,
  obj,
  type PlainValue,
  str,
  UINT64,
  uint64Field,
  uint64Ok,
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
  /**
   * Counters, up-down counters and gauges; absent for a point with no value (neither asInt nor
   * asDouble, as one flagged NO_RECORDED_VALUE is; Parquet's null Value).
   */
  value?: number;
  /** Histograms, exponential histograms and summaries. */
  count?: number;
  sum?: number;
  min?: number;
  max?: number;
  buckets?: HistogramBuckets | ExponentialBuckets;
}

/**
 * What a point's double field may hold, as OTLP/JSON spells numbers, in the words of the
 * compactor's (plain-values.ts doubleField).
 */
const DOUBLE = 'a double: a number, or its decimal text, NaN or ±Infinity';

/**
 * A double field of a data point: undefined when unset (absent or null); throws
 * FieldValueError, naming `field`, for anything else no number is ("abc", true, {}).
 */
function numberField(v: OtlpValue | undefined, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = num(v);
  if (n === undefined) throw new FieldValueError(field, v, DOUBLE);
  return n;
}

/**
 * A point's asInt: an int64 (int64Number: not 1.5, "1e3" or 2^63), as a number; undefined when
 * unset. Throws FieldValueError for anything else.
 */
function asIntField(v: OtlpValue | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = int64Number(v);
  if (n === undefined) throw new FieldValueError('asInt', v, INT64);
  return n;
}

/** Whether numberField() reads `v` without throwing. */
const numberOk = (v: OtlpValue | undefined): boolean =>
  v === undefined || v === null || num(v) !== undefined;

/** Whether numberList() reads `v` without throwing. */
function numbersOk(v: OtlpValue | undefined): boolean {
  const values = list(v);
  for (let i = 0; i < values.length; i++) if (num(values[i]) === undefined) return false;
  return true;
}

/** A list of doubles; each item must be one (a null in a list is no unset field). */
const numberList = (v: OtlpValue | undefined, field: string): number[] =>
  list(v).map((x) => {
    const n = num(x);
    if (n === undefined) throw new FieldValueError(field, x, DOUBLE);
    return n;
  });

/**
 * A count (a uint64: uint64Field, as the compactor reads it) as a row's number, the nearest
 * double past 2^53; 0 when unset. Throws FieldValueError for 1.5, -1, "1e3", NaN or 2^64.
 */
const countField = (v: OtlpValue | undefined, field: string): number =>
  Number(uint64Field(v, field));

/** Whether countList() reads `v` without throwing. */
function countsOk(v: OtlpValue | undefined): boolean {
  const values = list(v);
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (x === null || !uint64Ok(x)) return false;
  }
  return true;
}

/** A list of counts (bucket counts); a null in it is no count, as no unset field is. */
const countList = (v: OtlpValue | undefined, field: string): number[] =>
  list(v).map((x) => {
    if (x === null) throw new FieldValueError(field, x, UINT64);
    return countField(x, field);
  });

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
 * the rows `otel-s3 points` prints. Throws FieldValueError, naming the metric and the field, for a
 * number field that holds no number ("abc", true, {}), or none of its kind (a count of 1.5, -1 or
 * "1e3", which no uint64 is; a scale of 2^31): the reader refuses such an object as it decodes it
 * (checkPointNumbers), as the compactor does (parquet/append-otlp.ts reads the same fields).
 */
export function dataPointRows(request: OtlpObject): PointRow[] {
  const rows: PointRow[] = [];
  let resource: Record<string, PlainValue> = {};
  let scope = '';
  let base: MetricPart;
  let otlpType: MetricType;
  walkRequest(request, {
    resource(rm) {
      resource = attributes(obj(rm.resource as OtlpValue).attributes, 'resource attribute');
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
      try {
        rows.push(point(base, otlpType, p as OtlpObject));
      } catch (error) {
        throw inMetric(base.metric, error);
      }
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
  pointNumbers(type, p, row);
  checkExemplars(p.exemplars);
  return row;
}

/**
 * The number fields of a point, into its row: doubles (sum, min, max, asDouble, bounds) as
 * numbers, counts as uint64s and a scale and bucket offsets as int32s, read by the compactor's
 * field readers (uint64Field, int32Field). Throws FieldValueError for a field that holds none of
 * its kind, the first in the row's order.
 */
function pointNumbers(type: MetricType, p: OtlpObject, row: Partial<PointRow>): void {
  // What every distribution has: a count, and a sum, min and max when they were recorded.
  const summary = (fields: readonly ('sum' | 'min' | 'max')[]) => {
    row.count = countField(p.count, 'count');
    for (const name of fields) {
      const v = numberField(p[name], name);
      if (v !== undefined) row[name] = v;
    }
  };
  switch (type) {
    case 'sum':
    case 'gauge': {
      // Neither (OTLP's value oneof unset, as for a point flagged NO_RECORDED_VALUE): no value,
      // as Parquet's null Value; never a made-up 0.
      const value = asIntField(p.asInt) ?? numberField(p.asDouble, 'asDouble');
      if (value !== undefined) row.value = value;
      break;
    }
    case 'histogram':
      summary(['sum', 'min', 'max']);
      row.buckets = {
        explicitBounds: numberList(p.explicitBounds, 'an explicit bound'),
        bucketCounts: countList(p.bucketCounts, 'a bucket count'),
      };
      break;
    case 'exponentialHistogram': {
      const buckets = (side: 'positive' | 'negative') => {
        const b = obj(p[side]);
        return {
          offset: int32Field(b.offset, `the ${side} buckets' offset`),
          bucketCounts: countList(b.bucketCounts, `a ${side} bucket count`),
        };
      };
      summary(['sum', 'min', 'max']);
      row.buckets = {
        scale: int32Field(p.scale, 'scale'),
        zeroCount: countField(p.zeroCount, 'zeroCount'),
        positive: buckets('positive'),
        negative: buckets('negative'),
      };
      break;
    }
    case 'summary':
      summary(['sum']);
      break;
  }
}

/** Whether pointNumbers() reads a point without throwing, building nothing. */
function pointNumbersOk(type: MetricType, p: OtlpObject): boolean {
  switch (type) {
    case 'sum':
    case 'gauge':
      // asDouble is read only when asInt is unset.
      return p.asInt === undefined || p.asInt === null
        ? numberOk(p.asDouble)
        : int64Number(p.asInt) !== undefined;
    case 'histogram':
      return (
        uint64Ok(p.count) &&
        numberOk(p.sum) &&
        numberOk(p.min) &&
        numberOk(p.max) &&
        numbersOk(p.explicitBounds) &&
        countsOk(p.bucketCounts)
      );
    case 'exponentialHistogram': {
      const positive = obj(p.positive);
      const negative = obj(p.negative);
      return (
        uint64Ok(p.count) &&
        numberOk(p.sum) &&
        numberOk(p.min) &&
        numberOk(p.max) &&
        int32Ok(p.scale) &&
        uint64Ok(p.zeroCount) &&
        int32Ok(positive.offset) &&
        countsOk(positive.bucketCounts) &&
        int32Ok(negative.offset) &&
        countsOk(negative.bucketCounts)
      );
    }
    case 'summary':
      return uint64Ok(p.count) && numberOk(p.sum);
  }
}

/** Whether checkExemplars() passes a point's exemplars, building nothing. */
function exemplarsOk(v: OtlpValue | undefined): boolean {
  // Most points have none: no list is made for them.
  if (!Array.isArray(v)) return true;
  for (let i = 0; i < v.length; i++) {
    if (!attributesOk(obj(v[i]).filteredAttributes)) return false;
  }
  return true;
}

/**
 * Checks the filteredAttributes of a point's exemplars, which no row holds: throws
 * FieldValueError for a value of another kind, as for the point's own attributes.
 */
function checkExemplars(v: OtlpValue | undefined): void {
  for (const e of list(v)) checkAttributes(obj(e).filteredAttributes, 'exemplar attribute');
}

/** A FieldValueError of a point, its message naming the point's metric; any other error as it is. */
const inMetric = (name: string, error: unknown): unknown =>
  inItem(`metric ${JSON.stringify(name)}`, error);

/**
 * Checks the number fields of every data point of a decoded OTLP/JSON request, and the values
 * of its resource, scope, point and exemplar attributes (the protobuf decoder and Parquet
 * give values of their kinds only): throws FieldValueError, naming the metric and the field or
 * attribute, for one that holds no number or a value of another kind (as pointNumbers reads
 * them: a count of 1.5 is none), which a row would otherwise show as 0 (an exemplar's, which no
 * row shows, would pass unchecked).
 */
export function checkPointNumbers(request: OtlpObject): void {
  let name = '';
  let otlpType: MetricType;
  walkRequest(request, {
    resource(rm) {
      checkAttributes(obj(rm.resource as OtlpValue).attributes, 'resource attribute');
    },
    scope(sm) {
      checkAttributes(obj(sm.scope as OtlpValue).attributes, 'scope attribute');
    },
    metric(metric, code) {
      name = str(metric.name as OtlpValue);
      otlpType = METRIC_FIELDS[code] as MetricType;
    },
    point(value) {
      const p = value as OtlpObject;
      // The good path throws and builds nothing; a bad point is walked again to name its field.
      if (pointNumbersOk(otlpType, p) && attributesOk(p.attributes) && exemplarsOk(p.exemplars)) {
        return;
      }
      try {
        pointNumbers(otlpType, p, {});
        checkAttributes(p.attributes);
        checkExemplars(p.exemplars);
      } catch (error) {
        throw inMetric(name, error);
      }
    },
  });
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
