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
import { captureDiag } from '../../support/diag-capture.js';
import { handBuiltSpan } from '../../support/readable-span.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { LOGS, METRICS, TRACES } from '../../support/signal-driver.js';

/**
 * An HrTime with a part NaN or infinite is a caller's bug, and no time: the official OTLP/JSON
 * serializers throw on it. Every format refuses it alike (the export answers FAILED, counted in
 * exportsRejected), none stores 0 or a made-up number in its place.
 */

const logged = captureDiag();
const S = 1_764_480_000;
const resource = resourceFromAttributes({ 'service.name': 'not-finite' });
const scope = { name: 'scope' };
const GOOD: HrTime = [S, 5];
const BAD: HrTime[] = [
  [Number.NaN, 0],
  [S, Number.NaN],
  [Number.POSITIVE_INFINITY, 0],
  [S, Number.NEGATIVE_INFINITY],
];
const refusal = (t: HrTime) =>
  `HrTime [${t[0]}, ${t[1]}] is not a time: its seconds and nanoseconds must be finite numbers`;

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

/** Each signal's items with the bad time in each of their time fields. */
const CASES = BAD.flatMap((bad) => [
  { signal: 'spans', bad, field: 'start', item: [span(bad, GOOD, GOOD)] },
  { signal: 'spans', bad, field: 'end', item: [span(GOOD, bad, GOOD)] },
  { signal: 'spans', bad, field: 'event', item: [span(GOOD, GOOD, bad)] },
  { signal: 'logs', bad, field: 'time', item: [logRecord(bad, GOOD)] },
  { signal: 'logs', bad, field: 'observed', item: [logRecord(GOOD, bad)] },
  { signal: 'metrics', bad, field: 'start', item: gauge(bad, GOOD) },
  { signal: 'metrics', bad, field: 'end', item: gauge(GOOD, bad) },
]);

const official = {
  spans: (i: unknown) => JsonTraceSerializer.serializeRequest(i as ReadableSpan[]),
  logs: (i: unknown) => JsonLogsSerializer.serializeRequest(i as ReadableLogRecord[]),
  metrics: (i: unknown) => JsonMetricsSerializer.serializeRequest(i as ResourceMetrics),
};
const rows = { spans: tracesExport, logs: logsExport, metrics: metricsExport } as const;
const columns = {
  spans: (i: unknown) => spanColumnBuilders().append(i as ReadableSpan[], newTally(false)),
  logs: (i: unknown) => logColumnBuilders().append(i as ReadableLogRecord[], newTally(false)),
  metrics: (i: unknown) => new MetricColumnBuilders().append(i as ResourceMetrics, newTally(false)),
};

describe.each(CASES)('$signal, $field time $bad', ({ signal, bad, item }) => {
  test('the official OTLP/JSON serializer throws on it', () => {
    expect(() => official[signal as keyof typeof official](item)).toThrow();
  });

  test.each(['otlp-json', 'otlp-proto', 'parquet'] as const)('%s records refuse it', (format) => {
    const encode = rows[signal as keyof typeof rows].records[format].encode as (
      i: unknown,
    ) => Buffer;
    expect(() => encode(item)).toThrow(refusal(bad));
  });

  test('Parquet columns refuse it', () => {
    expect(() => columns[signal as keyof typeof columns](item)).toThrow(refusal(bad));
  });
});

test.each([
  ['traces', TRACES, [span([Number.NaN, 0], GOOD, GOOD)]],
  ['logs', LOGS, [logRecord([S, Number.NaN], GOOD)]],
  ['metrics', METRICS, gauge(GOOD, [Number.POSITIVE_INFINITY, 0])],
] as const)(
  '%s: the exporter answers FAILED, counts the export and says why',
  async (name, driver, item) => {
    for (const format of ['otlp-json', 'otlp-proto', 'parquet'] as const) {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, { format }, driver as typeof TRACES);
      try {
        const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
          exporter.export(item as never, resolve),
        );
        expect(result.code, format).toBe(1);
        expect(result.error?.message, format).toContain('is not a time');
        await exporter.forceFlush();
        expect(s3.stored.size, format).toBe(0);
        expect(exporter.stats().exportsRejected, format).toBe(1);
        expect(
          logged.some(
            (l) => l.text.includes(`could not encode ${name}:`) && l.text.includes('is not a time'),
          ),
        ).toBe(true);
      } finally {
        await exporter.shutdown();
      }
    }
  },
);
