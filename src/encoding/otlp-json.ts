import { type Attributes, type AttributeValue, type HrTime, ValueType } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { hrTimeToNanosString } from './hrtime.js';
import { OTLP_TEMPORALITY } from './otlp-schema.js';

/**
 * OTLP/JSON writer: builds the JSON text of one ResourceMetrics directly, without the
 * intermediate object tree of the official serializer. Field names and value spellings follow
 * the OTLP/JSON mapping (timestamps as decimal strings, non-finite doubles as "NaN" / "Infinity").
 */
export function resourceMetricsToJson(rm: ResourceMetrics): string {
  const resource = rm.resource;
  let out = `{"resource":{"attributes":${attributesJson(resource.attributes)}}`;
  out += ',"scopeMetrics":[';
  for (let i = 0; i < rm.scopeMetrics.length; i++) {
    const sm = rm.scopeMetrics[i];
    if (sm === undefined) continue;
    if (i > 0) out += ',';
    out += `{"scope":${scopeJson(sm.scope)},"metrics":[`;
    for (let j = 0; j < sm.metrics.length; j++) {
      const metric = sm.metrics[j];
      if (metric === undefined) continue;
      if (j > 0) out += ',';
      out += metricJson(metric);
    }
    out += ']';
    if (sm.scope.schemaUrl) out += `,"schemaUrl":${JSON.stringify(sm.scope.schemaUrl)}`;
    out += '}';
  }
  out += ']';
  if (resource.schemaUrl) out += `,"schemaUrl":${JSON.stringify(resource.schemaUrl)}`;
  return `${out}}`;
}

function scopeJson(scope: InstrumentationScope & { attributes?: Attributes }): string {
  let out = `{"name":${JSON.stringify(scope.name)}`;
  if (scope.version) out += `,"version":${JSON.stringify(scope.version)}`;
  if (scope.attributes && Object.keys(scope.attributes).length > 0) {
    out += `,"attributes":${attributesJson(scope.attributes)}`;
  }
  return `${out}}`;
}

function metricJson(metric: MetricData): string {
  const d = metric.descriptor;
  let out = `{"name":${JSON.stringify(d.name)}`;
  if (d.description) out += `,"description":${JSON.stringify(d.description)}`;
  if (d.unit) out += `,"unit":${JSON.stringify(d.unit)}`;
  const temporality = temporalityJson(metric.aggregationTemporality);
  switch (metric.dataPointType) {
    case DataPointType.SUM:
      out += `,"sum":{"dataPoints":${numberPointsJson(metric.dataPoints, d.valueType)}`;
      out += `,"aggregationTemporality":${temporality},"isMonotonic":${metric.isMonotonic}}`;
      break;
    case DataPointType.GAUGE:
      out += `,"gauge":{"dataPoints":${numberPointsJson(metric.dataPoints, d.valueType)}}`;
      break;
    case DataPointType.HISTOGRAM:
      out += `,"histogram":{"dataPoints":${histogramPointsJson(metric.dataPoints)}`;
      out += `,"aggregationTemporality":${temporality}}`;
      break;
    case DataPointType.EXPONENTIAL_HISTOGRAM:
      out += `,"exponentialHistogram":{"dataPoints":${expHistogramPointsJson(metric.dataPoints)}`;
      out += `,"aggregationTemporality":${temporality}}`;
      break;
  }
  return `${out}}`;
}

export function temporalityJson(t: AggregationTemporality): number {
  return t === AggregationTemporality.DELTA ? OTLP_TEMPORALITY.delta : OTLP_TEMPORALITY.cumulative;
}

/** Consecutive points of one collection share their times: remember the last one spelled. */
let lastTime: HrTime | undefined;
let lastTimeJson = '';
function timeJson(time: HrTime): string {
  if (lastTime !== undefined && lastTime[0] === time[0] && lastTime[1] === time[1]) {
    return lastTimeJson;
  }
  lastTime = time;
  lastTimeJson = `"${hrTimeToNanosString(time)}"`;
  return lastTimeJson;
}

