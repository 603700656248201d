import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { bytesAsRanges, openParquetParts } from '../../../src/reader/parquet-parts.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { resourceMetricsToJson } from '../../../src/signals/metrics/otlp-json.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';

/**
 * A histogram's counts are uint64s; the Parquet columns keep one of 2^63 or more as its 64 bits
 * in INT64 (docs/parquet.md). Reading such a file back must give the count, as OTLP/JSON spells
 * it, not the signed INT64 (-2^63 for 2^63), which is no uint64.
 */

const S = 1_764_480_000;
const TWO_63 = 2 ** 63; // exact as a double

function histograms(): ResourceMetrics {
  const point = (value: Record<string, unknown>) => ({
    startTime: [S, 0],
    endTime: [S, 1],
    attributes: {},
    value,
  });
  const metric = (name: string, dataPointType: DataPointType, value: Record<string, unknown>) => ({
    descriptor: { name, description: '', unit: '', valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType,
    dataPoints: [point(value)],
  });
  return {
    resource: resourceFromAttributes({ 'service.name': 'counts' }),
    scopeMetrics: [
      {
        scope: { name: 'n' },
        metrics: [
          metric('h', DataPointType.HISTOGRAM, {
            count: TWO_63,
            buckets: { boundaries: [1], counts: [TWO_63, 0] },
          }),
          metric('e', DataPointType.EXPONENTIAL_HISTOGRAM, {
            count: TWO_63,
            scale: 0,
            zeroCount: TWO_63,
            positive: { offset: 0, bucketCounts: [TWO_63] },
            negative: { offset: 0, bucketCounts: [TWO_63] },
          }),
        ],
      },
    ],
  } as unknown as ResourceMetrics;
}

/** The counts of each point of a request (OTLP/JSON shape), by metric name. */
function countsOf(request: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const rms = request.resourceMetrics as Record<string, unknown>[];
  for (const rm of rms) {
    for (const sm of rm.scopeMetrics as Record<string, unknown>[]) {
      for (const m of sm.metrics as Record<string, unknown>[]) {
        const data = (m.histogram ?? m.exponentialHistogram) as Record<string, unknown>;
        const p = (data.dataPoints as Record<string, unknown>[])[0] as Record<string, unknown>;
        const positive = p.positive as Record<string, unknown> | undefined;
        const negative = p.negative as Record<string, unknown> | undefined;
        out[m.name as string] = [
          p.count,
          p.bucketCounts,
          p.zeroCount,
          positive?.bucketCounts,
          negative?.bucketCounts,
        ].map((v) => (Array.isArray(v) ? v.map(String) : v === undefined ? v : String(v)));
      }
    }
  }
  return out;
}

describe('histogram counts of 2^63 or more in a Parquet file', () => {
  test('read back as the uint64 OTLP/JSON writes, not as a negative INT64', async () => {
    // One ResourceMetrics as OTLP/JSON writes it, in a request.
    const json = { resourceMetrics: [JSON.parse(resourceMetricsToJson(histograms()))] };
    const builders = new MetricColumnBuilders();
    builders.appendResourceMetrics(histograms());
    const file = await encodeParquet(builders.seal(), { compression: 'none' });
    const parts = await openParquetParts(bytesAsRanges(file), resolveReadLimits({}));
    const read = await parts.read(0);
    const big = '9223372036854775808';
    const expected = {
      h: [big, [big, '0'], undefined, undefined, undefined],
      e: [big, undefined, big, [big], [big]],
    };
    expect(countsOf(json)).toEqual(expected);
    expect(countsOf(read.request as Record<string, unknown>)).toEqual(expected);
  });
});
