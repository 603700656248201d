import type { Attributes } from '@opentelemetry/api';
import type * as sdk from '@opentelemetry/sdk-metrics';
import { protoAttributes, protoKeyValue } from '../../encoding/any-value-proto.js';
import { SpellingCache, trimOrder } from '../../encoding/attribute-cache.js';
import {
  checkCount,
  checkCounts,
  checkDropped,
  checkInt32,
  FIELD,
  isInt64,
} from '../../encoding/otlp-schema.js';
import { ProtoWriter, SMALL_WRITER_CAPACITY } from '../../encoding/proto-writer.js';
import { type ExportTally, noteTime } from '../../encoding/records.js';
import type { MetricDataSpec, ValueKind } from './metric-data.js';
import { METRIC_DATA, VALUE, valueKind } from './metric-data.js';
import { otlpTemporality } from './temporality.js';

const F = FIELD;
const writer = new ProtoWriter();

/**
 * Encodes one ResourceMetrics as a complete ExportMetricsServiceRequest. Requests concatenate
 * into one valid request (resourceMetrics is a repeated field), so a batch is a list of these.
 */
export function resourceMetricsToProto(rm: sdk.ResourceMetrics, counted?: ExportTally): Buffer {
  tally = counted;
  const w = writer;
  w.reset(); // what an export that threw half-way left behind
  w.fork(F.ExportMetricsServiceRequest.resourceMetrics);
  w.fork(F.ResourceMetrics.resource);
  protoAttributes(w, F.Resource.attributes, rm.resource.attributes);
  w.join();
  for (const sm of rm.scopeMetrics) {
    w.fork(F.ResourceMetrics.scopeMetrics);
    w.fork(F.ScopeMetrics.scope);
    w.string(F.InstrumentationScope.name, sm.scope.name);
    w.string(F.InstrumentationScope.version, sm.scope.version ?? '');
    const scopeAttributes = (sm.scope as { attributes?: Attributes }).attributes;
    if (scopeAttributes) protoAttributes(w, F.InstrumentationScope.attributes, scopeAttributes);
    // As OTLP/JSON writes it (jsonScope()).
    const dropped = (sm.scope as { droppedAttributesCount?: number }).droppedAttributesCount;
    checkDropped('a dropped attributes count', dropped);
    if (dropped) w.uint(F.InstrumentationScope.droppedAttributesCount, dropped);
    w.join();
    for (const metric of sm.metrics) writeMetric(w, metric);
    w.string(F.ScopeMetrics.schemaUrl, sm.scope.schemaUrl ?? '');
    w.join();
  }
  w.string(F.ResourceMetrics.schemaUrl, rm.resource.schemaUrl ?? '');
  w.join();
  return w.finish();
}

/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;

function writeMetric(w: ProtoWriter, metric: sdk.MetricData): void {
  if (tally !== undefined) tally.items += metric.dataPoints.length;
  const d = metric.descriptor;
  w.fork(F.ScopeMetrics.metrics);
  w.string(F.Metric.name, d.name);
  w.string(F.Metric.description, d.description);
  w.string(F.Metric.unit, d.unit);
  const data = METRIC_DATA[metric.dataPointType];
  if (data !== undefined) {
    w.fork(F.Metric[data.field]);
    eachPoint(w, data.dataPoints, POINTS[data.point], metric, valueKind(data.point, d.valueType));
    if (data.temporality !== undefined) {
      w.uint(data.temporality, otlpTemporality(metric.aggregationTemporality));
    }
    if (data.monotonic !== undefined)
      w.bool(data.monotonic, (metric as sdk.SumMetricData).isMonotonic);
    w.join();
  }
  w.join();
}

/** A point message's fields, and the spellings of its attributes (one cache each: each has its own field number). */
interface PointMessage {
  readonly fields: { readonly startTimeUnixNano: number; readonly timeUnixNano: number };
  readonly attributes: SpellingCache;
}

const attributesWriter = new ProtoWriter(SMALL_WRITER_CAPACITY);

