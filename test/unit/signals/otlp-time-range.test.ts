import type { HrTime } from '@opentelemetry/api';
import {
  JsonLogsSerializer,
  JsonMetricsSerializer,
  JsonTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { tracesExport } from '../../../src/signals/traces/export.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { handBuiltSpan } from '../../support/readable-span.js';

/**
 * An OTLP time is a uint64 of nanoseconds. A finite HrTime before 1970 or from 2^64 ns on (2554)
 * is none: the official serializers write it as a negative or 20-digit-plus decimal in OTLP/JSON
 * (no OTLP reader takes it) and as other bits in protobuf. Before, OTLP/protobuf kept its low 64
 * bits (a wrong time, silently), OTLP/JSON the decimal, Parquet a negative timestamp or a refusal.
 * Every format now refuses it alike, with its export.
 */

const S = 1_764_480_000;
const resource = resourceFromAttributes({ 'service.name': 'time-range' });
const scope = { name: 'scope' };
const GOOD: HrTime = [S, 5];
const BAD: HrTime[] = [
  [18_446_744_073, 709_551_616], // 2^64 ns exactly
  [18_446_744_074, 0],
  [1e21, 7],
  [-1, 0],
  [0, -5],
  [S, -2e19],
];
const refusal = (t: HrTime) =>
  `HrTime [${t[0]}, ${t[1]}] is outside what an OTLP time holds: uint64 nanoseconds, 1970-01-01T00:00:00Z to 2554-07-21T23:34:33.709551615Z`;

const span = (start: HrTime, end: HrTime, event: HrTime): ReadableSpan =>
  handBuiltSpan({
    name: 'quote',
    spanContext: () => ({
      traceId: '1'.padStart(32, '0'),
      spanId: '2'.padStart(16, '0'),
      traceFlags: 1,
    }),
    startTime: start,
    endTime: end,
    events: [{ name: 'e', time: event, attributes: {} }],
    resource,
    instrumentationScope: scope,
  });
const logRecord = (time: HrTime, observed: HrTime) =>
  ({
    hrTime: time,
    hrTimeObserved: observed,
    body: 'b',
    attributes: {},
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: scope,
  }) as unknown as ReadableLogRecord;
const gauge = (start: HrTime, end: HrTime) =>
  ({
    resource,
    scopeMetrics: [
      {
        scope,
        metrics: [
          {
            descriptor: { name: 'g', description: '', unit: '', valueType: 1, type: 'GAUGE' },
            dataPointType: DataPointType.GAUGE,
            aggregationTemporality: AggregationTemporality.CUMULATIVE,
            dataPoints: [{ startTime: start, endTime: end, attributes: {}, value: 1 }],
          },
        ],
      },
    ],
  }) as unknown as ResourceMetrics;

const CASES = BAD.flatMap((bad) => [
  { signal: 'spans', bad, field: 'start', item: [span(bad, GOOD, GOOD)] },
  { signal: 'spans', bad, field: 'end', item: [span(GOOD, bad, GOOD)] },
  { signal: 'spans', bad, field: 'event', item: [span(GOOD, GOOD, bad)] },
  { signal: 'logs', bad, field: 'time', item: [logRecord(bad, GOOD)] },
  { signal: 'logs', bad, field: 'observed', item: [logRecord(GOOD, bad)] },
  { signal: 'metrics', bad, field: 'start', item: gauge(bad, GOOD) },
  { signal: 'metrics', bad, field: 'end', item: gauge(GOOD, bad) },
]);

const rows = { spans: tracesExport, logs: logsExport, metrics: metricsExport } as const;
const columns = {
  spans: (i: unknown) => spanColumnBuilders().append(i as ReadableSpan[], newTally(false)),
  logs: (i: unknown) => logColumnBuilders().append(i as ReadableLogRecord[], newTally(false)),
  metrics: (i: unknown) => new MetricColumnBuilders().append(i as ResourceMetrics, newTally(false)),
};
const encoder = (signal: keyof typeof rows, format: 'otlp-json' | 'otlp-proto' | 'parquet') =>
  rows[signal].records[format].encode as (i: unknown) => Buffer;

describe.each(CASES)('$signal, $field time $bad', ({ signal, bad, item }) => {
  test.each(['otlp-json', 'otlp-proto', 'parquet'] as const)('%s records refuse it', (format) => {
    expect(() => encoder(signal as keyof typeof rows, format)(item)).toThrow(refusal(bad));
  });

  test('Parquet columns refuse it', () => {
    expect(() => columns[signal as keyof typeof columns](item)).toThrow(refusal(bad));
  });
});

/** 2^64 - 1 ns, the last time OTLP holds, and the first second. */
const EDGES: HrTime[] = [
  [18_446_744_073, 709_551_615],
  [0, 0],
  [0, 1],
];

test('the last and the first OTLP times are kept, as the official OTLP/JSON serializer writes them', () => {
  for (const t of EDGES) {
    const spans = [span(t, t, t)];
    const spanTimes = (json: string) =>
      [...json.matchAll(/"(start|end)?[tT]imeUnixNano":"(\d+)"/g)].map((m) => m[2]);
    const official = spanTimes(
      Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString(),
    );
    expect(official).toHaveLength(3);
    expect(spanTimes(encoder('spans', 'otlp-json')(spans).toString())).toEqual(official);
    const logs = [logRecord(t, t)];
    const logTimes = (json: string) =>
      [...json.matchAll(/"(observedT|t)imeUnixNano":"(\d+)"/g)].map((m) => m[2]);
    const officialLogs = logTimes(
      Buffer.from(JsonLogsSerializer.serializeRequest(logs) ?? []).toString(),
    );
    expect(officialLogs).toHaveLength(2);
    expect(logTimes(encoder('logs', 'otlp-json')(logs).toString())).toEqual(officialLogs);
    const rm = gauge(t, t);
    const pointTimes = (json: string) =>
      [...json.matchAll(/"(startT|t)imeUnixNano":"(\d+)"/g)].map((m) => m[2]);
    const officialPoints = pointTimes(
      Buffer.from(JsonMetricsSerializer.serializeRequest(rm) ?? []).toString(),
    );
    expect(officialPoints).toHaveLength(2);
    expect(pointTimes(encoder('metrics', 'otlp-json')(rm).toString())).toEqual(officialPoints);
    for (const format of ['otlp-proto', 'parquet'] as const) {
      expect(() => encoder('spans', format)(spans)).not.toThrow();
      expect(() => encoder('logs', format)(logs)).not.toThrow();
      expect(() => encoder('metrics', format)(gauge(t, t))).not.toThrow();
    }
  }
});
