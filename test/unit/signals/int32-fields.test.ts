import { ValueType } from '@opentelemetry/api';
import { JsonLogsSerializer, JsonMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';

/**
 * A log record's severity number and an exponential histogram's scale and bucket offsets are
 * int32s. A caller's value no int32 holds was kept differently by each format: 2.5 as 2 in
 * OTLP/protobuf and Parquet, 2.5 in OTLP/JSON; 2^40 as 2^40 in OTLP/JSON and its severity in
 * protobuf, 0 in Parquet. Every format now refuses its export alike.
 */

const resource = resourceFromAttributes({ 'service.name': 'int32' });
const S = 1_764_480_000;

const logRecord = (severityNumber: number) =>
  ({
    hrTime: [S, 0],
    hrTimeObserved: [S, 0],
    severityNumber,
    body: 'b',
    attributes: {},
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: { name: 'n' },
  }) as unknown as ReadableLogRecord;

function exponential(scale: number, positive: number, negative: number): ResourceMetrics {
  return {
    resource,
    scopeMetrics: [
      {
        scope: { name: 'n' },
        metrics: [
          {
            descriptor: { name: 'e', description: '', unit: '', valueType: ValueType.DOUBLE },
            aggregationTemporality: AggregationTemporality.CUMULATIVE,
            dataPointType: DataPointType.EXPONENTIAL_HISTOGRAM,
            dataPoints: [
              {
                startTime: [S, 0],
                endTime: [S, 1],
                attributes: {},
                value: {
                  count: 2,
                  sum: 1,
                  scale,
                  zeroCount: 0,
                  positive: { offset: positive, bucketCounts: [1] },
                  negative: { offset: negative, bucketCounts: [1] },
                },
              },
            ],
          },
        ],
      },
    ],
  } as unknown as ResourceMetrics;
}

const logs = {
  'otlp-json': (r: ReadableLogRecord[]) => logsExport.records['otlp-json'].encode(r),
  'otlp-proto': (r: ReadableLogRecord[]) => logsExport.records['otlp-proto'].encode(r),
  parquet: (r: ReadableLogRecord[]) => logColumnBuilders().append(r, newTally(false)),
};
const metrics = {
  'otlp-json': (rm: ResourceMetrics) => metricsExport.records['otlp-json'].encode(rm),
  'otlp-proto': (rm: ResourceMetrics) => metricsExport.records['otlp-proto'].encode(rm),
  parquet: (rm: ResourceMetrics) => new MetricColumnBuilders().append(rm, newTally(false)),
};
const FORMATS = ['otlp-json', 'otlp-proto', 'parquet'] as const;

describe.each([2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 40, -(2 ** 31) - 1, 2 ** 31])(
  'a value of %s',
  (bad) => {
    const refusal = (what: string) =>
      `${what} ${bad} is not an int32: a whole number from -2^31 to 2^31 - 1`;
    test.each(FORMATS)('%s refuses it as a severity number', (format) => {
      expect(() => logs[format]([logRecord(bad)])).toThrow(refusal('a severity number'));
    });
    test.each(FORMATS)('%s refuses it as a scale or a bucket offset', (format) => {
      expect(() => metrics[format](exponential(bad, 0, 0)), 'scale').toThrow(refusal('a scale'));
      for (const rm of [exponential(0, bad, 0), exponential(0, 0, bad)]) {
        expect(() => metrics[format](rm), 'offset').toThrow(refusal('a bucket offset'));
      }
    });
  },
);

test('-2^31 and 2^31 - 1 are taken everywhere, OTLP/JSON as the official serializer writes them', () => {
  for (const good of [-(2 ** 31), 2 ** 31 - 1]) {
    const records = [logRecord(good)];
    const severity = (json: string) => json.match(/"severityNumber":(-?\d+)/)?.[1];
    expect(severity(String(logs['otlp-json'](records)))).toBe(
      severity(Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? []).toString()),
    );
    const rm = exponential(good, good, good);
    const ints = (json: string) =>
      [...json.matchAll(/"(scale|offset)":(-?\d+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    const official = ints(Buffer.from(JsonMetricsSerializer.serializeRequest(rm) ?? []).toString());
    expect(official).toHaveLength(3);
    expect(ints(String(metrics['otlp-json'](rm)))).toEqual(official);
    for (const format of FORMATS) {
      expect(() => logs[format](records)).not.toThrow();
      expect(() => metrics[format](rm)).not.toThrow();
    }
  }
});
