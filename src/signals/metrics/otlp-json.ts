import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import {
  type DataPoint,
  DataPointType,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { jsonKeyValues } from '../../encoding/any-value-json.js';
import { AttributeCache, type SeriesOrder, trimOrder } from '../../encoding/attribute-cache.js';
import { hrTimeToNanosString } from '../../encoding/hrtime.js';
import { JsonWriter } from '../../encoding/json-writer.js';
import { isInt64 } from '../../encoding/otlp-schema.js';
import { type ExportTally, noteTime } from '../../encoding/records.js';
import { otlpTemporality } from './temporality.js';

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
  w.raw('{"resource":{"attributes":');
  attributes(w, resource.attributes);
  w.raw('},"scopeMetrics":[');
  rm.scopeMetrics.forEach((sm, i) => {
    if (i > 0) w.char(COMMA);
    w.raw('{"scope":');
    scope(w, sm.scope);
    w.raw(',"metrics":[');
    sm.metrics.forEach((metric, j) => {
      if (j > 0) w.char(COMMA);
      writeMetric(w, metric);
    });
    w.raw(']');
    if (sm.scope.schemaUrl) {
      w.raw(',"schemaUrl":');
      w.string(sm.scope.schemaUrl);
    }
    w.raw('}');
  });
  w.raw(']');
  if (resource.schemaUrl) {
    w.raw(',"schemaUrl":');
    w.string(resource.schemaUrl);
  }
  w.raw('}');
  return w.finish();
}

/** The same JSON as a string (for tests and tools). */
export function resourceMetricsToJson(rm: ResourceMetrics): string {
  return resourceMetricsToJsonBytes(rm).toString('utf8');
}

const writer = new JsonWriter();
const COMMA = 0x2c;

function scope(w: JsonWriter, s: InstrumentationScope & { attributes?: Attributes }): void {
  w.raw('{"name":');
  w.string(s.name);
  if (s.version) {
    w.raw(',"version":');
    w.string(s.version);
  }
  if (s.attributes && Object.keys(s.attributes).length > 0) {
    w.raw(',"attributes":');
    attributes(w, s.attributes);
  }
  w.raw('}');
}

/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;

function writeMetric(w: JsonWriter, metric: MetricData): void {
  if (tally !== undefined) tally.items += metric.dataPoints.length;
  const d = metric.descriptor;
  w.raw('{"name":');
  w.string(d.name);
  if (d.description) {
    w.raw(',"description":');
    w.string(d.description);
  }
  if (d.unit) {
    w.raw(',"unit":');
    w.string(d.unit);
  }
  const temporality = otlpTemporality(metric.aggregationTemporality);
  const order = pointAttributesCache.orderOf(d);
  switch (metric.dataPointType) {
    case DataPointType.SUM:
      w.raw(',"sum":{"dataPoints":[');
      numberPoints(w, metric.dataPoints, d.valueType, order);
      w.raw(`],"aggregationTemporality":${temporality},"isMonotonic":${metric.isMonotonic}}`);
      break;
    case DataPointType.GAUGE:
      w.raw(',"gauge":{"dataPoints":[');
      numberPoints(w, metric.dataPoints, d.valueType, order);
      w.raw(']}');
      break;
    case DataPointType.HISTOGRAM:
      w.raw(',"histogram":{"dataPoints":[');
      histogramPoints(w, metric.dataPoints, order);
      w.raw(`],"aggregationTemporality":${temporality}}`);
      break;
    case DataPointType.EXPONENTIAL_HISTOGRAM:
      w.raw(',"exponentialHistogram":{"dataPoints":[');
      expHistogramPoints(w, metric.dataPoints, order);
      w.raw(`],"aggregationTemporality":${temporality}}`);
      break;
  }
  trimOrder(order, metric.dataPoints.length);
  w.raw('}');
}

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

