import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import {
  type DataPoint,
  DataPointType,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { protoAttributes, protoKeyValue } from '../../encoding/any-value-proto.js';
import { AttributeCache, type SeriesOrder, trimOrder } from '../../encoding/attribute-cache.js';
import { hrTimeToNanosParts } from '../../encoding/hrtime.js';
import { FIELD, isInt64 } from '../../encoding/otlp-schema.js';
import { ProtoWriter } from '../../encoding/proto-writer.js';
import { type ExportTally, noteTime } from '../../encoding/records.js';
import { otlpTemporality } from './temporality.js';

const F = FIELD;
const writer = new ProtoWriter();

/**
 * Encodes one ResourceMetrics as a complete ExportMetricsServiceRequest. Requests concatenate
 * into one valid request (resourceMetrics is a repeated field), so a batch is a list of these.
 */
export function resourceMetricsToProto(rm: ResourceMetrics, counted?: ExportTally): Buffer {
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

function writeMetric(w: ProtoWriter, metric: MetricData): void {
  if (tally !== undefined) tally.items += metric.dataPoints.length;
  const d = metric.descriptor;
  w.fork(F.ScopeMetrics.metrics);
  w.string(F.Metric.name, d.name);
  w.string(F.Metric.description, d.description);
  w.string(F.Metric.unit, d.unit);
  const temporality = otlpTemporality(metric.aggregationTemporality);
  switch (metric.dataPointType) {
    case DataPointType.SUM:
      w.fork(F.Metric.sum);
      eachPoint(metric.dataPoints, numberPointAttributes, d, (p, order, i) =>
        numberPoint(w, F.Sum.dataPoints, p, d.valueType, order, i),
      );
      w.uint(F.Sum.aggregationTemporality, temporality);
      w.bool(F.Sum.isMonotonic, metric.isMonotonic);
      w.join();
      break;
    case DataPointType.GAUGE:
      w.fork(F.Metric.gauge);
      eachPoint(metric.dataPoints, numberPointAttributes, d, (p, order, i) =>
        numberPoint(w, F.Gauge.dataPoints, p, d.valueType, order, i),
      );
      w.join();
      break;
    case DataPointType.HISTOGRAM:
      w.fork(F.Metric.histogram);
      eachPoint(metric.dataPoints, histogramPointAttributes, d, (p, order, i) =>
        histogramPoint(w, p, order, i),
      );
      w.uint(F.Histogram.aggregationTemporality, temporality);
      w.join();
      break;
    case DataPointType.EXPONENTIAL_HISTOGRAM:
      w.fork(F.Metric.exponentialHistogram);
      eachPoint(metric.dataPoints, expHistogramPointAttributes, d, (p, order, i) =>
        expHistogramPoint(w, p, order, i),
      );
      w.uint(F.ExponentialHistogram.aggregationTemporality, temporality);
      w.join();
      break;
  }
  w.join();
}

function time(w: ProtoWriter, field: number, t: HrTime): void {
  const { lo, hi } = hrTimeToNanosParts(t);
  w.fixed64Parts(field, lo, hi);
}

/** Writes each of a metric's points with its place in the metric's order of series (see SeriesOrder). */
function eachPoint<P>(
  points: P[],
  cache: AttributeCache,
  d: MetricData['descriptor'],
  write: (p: P, order: SeriesOrder<Buffer>, index: number) => void,
): void {
  const order = cache.orderOf(d);
  for (let i = 0; i < points.length; i++) write(points[i] as P, order, i);
  trimOrder(order, points.length);
}

function numberPoint(
  w: ProtoWriter,
  field: number,
  p: DataPoint<number>,
  valueType: ValueType,
  order: SeriesOrder<Buffer>,
  index: number,
): void {
  const N = F.NumberDataPoint;
  w.fork(field);
  pointAttributes(w, N.attributes, numberPointAttributes, p.attributes, order, index);
  time(w, N.startTimeUnixNano, p.startTime);
  time(w, N.timeUnixNano, p.endTime);
  if (tally?.times) noteTime(tally, p.endTime);
  // An INT point beyond int64 (or not finite) goes as the double it is, not wrapped around.
  if (valueType === ValueType.INT && isInt64(p.value)) w.fixed64(N.asInt, p.value);
  else w.double(N.asDouble, p.value);
  w.join();
}

function histogramPoint(
  w: ProtoWriter,
  p: DataPoint<Histogram>,
  order: SeriesOrder<Buffer>,
  index: number,
): void {
  const H = F.HistogramDataPoint;
  const h = p.value;
  w.fork(F.Histogram.dataPoints);
  pointAttributes(w, H.attributes, histogramPointAttributes, p.attributes, order, index);
  time(w, H.startTimeUnixNano, p.startTime);
  time(w, H.timeUnixNano, p.endTime);
  if (tally?.times) noteTime(tally, p.endTime);
  w.fixed64(H.count, h.count);
  if (h.sum !== undefined) w.double(H.sum, h.sum);
  w.packedFixed64(H.bucketCounts, h.buckets.counts);
  w.packedDouble(H.explicitBounds, h.buckets.boundaries);
  if (h.min !== undefined) w.double(H.min, h.min);
  if (h.max !== undefined) w.double(H.max, h.max);
  w.join();
}

function expHistogramPoint(
  w: ProtoWriter,
  p: DataPoint<ExponentialHistogram>,
  order: SeriesOrder<Buffer>,
  index: number,
): void {
  const E = F.ExponentialHistogramDataPoint;
  const h = p.value;
  w.fork(F.ExponentialHistogram.dataPoints);
  pointAttributes(w, E.attributes, expHistogramPointAttributes, p.attributes, order, index);
  time(w, E.startTimeUnixNano, p.startTime);
  time(w, E.timeUnixNano, p.endTime);
  if (tally?.times) noteTime(tally, p.endTime);
  w.fixed64(E.count, h.count);
  if (h.sum !== undefined) w.double(E.sum, h.sum);
  w.sint32(E.scale, h.scale);
  w.fixed64(E.zeroCount, h.zeroCount);
  w.fork(E.positive);
  w.sint32(F.Buckets.offset, h.positive.offset);
  w.packedVarint(F.Buckets.bucketCounts, h.positive.bucketCounts);
  w.join();
  w.fork(E.negative);
  w.sint32(F.Buckets.offset, h.negative.offset);
  w.packedVarint(F.Buckets.bucketCounts, h.negative.bucketCounts);
  w.join();
  if (h.min !== undefined) w.double(E.min, h.min);
  if (h.max !== undefined) w.double(E.max, h.max);
  w.join();
}

/** Data points' attributes, cached per series; one cache per point type (each has its own field number). */
const numberPointAttributes = new AttributeCache();
const histogramPointAttributes = new AttributeCache();
const expHistogramPointAttributes = new AttributeCache();
const attributesWriter = new ProtoWriter();

function pointAttributes(
  w: ProtoWriter,
  field: number,
  cache: AttributeCache,
  attrs: Attributes,
  order: SeriesOrder<Buffer>,
  index: number,
): void {
  const cached = cache.at(order, index, attrs);
  if (cached !== undefined) {
    w.raw(cached);
    return;
  }
  const keys = Object.keys(attrs);
  const aw = attributesWriter;
  aw.reset();
  for (const key of keys) protoKeyValue(aw, field, key, attrs[key]);
  const bytes = aw.snapshot();
  cache.set(attrs, keys, bytes, order, index);
  w.raw(bytes);
}
