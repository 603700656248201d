import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import {
  exponentialExport,
  METRIC_FORMAT_NAMES,
  METRIC_FORMATS,
  oneMetric,
} from '../../support/metric-formats.js';

/**
 * A histogram's count, bucket counts and zero count are uint64s. A caller's count no uint64
 * holds (negative, NaN, infinite, 2^64 on) is refused with its export in every format. Before,
 * each format kept something else: protobuf 0 (NaN, Infinity, 2^64) or 2^64 - 3 (-3), OTLP/JSON
 * "NaN", "Infinity", -3 or 18446744073709551616, Parquet 0 or -3.
 */

// 2.5 and 0.5: no whole number. The official serializers disagree on them (protobuf 2 and 0,
// JSON 2.5 and 0.5, which no OTLP/JSON reader takes as a uint64); before, so did these formats.
const BAD = [-3, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 64, 2.5, 0.5];

const resource = resourceFromAttributes({ 'service.name': 'counts' });

function histogram(count: number, bucket: number): ResourceMetrics {
  return oneMetric(
    {
      descriptor: { name: 'h', description: '', unit: '', valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: [
        {
          startTime: [1, 0],
          endTime: [2, 0],
          attributes: {},
          value: { count, sum: 1, buckets: { boundaries: [0], counts: [1, bucket] } },
        },
      ],
    },
    resource,
  );
}

const exponential = (count: number, zero: number, bucket: number) =>
  exponentialExport(
    {
      count,
      sum: 1,
      scale: 0,
      zeroCount: zero,
      positive: { offset: 0, bucketCounts: [bucket] },
      negative: { offset: 0, bucketCounts: [] },
    },
    resource,
  );

describe.each(BAD)('a count of %s', (bad) => {
  const cases: [string, string, ResourceMetrics][] = [
    ['a histogram count', 'histogram count', histogram(bad, 1)],
    ['a bucket count', 'histogram bucket', histogram(1, bad)],
    ['a histogram count', 'exponential count', exponential(bad, 1, 1)],
    ['a zero count', 'exponential zero count', exponential(1, bad, 1)],
    ['a bucket count', 'exponential bucket', exponential(1, 1, bad)],
  ];
  test.each(METRIC_FORMAT_NAMES)('%s refuses it', (format) => {
    for (const [what, where, rm] of cases) {
      expect(() => METRIC_FORMATS[format](rm), where).toThrow(
        `${what} ${bad} is not a count: a uint64 holds a whole number from 0 to 2^64 - 1`,
      );
    }
  });
});

test('0 and the largest double below 2^64 are counts every format takes', () => {
  for (const good of [0, 2 ** 64 - 2048]) {
    for (const rm of [histogram(good, good), exponential(good, good, good)]) {
      for (const encode of Object.values(METRIC_FORMATS)) expect(() => encode(rm)).not.toThrow();
    }
  }
});