function pointHeader(
  w: JsonWriter,
  p: DataPoint<unknown>,
  order: SeriesOrder<Buffer>,
  index: number,
): void {
  attributes(w, p.attributes, order, index);
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

function count(w: JsonWriter, field: string, value: number): void {
  w.raw(field);
  w.int(value);
}

function numberPoints(
  w: JsonWriter,
  points: DataPoint<number>[],
  valueType: ValueType,
  order: SeriesOrder<Buffer>,
): void {
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as DataPoint<number>;
    if (i > 0) w.char(COMMA);
    pointHeader(w, p, order, i);
    const v = p.value;
    // An INT point beyond int64 (or not finite) goes as the double it is, not wrapped around.
    if (valueType === ValueType.INT && isInt64(v)) {
      w.raw(',"asInt":');
      w.int(v);
      w.char(0x7d);
    } else {
      w.raw(',"asDouble":');
      w.double(v);
      w.raw('}');
    }
  }
}

function optionalDouble(w: JsonWriter, field: string, v: number | undefined): void {
  if (v === undefined) return;
  w.raw(field);
  w.double(v);
}

function histogramPoints(
  w: JsonWriter,
  points: DataPoint<Histogram>[],
  order: SeriesOrder<Buffer>,
): void {
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as DataPoint<Histogram>;
    const h = p.value;
    if (i > 0) w.char(COMMA);
    pointHeader(w, p, order, i);
    count(w, ',"count":', h.count);
    optionalDouble(w, ',"sum":', h.sum);
    w.raw(',"bucketCounts":[');
    w.uints(h.buckets.counts);
    w.raw('],"explicitBounds":');
    bounds(w, h.buckets.boundaries);
    optionalDouble(w, ',"min":', h.min);
    optionalDouble(w, ',"max":', h.max);
    w.raw('}');
  }
}

function expHistogramPoints(
  w: JsonWriter,
  points: DataPoint<ExponentialHistogram>[],
  order: SeriesOrder<Buffer>,
): void {
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as DataPoint<ExponentialHistogram>;
    const h = p.value;
    if (i > 0) w.char(COMMA);
    pointHeader(w, p, order, i);
    count(w, ',"count":', h.count);
    optionalDouble(w, ',"sum":', h.sum);
    w.raw(',"scale":');
    w.int(h.scale);
    count(w, ',"zeroCount":', h.zeroCount);
    buckets(w, ',"positive":{"offset":', h.positive);
    buckets(w, ',"negative":{"offset":', h.negative);
    optionalDouble(w, ',"min":', h.min);
    optionalDouble(w, ',"max":', h.max);
    w.raw('}');
  }
}

function buckets(
  w: JsonWriter,
  field: string,
  b: { offset: number; bucketCounts: number[] },
): void {
  w.raw(field);
  w.int(b.offset);
  w.raw(',"bucketCounts":[');
  w.uints(b.bucketCounts);
  w.raw(']}');
}

/**
 * Every point of a histogram shares one boundaries array: its spelling is cached per array,
 * and used only while the array still holds the same numbers.
 */
const boundsCache = new WeakMap<readonly number[], { values: number[]; json: Buffer }>();
const boundsWriter = new JsonWriter();

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

const attributesCache = new AttributeCache();
const pointAttributesCache = new AttributeCache();
const attributesWriter = new JsonWriter();

/**
 * The key-value list of `attrs`; for a data point (`order`: its metric's, `index`: its place
 * there), with the fields around it: `{"attributes":[...],"startTimeUnixNano":`.
 */
function attributes(
  w: JsonWriter,
  attrs: Attributes,
  order?: SeriesOrder<Buffer>,
  index = 0,
): void {
  const point = order !== undefined;
  const cache = point ? pointAttributesCache : attributesCache;
  const cached = point ? cache.at(order, index, attrs) : cache.get(attrs);
  if (cached !== undefined) {
    w.bytes(cached);
    return;
  }
  // Own enumerable keys, as the official serializer takes them; an undefined value is written
  // as an empty AnyValue, as it does.
  const keys = Object.keys(attrs);
  const aw = attributesWriter;
  aw.reset();
  aw.raw(point ? '{"attributes":[' : '[');
  jsonKeyValues(aw, attrs, keys);
  aw.raw(point ? '],"startTimeUnixNano":' : ']');
  const json = aw.snapshot();
  cache.set(attrs, keys, json, order, index);
  w.bytes(json);
}
