import type { HrTime } from '@opentelemetry/api';
import type {
  DataPoint,
  ExponentialHistogram,
  Histogram,
  MetricData,
  ResourceMetrics,
  SumMetricData as Sum,
} from '@opentelemetry/sdk-metrics';
import { jsonKeyValues } from '../../encoding/any-value-json.js';
import { type SeriesOrder, SpellingCache, trimOrder } from '../../encoding/attribute-cache.js';
import { hrTimeToNanosString } from '../../encoding/hrtime.js';
import {
  JsonWriter,
  SMALL_WRITER_CAPACITY,
  type Spelling,
  spelling,
} from '../../encoding/json-writer.js';
import { checkCount, checkCounts, checkInt32, isInt64 } from '../../encoding/otlp-schema.js';
import { type ExportTally, noteTime } from '../../encoding/records.js';
import { jsonScope } from '../grouped-json.js';
import {
  METRIC_DATA,
  type MetricDataSpec,
  VALUE,
  type ValueKind,
  valueKind,
} from './metric-data.js';
import { otlpTemporality } from './temporality.js';

const OPEN_RESOURCE_ATTRIBUTES = spelling('{"resource":{"attributes":');
const SCOPE_METRICS = spelling('},"scopeMetrics":[');
const OPEN_SCOPE = spelling('{"scope":');
const METRICS = spelling(',"metrics":[');
const SCHEMA_URL = spelling(',"schemaUrl":');
const OPEN_NAME = spelling('{"name":');
const DESCRIPTION = spelling(',"description":');
const UNIT = spelling(',"unit":');
const SUM = spelling(',"sum":');
const MIN = spelling(',"min":');
const MAX = spelling(',"max":');
const POSITIVE = spelling(',"positive":{"offset":');
const NEGATIVE = spelling(',"negative":{"offset":');
const AS_INT = spelling(',"asInt":');
const AS_DOUBLE = spelling(',"asDouble":');
const BUCKET_COUNTS = spelling(',"bucketCounts":[');
const EXPLICIT_BOUNDS = spelling('],"explicitBounds":');
const SCALE = spelling(',"scale":');
const ZERO_COUNT = spelling(',"zeroCount":');
const COUNT = spelling(',"count":');
const CLOSE_BUCKETS = spelling(']}');

/**
 * OTLP/JSON writer: writes the JSON of one ResourceMetrics straight as UTF-8 bytes, without the
 * intermediate object tree of the official serializer. Field names and value spellings follow
 * the protobuf JSON mapping (timestamps and integers beyond 2^53 as exact decimal strings,
 * non-finite doubles as "NaN" / "Infinity", -0 as -0), so the output decodes to the same message
 * as our protobuf and the official ProtobufMetricsSerializer's. The official
 * JsonMetricsSerializer's differs where JSON.stringify loses data (NaN and the infinities as
 * null, -0 as 0, integers beyond 2^53 rounded, lone surrogates kept).
 */
export function resourceMetricsToJsonBytes(rm: ResourceMetrics, counted?: ExportTally): Buffer {
  tally = counted;
  const w = writer;
  w.reset(); // what an export that threw half-way left behind
  const resource = rm.resource;
  w.spell(OPEN_RESOURCE_ATTRIBUTES);
  w.bytes(lists.of(resource.attributes));
  w.spell(SCOPE_METRICS);
  rm.scopeMetrics.forEach((sm, i) => {
    if (i > 0) w.char(COMMA);
    w.spell(OPEN_SCOPE);
    jsonScope(w, sm.scope);
    w.spell(METRICS);
    sm.metrics.forEach((metric, j) => {
      if (j > 0) w.char(COMMA);
      writeMetric(w, metric);
    });
    w.char(0x5d);
    w.stringUnlessEmpty(SCHEMA_URL, sm.scope.schemaUrl);
    w.char(0x7d);
  });
  w.char(0x5d);
  w.stringUnlessEmpty(SCHEMA_URL, resource.schemaUrl);
  w.char(0x7d);
  return w.finish();
}

/** The same JSON as a string (for tests and tools). */
export function resourceMetricsToJson(rm: ResourceMetrics): string {
  return resourceMetricsToJsonBytes(rm).toString('utf8');
}

const writer = new JsonWriter();
const COMMA = 0x2c;

/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;

function writeMetric(w: JsonWriter, metric: MetricData): void {
  if (tally !== undefined) tally.items += metric.dataPoints.length;
  const d = metric.descriptor;
  w.spell(OPEN_NAME);
  w.string(d.name);
  w.stringUnlessEmpty(DESCRIPTION, d.description);
  w.stringUnlessEmpty(UNIT, d.unit);
  const data = METRIC_DATA[metric.dataPointType];
  if (data !== undefined) {
    w.raw(DATA_HEAD[data.field]);
    eachPoint(w, metric, valueKind(data.point, d.valueType));
    w.char(0x5d);
    if (data.temporality !== undefined) {
      w.raw(`,"aggregationTemporality":${otlpTemporality(metric.aggregationTemporality)}`);
    }
    if (data.monotonic !== undefined) w.raw(`,"isMonotonic":${(metric as Sum).isMonotonic}`);
    w.char(0x7d);
  }
  w.char(0x7d);
}

/** `,"sum":{"dataPoints":[` and the like. */
const DATA_HEAD = Object.fromEntries(
  Object.values(METRIC_DATA).map(({ field }) => [field, `,"${field}":{"dataPoints":[`]),
) as Readonly<Record<MetricDataSpec['field'], string>>;

/**
 * Points of one collection share their end time, and often their start time: the spelling of
 * the pair is remembered, `"start","timeUnixNano":"end"`.
 */
