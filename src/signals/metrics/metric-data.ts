import { ValueType } from '@opentelemetry/api';
import { DataPointType } from '@opentelemetry/sdk-metrics';
import { FIELD } from '../../encoding/otlp-schema.js';

/**
 * The OTLP data of each of the SDK's point types: the metric's field that holds it (`sum`), its
 * message (`Sum`: the points, and a temporality and monotonic flag where it has them) and its
 * point message (`NumberDataPoint`). Both encoders of a metric take them from here.
 */
export interface MetricDataSpec {
  readonly field: 'sum' | 'gauge' | 'histogram' | 'exponentialHistogram';
  readonly point: 'NumberDataPoint' | 'HistogramDataPoint' | 'ExponentialHistogramDataPoint';
  /** Field numbers in its message: its points, and its temporality and monotonic flag if it has them. */
  readonly dataPoints: number;
  readonly temporality: number | undefined;
  readonly monotonic: number | undefined;
}

function spec(
  field: MetricDataSpec['field'],
  message: 'Sum' | 'Gauge' | 'Histogram' | 'ExponentialHistogram',
  point: MetricDataSpec['point'],
): MetricDataSpec {
  const fields: { dataPoints: number; aggregationTemporality?: number; isMonotonic?: number } =
    FIELD[message];
  return {
    field,
    point,
    dataPoints: fields.dataPoints,
    temporality: fields.aggregationTemporality,
    monotonic: fields.isMonotonic,
  };
}

export const METRIC_DATA: Readonly<Record<DataPointType, MetricDataSpec>> = {
  [DataPointType.SUM]: spec('sum', 'Sum', 'NumberDataPoint'),
  [DataPointType.GAUGE]: spec('gauge', 'Gauge', 'NumberDataPoint'),
  [DataPointType.HISTOGRAM]: spec('histogram', 'Histogram', 'HistogramDataPoint'),
  [DataPointType.EXPONENTIAL_HISTOGRAM]: spec(
    'exponentialHistogram',
    'ExponentialHistogram',
    'ExponentialHistogramDataPoint',
  ),
};

/** What a point's value is written as (testing it per point beats a call through a function). */
export const VALUE = { int: 0, double: 1, histogram: 2, exponentialHistogram: 3 } as const;
export type ValueKind = (typeof VALUE)[keyof typeof VALUE];

/** The value of the points of a metric: an INT instrument's numbers as ints (while int64 holds them). */
export function valueKind(point: MetricDataSpec['point'], valueType: ValueType): ValueKind {
  if (point === 'HistogramDataPoint') return VALUE.histogram;
  if (point === 'ExponentialHistogramDataPoint') return VALUE.exponentialHistogram;
  return valueType === ValueType.INT ? VALUE.int : VALUE.double;
}