function pointMessage(fields: PointMessage['fields'] & { attributes: number }): PointMessage {
  const attributes = new SpellingCache((attrs, keys) => {
    const aw = attributesWriter;
    aw.reset();
    for (const key of keys) protoKeyValue(aw, fields.attributes, key, attrs[key]);
    return aw.snapshot();
  });
  return { fields, attributes };
}

/** Per point message: its fields and the spellings of its attributes. */
const POINTS: Readonly<Record<MetricDataSpec['point'], PointMessage>> = {
  NumberDataPoint: pointMessage(F.NumberDataPoint),
  HistogramDataPoint: pointMessage(F.HistogramDataPoint),
  ExponentialHistogramDataPoint: pointMessage(F.ExponentialHistogramDataPoint),
};

/**
 * Writes each point of `metric`, a message in field `field`: its attributes (spelled once per
 * series, found by the point's place in the metric's order of series: see SeriesOrder), its start
 * and end time, and then `value` writes the rest.
 */
function eachPoint(
  w: ProtoWriter,
  field: number,
  message: PointMessage,
  metric: { descriptor: object; dataPoints: sdk.DataPoint<unknown>[] },
  value: ValueKind,
): void {
  const { fields, attributes } = message;
  const points = metric.dataPoints;
  const order = attributes.orderOf(metric.descriptor);
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as sdk.DataPoint<unknown>;
    w.fork(field);
    w.raw(attributes.ofPoint(order, i, p.attributes));
    w.nanos(fields.startTimeUnixNano, p.startTime);
    w.nanos(fields.timeUnixNano, p.endTime);
    if (tally?.times) noteTime(tally, p.endTime);
    if (value === VALUE.histogram) histogramValue(w, p);
    else if (value === VALUE.exponentialHistogram) expHistogramValue(w, p);
    else numberValue(w, p, value === VALUE.int);
    w.join();
  }
  trimOrder(order, points.length);
}

/** An INT point beyond int64 (or not finite) goes as the double it is, not wrapped around. */
function numberValue(w: ProtoWriter, p: sdk.DataPoint<unknown>, int: boolean): void {
  const v = p.value as number;
  if (int && isInt64(v)) w.fixed64(F.NumberDataPoint.asInt, v);
  else w.double(F.NumberDataPoint.asDouble, v);
}

function histogramValue(w: ProtoWriter, p: sdk.DataPoint<unknown>): void {
  const H = F.HistogramDataPoint;
  const h = p.value as sdk.Histogram;
  countAndSum(w, H, h);
  checkCounts('a bucket count', h.buckets.counts);
  w.packedFixed64(H.bucketCounts, h.buckets.counts);
  w.packedDouble(H.explicitBounds, h.buckets.boundaries);
  minAndMax(w, H, h);
}

function expHistogramValue(w: ProtoWriter, p: sdk.DataPoint<unknown>): void {
  const E = F.ExponentialHistogramDataPoint;
  const h = p.value as sdk.ExponentialHistogram;
  countAndSum(w, E, h);
  checkInt32('a scale', h.scale);
  w.sint32(E.scale, h.scale);
  checkCount('a zero count', h.zeroCount);
  w.fixed64(E.zeroCount, h.zeroCount);
  buckets(w, E.positive, h.positive);
  buckets(w, E.negative, h.negative);
  minAndMax(w, E, h);
}

type HistogramFields = { count: number; sum: number; min: number; max: number };

function countAndSum(w: ProtoWriter, M: HistogramFields, h: { count: number; sum?: number }): void {
  checkCount('a histogram count', h.count);
  w.fixed64(M.count, h.count);
  if (h.sum !== undefined) w.double(M.sum, h.sum);
}

function minAndMax(w: ProtoWriter, M: HistogramFields, h: { min?: number; max?: number }): void {
  if (h.min !== undefined) w.double(M.min, h.min);
  if (h.max !== undefined) w.double(M.max, h.max);
}

function buckets(
  w: ProtoWriter,
  field: number,
  b: { offset: number; bucketCounts: number[] },
): void {
  w.fork(field);
  checkInt32('a bucket offset', b.offset);
  w.sint32(F.Buckets.offset, b.offset);
  checkCounts('a bucket count', b.bucketCounts);
  w.packedVarint(F.Buckets.bucketCounts, b.bucketCounts);
  w.join();
}
