import { resourceFromAttributes } from '@opentelemetry/resources';
import { expect, test } from 'vitest';
import { decodeOtlpProto } from '../../../src/encoding/otlp-proto-decode.js';
import { ProtoWriter } from '../../../src/encoding/proto-writer.js';
import { exponentialExport, METRIC_FORMATS } from '../../support/metric-formats.js';

/**
 * A protobuf varint holds a whole number from 0 to 2^64 - 1. A caller's number outside that
 * (an exponential histogram's bucket count of -3, 2^64 or Infinity; a uint of Infinity) is
 * refused with its export, never written as bytes no decoder reads, and never loops: Infinity
 * divided by 128 stays Infinity, and before the check the encoder spun forever on the service's
 * thread.
 */

const resource = resourceFromAttributes({ 'service.name': 'varints' });

const exponential = (bucketCount: number) =>
  exponentialExport(
    {
      count: 1,
      sum: 1,
      scale: 0,
      zeroCount: 0,
      positive: { offset: 0, bucketCounts: [1, bucketCount] },
      negative: { offset: 0, bucketCounts: [] },
    },
    resource,
  );

const encode = METRIC_FORMATS['otlp-proto'];

test('the largest bucket count a varint holds is written and read back', () => {
  // 2^64 - 2048: the largest double below 2^64.
  const decoded = decodeOtlpProto(encode(exponential(2 ** 64 - 2048))) as never as {
    resourceMetrics: {
      scopeMetrics: {
        metrics: {
          exponentialHistogram: { dataPoints: { positive: { bucketCounts: unknown[] } }[] };
        }[];
      }[];
    }[];
  };
  const point =
    decoded.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.exponentialHistogram.dataPoints[0];
  expect(point?.positive.bucketCounts).toEqual([1, '18446744073709549568']);
});

test.each([-3, 2 ** 64, Number.NaN, Number.POSITIVE_INFINITY])(
  'an exponential histogram bucket count of %s is refused',
  (count) => {
    // The metrics' encoder refuses it as a count first (histogram-counts.test.ts).
    expect(() => encode(exponential(count))).toThrow(`a bucket count ${count} is not a count`);
  },
);

// A dropped count is refused as a uint32 (dropped-counts.test.ts) and a severity as an int32
// (int32-fields.test.ts) first: the writer's own refusal, for every other caller.
test.each([
  [-3, '-3'],
  [2 ** 64, '18446744073709552000'],
  [Number.NaN, 'NaN'],
  [Number.POSITIVE_INFINITY, 'Infinity'],
])('the varint writer refuses a uint of %s', (value, text) => {
  expect(() => new ProtoWriter().uint(1, value)).toThrow(
    `${text} is outside what a protobuf varint holds (a whole number from 0 to 2^64 - 1)`,
  );
});