function pointHeader(p: DataPoint<unknown>): string {
  return `{"attributes":${attributesJson(p.attributes)},"startTimeUnixNano":${timeJson(p.startTime)},"timeUnixNano":${timeJson(p.endTime)}`;
}

function numberPointsJson(points: DataPoint<number>[], valueType: ValueType): string {
  let out = '[';
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (p === undefined) continue;
    if (i > 0) out += ',';
    out += pointHeader(p);
    const v = p.value;
    if (valueType === ValueType.INT && Number.isSafeInteger(v)) out += `,"asInt":${v}}`;
    else out += `,"asDouble":${doubleJson(v)}}`;
  }
  return `${out}]`;
}

function histogramPointsJson(points: DataPoint<Histogram>[]): string {
  let out = '[';
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (p === undefined) continue;
    const h = p.value;
    if (i > 0) out += ',';
    out += `${pointHeader(p)},"count":${h.count}`;
    if (h.sum !== undefined) out += `,"sum":${doubleJson(h.sum)}`;
    out += `,"bucketCounts":${countsJson(h.buckets.counts)}`;
    out += `,"explicitBounds":${doublesJson(h.buckets.boundaries)}`;
    if (h.min !== undefined) out += `,"min":${doubleJson(h.min)}`;
    if (h.max !== undefined) out += `,"max":${doubleJson(h.max)}`;
    out += '}';
  }
  return `${out}]`;
}

function expHistogramPointsJson(points: DataPoint<ExponentialHistogram>[]): string {
  let out = '[';
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (p === undefined) continue;
    const h = p.value;
    if (i > 0) out += ',';
    out += `${pointHeader(p)},"count":${h.count}`;
    if (h.sum !== undefined) out += `,"sum":${doubleJson(h.sum)}`;
    out += `,"scale":${h.scale},"zeroCount":${h.zeroCount}`;
    out += `,"positive":{"offset":${h.positive.offset},"bucketCounts":${countsJson(h.positive.bucketCounts)}}`;
    out += `,"negative":{"offset":${h.negative.offset},"bucketCounts":${countsJson(h.negative.bucketCounts)}}`;
    if (h.min !== undefined) out += `,"min":${doubleJson(h.min)}`;
    if (h.max !== undefined) out += `,"max":${doubleJson(h.max)}`;
    out += '}';
  }
  return `${out}]`;
}

function countsJson(values: readonly number[]): string {
  return `[${values.join(',')}]`;
}

function doublesJson(values: readonly number[]): string {
  let out = '[';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    out += doubleJson(values[i] as number);
  }
  return `${out}]`;
}

/** JSON has no NaN or Infinity; the protobuf JSON mapping spells them as strings. */
export function doubleJson(v: number): string {
  if (Number.isFinite(v)) return String(v);
  if (Number.isNaN(v)) return '"NaN"';
  return v > 0 ? '"Infinity"' : '"-Infinity"';
}

function attributesJson(attributes: Attributes): string {
  let out = '[';
  let first = true;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += `{"key":${JSON.stringify(key)},"value":${anyValueJson(value)}}`;
  }
  return `${out}]`;
}

function anyValueJson(value: AttributeValue | null | undefined): string {
  switch (typeof value) {
    case 'string':
      return `{"stringValue":${JSON.stringify(value)}}`;
    case 'boolean':
      return `{"boolValue":${value}}`;
    case 'number':
      return Number.isSafeInteger(value)
        ? `{"intValue":${value}}`
        : `{"doubleValue":${doubleJson(value)}}`;
    default:
      if (Array.isArray(value)) {
        let out = '{"arrayValue":{"values":[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += anyValueJson(value[i]);
        }
        return `${out}]}}`;
      }
      return '{}';
  }
}
