import { JsonLogsSerializer, JsonMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import {
  exponentialExport,
  METRIC_FORMAT_NAMES,
  METRIC_FORMATS,
} from '../../support/metric-formats.js';

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

const exponential = (scale: number, positive: number, negative: number) =>
  exponentialExport(
    {
      count: 2,
      sum: 1,
      scale,
      zeroCount: 0,
      positive: { offset: positive, bucketCounts: [1] },
      negative: { offset: negative, bucketCounts: [1] },
    },
    resource,
    [S, 0],
    [S, 1],
  );

const logs = {
  'otlp-json': (r: ReadableLogRecord[]) => logsExport.records['otlp-json'].encode(r),
  'otlp-proto': (r: ReadableLogRecord[]) => logsExport.records['otlp-proto'].encode(r),
  parquet: (r: ReadableLogRecord[]) => logColumnBuilders().append(r, newTally(false)),
};

describe.each([2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 40, -(2 ** 31) - 1, 2 ** 31])(
  'a value of %s',
  (bad) => {
    const refusal = (what: string) =>
      `${what} ${bad} is not an int32: a whole number from -2^31 to 2^31 - 1`;
    test.each(METRIC_FORMAT_NAMES)('%s refuses it as a severity number', (format) => {
      expect(() => logs[format]([logRecord(bad)])).toThrow(refusal('a severity number'));
    });
    test.each(METRIC_FORMAT_NAMES)('%s refuses it as a scale or a bucket offset', (format) => {
      expect(() => METRIC_FORMATS[format](exponential(bad, 0, 0)), 'scale').toThrow(
        refusal('a scale'),
      );
      for (const rm of [exponential(0, bad, 0), exponential(0, 0, bad)]) {
        expect(() => METRIC_FORMATS[format](rm), 'offset').toThrow(refusal('a bucket offset'));
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
    expect(ints(String(METRIC_FORMATS['otlp-json'](rm)))).toEqual(official);
    for (const format of METRIC_FORMAT_NAMES) {
      expect(() => logs[format](records)).not.toThrow();
      expect(() => METRIC_FORMATS[format](rm)).not.toThrow();
    }
  }
});
