import type { HrTime } from '@opentelemetry/api';
import {
  JsonLogsSerializer,
  JsonMetricsSerializer,
  JsonTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { describe, expect, test } from 'vitest';
import { columns, encoder, GOOD, type TimeSignal, timeItems } from '../../support/time-items.js';

/**
 * An OTLP time is a uint64 of nanoseconds. A finite HrTime before 1970 or from 2^64 ns on (2554)
 * is none: the official serializers write it as a negative or 20-digit-plus decimal in OTLP/JSON
 * (no OTLP reader takes it) and as other bits in protobuf. Before, OTLP/protobuf kept its low 64
 * bits (a wrong time, silently), OTLP/JSON the decimal, Parquet a negative timestamp or a refusal.
 * Every format now refuses it alike, with its export.
 */

const { span, logRecord, gauge, cases } = timeItems('time-range');
const BAD: HrTime[] = [
  [18_446_744_073, 709_551_616], // 2^64 ns exactly
  [18_446_744_074, 0],
  [1e21, 7],
  [-1, 0],
  [0, -5],
  [GOOD[0], -2e19],
];
const refusal = (t: HrTime) =>
  `HrTime [${t[0]}, ${t[1]}] is outside what an OTLP time holds: uint64 nanoseconds, 1970-01-01T00:00:00Z to 2554-07-21T23:34:33.709551615Z`;
const CASES = cases(BAD);

describe.each(CASES)('$signal, $field time $bad', ({ signal, bad, item }) => {
  test.each(['otlp-json', 'otlp-proto', 'parquet'] as const)('%s records refuse it', (format) => {
    expect(() => encoder(signal as TimeSignal, format)(item)).toThrow(refusal(bad));
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
