import type { HrTime } from '@opentelemetry/api';
import {
  JsonLogsSerializer,
  JsonMetricsSerializer,
  JsonTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { captureDiag } from '../../support/diag-capture.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { LOGS, METRICS, TRACES } from '../../support/signal-driver.js';
import { columns, encoder, GOOD, S, type TimeSignal, timeItems } from '../../support/time-items.js';

/**
 * An HrTime with a part NaN or infinite is a caller's bug, and no time: the official OTLP/JSON
 * serializers throw on it. Every format refuses it alike (the export answers FAILED, counted in
 * exportsRejected), none stores 0 or a made-up number in its place.
 */

const logged = captureDiag();
const { span, logRecord, gauge, cases } = timeItems('not-finite');
const BAD: HrTime[] = [
  [Number.NaN, 0],
  [S, Number.NaN],
  [Number.POSITIVE_INFINITY, 0],
  [S, Number.NEGATIVE_INFINITY],
];
const refusal = (t: HrTime) =>
  `HrTime [${t[0]}, ${t[1]}] is not a time: its seconds and nanoseconds must be finite numbers`;
const CASES = cases(BAD);

const official = {
  spans: (i: unknown) => JsonTraceSerializer.serializeRequest(i as ReadableSpan[]),
  logs: (i: unknown) => JsonLogsSerializer.serializeRequest(i as ReadableLogRecord[]),
  metrics: (i: unknown) => JsonMetricsSerializer.serializeRequest(i as ResourceMetrics),
};
describe.each(CASES)('$signal, $field time $bad', ({ signal, bad, item }) => {
  test('the official OTLP/JSON serializer throws on it', () => {
    expect(() => official[signal as keyof typeof official](item)).toThrow();
  });

  test.each(['otlp-json', 'otlp-proto', 'parquet'] as const)('%s records refuse it', (format) => {
    expect(() => encoder(signal as TimeSignal, format)(item)).toThrow(refusal(bad));
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