let pairStart: HrTime | undefined;
let pairEnd: HrTime | undefined;
let pairJson: Buffer = Buffer.alloc(0);

function sameTime(a: HrTime | undefined, b: HrTime): boolean {
  return a !== undefined && a[0] === b[0] && a[1] === b[1];
}

/**
 * Writes each point of `metric`, comma-separated: its attributes (spelled once per series, found
 * by the point's place in the metric's order of series: see SeriesOrder), its start and end
 * time, and then `value` writes the rest.
 */
function eachPoint(
  w: JsonWriter,
  metric: { descriptor: object; dataPoints: DataPoint<unknown>[] },
  value: ValueKind,
): void {
  const points = metric.dataPoints;
  const order = pointHeads.orderOf(metric.descriptor);
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as DataPoint<unknown>;
    if (i > 0) w.char(COMMA);
    pointHead(w, p, order, i);
    if (value === VALUE.histogram) histogramValue(w, p);
    else if (value === VALUE.exponentialHistogram) expHistogramValue(w, p);
    else numberValue(w, p, value === VALUE.int);
    w.char(0x7d);
  }
  trimOrder(order, points.length);
}

/** `{"attributes":[...],"startTimeUnixNano":"start","timeUnixNano":"end"` */
function pointHead(
  w: JsonWriter,
  p: DataPoint<unknown>,
  order: SeriesOrder<Buffer>,
  index: number,
): void {
  w.bytes(pointHeads.ofPoint(order, index, p.attributes));
  const start = p.startTime;
  const end = p.endTime;
  if (tally?.times) noteTime(tally, end);
  if (!sameTime(pairStart, start) || !sameTime(pairEnd, end)) {
    pairJson = Buffer.from(
      `"${hrTimeToNanosString(start)}","timeUnixNano":"${hrTimeToNanosString(end)}"`,
      'latin1',
    );
    pairStart = start;
    pairEnd = end;
  }
  w.bytes(pairJson);
}

/** An INT point beyond int64 (or not finite) goes as the double it is, not wrapped around. */
function numberValue(w: JsonWriter, p: DataPoint<unknown>, int: boolean): void {
  const v = p.value as number;
  if (int && isInt64(v)) {
    w.spell(AS_INT);
    w.int(v);
  } else {
    w.spell(AS_DOUBLE);
    w.double(v);
  }
}

function histogramValue(w: JsonWriter, p: DataPoint<unknown>): void {
  const h = p.value as Histogram;
  countAndSum(w, h);
  w.spell(BUCKET_COUNTS);
  checkCounts('a bucket count', h.buckets.counts);
  w.uints(h.buckets.counts);
  w.spell(EXPLICIT_BOUNDS);
  bounds(w, h.buckets.boundaries);
  minAndMax(w, h);
}

function expHistogramValue(w: JsonWriter, p: DataPoint<unknown>): void {
  const h = p.value as ExponentialHistogram;
  countAndSum(w, h);
  w.spell(SCALE);
  checkInt32('a scale', h.scale);
  w.int(h.scale);
  checkCount('a zero count', h.zeroCount);
  w.spell(ZERO_COUNT);
  w.int(h.zeroCount);
  buckets(w, POSITIVE, h.positive);
  buckets(w, NEGATIVE, h.negative);
  minAndMax(w, h);
}

function countAndSum(w: JsonWriter, h: { count: number; sum?: number }): void {
  checkCount('a histogram count', h.count);
  w.spell(COUNT);
  w.int(h.count);
  optionalDouble(w, SUM, h.sum);
}

function minAndMax(w: JsonWriter, h: { min?: number; max?: number }): void {
  optionalDouble(w, MIN, h.min);
  optionalDouble(w, MAX, h.max);
}

function optionalDouble(w: JsonWriter, field: Spelling, v: number | undefined): void {
  if (v === undefined) return;
  w.spell(field);
  w.double(v);
}

function buckets(
  w: JsonWriter,
  field: Spelling,
  b: { offset: number; bucketCounts: number[] },
): void {
  w.spell(field);
  checkInt32('a bucket offset', b.offset);
  w.int(b.offset);
  w.spell(BUCKET_COUNTS);
  checkCounts('a bucket count', b.bucketCounts);
  w.uints(b.bucketCounts);
  w.spell(CLOSE_BUCKETS);
}

/**
 * Every point of a histogram shares one boundaries array: its spelling is cached per array,
 * and used only while the array still holds the same numbers.
 */
const boundsCache = new WeakMap<readonly number[], { values: number[]; json: Buffer }>();
const boundsWriter = new JsonWriter(SMALL_WRITER_CAPACITY);

function bounds(w: JsonWriter, values: readonly number[]): void {
  const cached = boundsCache.get(values);
  if (cached !== undefined && sameNumbers(cached.values, values)) {
    w.bytes(cached.json);
    return;
  }
  const bw = boundsWriter;
  bw.reset();
  bw.char(0x5b);
  for (let i = 0; i < values.length; i++) {
    if (i > 0) bw.char(COMMA);
    bw.double(values[i] as number);
  }
  bw.char(0x5d);
  const json = bw.snapshot();
  boundsCache.set(values, { values: [...values], json });
  w.bytes(json);
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/** The spellings of attribute lists: a resource's and a scope's `[...]`, a point's head. */
const attributesWriter = new JsonWriter(SMALL_WRITER_CAPACITY);

function spell(head: string, tail: string): SpellingCache {
  return new SpellingCache((attrs, keys) => {
    const aw = attributesWriter;
    aw.reset();
    aw.raw(head);
    jsonKeyValues(aw, attrs, keys);
    aw.raw(tail);
    return aw.snapshot();
  });
}

const lists = spell('[', ']');
const pointHeads = spell('{"attributes":[', '],"startTimeUnixNano":');
