import { ValueType } from '@opentelemetry/api';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type ExponentialHistogram,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { newTally } from '../../src/encoding/records.js';
import { metricsExport } from '../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../src/signals/metrics/parquet/column-builders.js';

/** One metrics export encoded in each format, as an exporter encodes it: throws what it refuses. */
export const METRIC_FORMATS = {
  'otlp-json': (rm: ResourceMetrics) => metricsExport.records['otlp-json'].encode(rm),
  'otlp-proto': (rm: ResourceMetrics) => metricsExport.records['otlp-proto'].encode(rm),
  parquet: (rm: ResourceMetrics) => new MetricColumnBuilders().append(rm, newTally(false)),
};

export type MetricFormat = keyof typeof METRIC_FORMATS;

/** The formats of METRIC_FORMATS, for test.each(). */
export const METRIC_FORMAT_NAMES = Object.keys(METRIC_FORMATS) as MetricFormat[];

/** An export of `metric` alone, in scope "n" of `resource`. */
export function oneMetric(metric: unknown, resource: Resource): ResourceMetrics {
  return {
    resource,
    scopeMetrics: [{ scope: { name: 'n' }, metrics: [metric] }],
  } as unknown as ResourceMetrics;
}

/**
 * An export of one cumulative exponential histogram "e" of one point, `value`, from `start` to
 * `end` (1 s to 2 s unless given).
 */
export function exponentialExport(
  value: ExponentialHistogram,
  resource: Resource = resourceFromAttributes({ 'service.name': 'exponential' }),
  start: [number, number] = [1, 0],
  end: [number, number] = [2, 0],
): ResourceMetrics {
  return oneMetric(
    {
      descriptor: { name: 'e', description: '', unit: '', valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.EXPONENTIAL_HISTOGRAM,
      dataPoints: [{ startTime: start, endTime: end, attributes: {}, value }],
    },
    resource,
  );
}
