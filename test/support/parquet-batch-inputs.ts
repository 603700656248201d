import { type Attributes, ValueType } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { Export, Kv, Point, Value } from './parquet-batches.js';

/** A batch's exports as the builders get them: the SDK's objects, or decoded OTLP requests. */

function sdkValue(v: Value): unknown {
  switch (v.k) {
    case 'int':
      return Number(v.v);
    case 'empty':
      return undefined;
    case 'words':
      return v.v;
    default:
      return v.v;
  }
}

const hrTime = (ns: bigint): [number, number] => [
  Number(ns / 1_000_000_000n),
  Number(ns % 1_000_000_000n),
];
export const sdkAttributes = (kvs: Kv[]): Attributes =>
  Object.fromEntries(kvs.map(([k, v]) => [k, sdkValue(v)])) as Attributes;
const DATA_POINT_TYPE = {
  gauge: DataPointType.GAUGE,
  sum: DataPointType.SUM,
  histogram: DataPointType.HISTOGRAM,
  exponential_histogram: DataPointType.EXPONENTIAL_HISTOGRAM,
} as const;

/** The SDK's ResourceMetrics of an export (one bounds array per histogram, as the SDK shares it). */
export function toResourceMetrics(e: Export): ResourceMetrics {
  return {
    resource: {
      attributes: sdkAttributes(e.attributes),
      schemaUrl: e.schemaUrl,
    } as unknown as Resource,
    scopeMetrics: e.scopes.map((s) => ({
      scope: { name: s.name, version: s.version, schemaUrl: s.schemaUrl },
      metrics: s.metrics.map((m) => {
        const bounds = m.points.find((p) => p.value.t === 'hist')?.value as
          | { bounds: number[] }
          | undefined;
        const shared = bounds?.bounds ?? [];
        const dataPoints: DataPoint<unknown>[] = m.points.map((p) => {
          const v = p.value;
          const d =
            v.t === 'hist' || v.t === 'exp' || v.t === 'summary'
              ? { count: Number(v.count), sum: v.sum, min: v.min, max: v.max }
              : {};
          return {
            startTime: hrTime(p.start),
            endTime: hrTime(p.time),
            attributes: sdkAttributes(p.attributes),
            value:
              v.t === 'int' || v.t === 'dbl'
                ? Number(v.v)
                : v.t === 'hist'
                  ? { ...d, buckets: { boundaries: shared, counts: v.counts.map(Number) } }
                  : v.t === 'exp'
                    ? {
                        ...d,
                        scale: v.scale,
                        zeroCount: Number(v.zero),
                        positive: { offset: v.pos[0], bucketCounts: v.pos[1].map(Number) },
                        negative: { offset: v.neg[0], bucketCounts: v.neg[1].map(Number) },
                      }
                    : d,
          };
        });
        return {
          descriptor: {
            name: m.name,
            description: m.description,
            unit: m.unit,
            valueType: m.int ? ValueType.INT : ValueType.DOUBLE,
            type: 'COUNTER',
          },
          aggregationTemporality: m.delta
            ? AggregationTemporality.DELTA
            : AggregationTemporality.CUMULATIVE,
          dataPointType: DATA_POINT_TYPE[m.kind as keyof typeof DATA_POINT_TYPE],
          isMonotonic: m.monotonic,
          dataPoints,
        } as unknown as MetricData;
      }),
    })),
  };
}

const otlpDouble = (v: number) => (Number.isFinite(v) ? v : String(v));
function otlpValue(v: Value): object {
  switch (v.k) {
    case 'str':
      return { stringValue: v.v };
    case 'bool':
      return { boolValue: v.v };
    case 'int':
      return { intValue: v.v.toString() };
    case 'dbl':
      return { doubleValue: otlpDouble(v.v) };
    case 'empty':
      return {};
    case 'words':
      return { arrayValue: { values: v.v.map((w) => ({ stringValue: w })) } };
  }
}
const otlpAttributes = (kvs: Kv[]) => kvs.map(([key, v]) => ({ key, value: otlpValue(v) }));
const FIELD = {
  gauge: 'gauge',
  sum: 'sum',
  histogram: 'histogram',
  exponential_histogram: 'exponentialHistogram',
  summary: 'summary',
} as const;

/** A decoded request of an export: int64 as decimal strings, non-finite doubles as strings. */
export function toRequest(e: Export): Record<string, unknown> {
  const point = (p: Point) => {
    const v = p.value;
    const out: Record<string, unknown> = {
      attributes: otlpAttributes(p.attributes),
      startTimeUnixNano: p.start.toString(),
      timeUnixNano: p.time.toString(),
      flags: p.flags,
    };
    if (v.t === 'int') out.asInt = v.v.toString();
    else if (v.t === 'dbl') out.asDouble = otlpDouble(v.v);
    else {
      out.count = v.count.toString();
      for (const f of ['sum', 'min', 'max'] as const)
        if (v[f] !== undefined) out[f] = otlpDouble(v[f] as number);
      if (v.t === 'hist')
        Object.assign(out, {
          explicitBounds: v.bounds.map(otlpDouble),
          bucketCounts: v.counts.map(String),
        });
      if (v.t === 'exp')
        Object.assign(out, {
          scale: v.scale,
          zeroCount: v.zero.toString(),
          positive: { offset: v.pos[0], bucketCounts: v.pos[1].map(String) },
          negative: { offset: v.neg[0], bucketCounts: v.neg[1].map(String) },
        });
    }
    return out;
  };
  return {
    resourceMetrics: [
      {
        resource: { attributes: otlpAttributes(e.attributes) },
        schemaUrl: e.schemaUrl,
        scopeMetrics: e.scopes.map((s) => ({
          scope: { name: s.name, version: s.version },
          schemaUrl: s.schemaUrl,
          metrics: s.metrics.map((m) => ({
            name: m.name,
            description: m.description,
            unit: m.unit,
            [FIELD[m.kind]]: {
              dataPoints: m.points.map(point),
              ...(m.kind === 'gauge' || m.kind === 'summary'
                ? {}
                : { aggregationTemporality: m.delta ? 1 : 2 }),
              ...(m.kind === 'sum' ? { isMonotonic: m.monotonic } : {}),
            },
          })),
        })),
      },
    ],
  };
}
