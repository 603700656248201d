import type { HrTime } from '@opentelemetry/api';
import { JsonLogsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { decodeStoredObjectAsync } from '../../../src/reader/decode-object.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { tracesExport } from '../../../src/signals/traces/export.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { captureDiag } from '../../support/diag-capture.js';
import { handBuiltSpan } from '../../support/readable-span.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { TRACES } from '../../support/signal-driver.js';

const logged = captureDiag();

/**
 * Times OTLP holds (uint64 nanoseconds) and a Parquet timestamp (signed INT64) does not: at or
 * past 2^63 ns, 2262-04-11T23:47:16.854775808Z. A batch holding one is not made a Parquet file
 * with the time wrapped: it is stored as its OTLP/JSON records (the fallback), which must carry
 * the times the official OTLP/JSON serializer writes.
 */

const S = 1_764_480_000; // 2025-11-30T05:20:00Z
const resource = resourceFromAttributes({ 'service.name': 'late' });
const instrumentationScope = { name: 'late-scope' };

function span(i: number, startTime: HrTime, endTime: HrTime, eventTimes: HrTime[] = []) {
  return handBuiltSpan({
    name: `span-${i}`,
    spanContext: () => ({
      traceId: `${i}`.padStart(32, '0'),
      spanId: `${i}`.padStart(16, '0'),
      traceFlags: 1,
    }),
    startTime,
    endTime,
    events: eventTimes.map((time, e) => ({ name: `event-${e}`, time, attributes: {} })),
    resource,
    instrumentationScope,
  });
}

const SPANS_LATE: ReadableSpan[] = [
  span(0, [S, 1], [S, 2]), // every time fits
  span(1, [9_300_000_000, 5], [9_300_000_001, 7], [[9_300_000_000, 500]]), // start past 2^63
  span(2, [S, 0], [9_300_000_002, 0]), // only the end past 2^63
  span(3, [1, 0], [18_000_000_000, 0]), // a duration past INT64 too
  span(4, [S, 3], [S, 4], [[9_223_372_036, 854_775_808]]), // an event at 2^63 exactly
];

interface OtlpSpan {
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  events?: { timeUnixNano: string }[];
}

/** Each span's times, by name, from a request's OTLP/JSON. */
function spanTimes(requests: { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }[]) {
  const spans = requests.flatMap((r) =>
    r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)),
  );
  return Object.fromEntries(
    spans.map((s) => [
      s.name,
      [s.startTimeUnixNano, s.endTimeUnixNano, ...(s.events ?? []).map((e) => e.timeUnixNano)],
    ]),
  );
}

test('spans with a time past 2^63 ns: no Parquet file, and the fallback keeps the official times', async () => {
  const builders = spanColumnBuilders();
  builders.append(SPANS_LATE, newTally(false));
  const sealed = builders.seal();
  await expect(flatEncoder(SPANS)(sealed, { compression: 'none' })).rejects.toThrow(
    'Timestamp 9300000000000000005 is past the latest time a Parquet timestamp holds (9223372036854775807 ns, 2262-04-11T23:47:16.854775807Z)',
  );
  const records = await tracesExport.columnsAsRecords(sealed);
  const fallback = spanTimes([{ resourceSpans: records.map((r) => JSON.parse(r.toString())) }]);
  const official = spanTimes([
    JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(SPANS_LATE) ?? []).toString()),
  ]);
  expect(Object.keys(official)).toHaveLength(SPANS_LATE.length);
  expect(fallback).toEqual(official);
});

test('log records with a time past 2^63 ns: no Parquet file, and the fallback keeps the official times', async () => {
  const record = (i: number, hrTime: HrTime) =>
    ({
      hrTime,
      hrTimeObserved: hrTime,
      body: `record-${i}`,
      attributes: {},
      droppedAttributesCount: 0,
      resource,
      instrumentationScope,
    }) as unknown as ReadableLogRecord;
  const records = [record(0, [S, 9]), record(1, [9_300_000_000, 123]), record(2, [S, 10])];
  const builders = logColumnBuilders();
  builders.append(records, newTally(false));
  const sealed = builders.seal();
  await expect(flatEncoder(LOG_RECORDS)(sealed, { compression: 'none' })).rejects.toThrow(
    /^Timestamp 9300000000000000123 is past the latest time a Parquet timestamp holds/,
  );
  const times = (
    resourceLogs: {
      scopeLogs: { logRecords: { body: { stringValue: string }; timeUnixNano: string }[] }[];
    }[],
  ) =>
    Object.fromEntries(
      resourceLogs.flatMap((r) =>
        r.scopeLogs.flatMap((s) => s.logRecords.map((l) => [l.body.stringValue, l.timeUnixNano])),
      ),
    );
  const fallback = times(
    (await logsExport.columnsAsRecords(sealed)).map((r) => JSON.parse(r.toString())),
  );
  const official = times(
    JSON.parse(Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? []).toString())
      .resourceLogs,
  );
  expect(Object.keys(official)).toHaveLength(records.length);
  expect(fallback).toEqual(official);
});

test('a span past 2^64 ns (no OTLP time either) is refused with its export; the batch stays as it was', async () => {
  const builders = spanColumnBuilders();
  const tooLate = [
    span(5, [9_300_000_000, 0], [9_300_000_000, 1]),
    span(6, [18_500_000_000, 0], [18_500_000_000, 0]),
  ];
  expect(() => builders.append(tooLate, newTally(false))).toThrow(
    'HrTime [18500000000, 0] is outside what an OTLP time holds: uint64 nanoseconds, 1970-01-01T00:00:00Z to 2554-07-21T23:34:33.709551615Z',
  );
  // The late span of the refused export went with it: the batch is not late, its file is made.
  builders.append([span(7, [S, 5], [S, 6])], newTally(false));
  const file = await flatEncoder(SPANS)(builders.seal(), { compression: 'none' });
  expect(Buffer.from(file.subarray(0, 4)).toString()).toBe('PAR1');
});

test('the exporter stores a late batch of spans as OTLP/JSON, says why, and drops nothing', async () => {
  const s3 = new ScriptedS3();
  const exporter = scriptedExporter(s3, { format: 'parquet' }, TRACES);
  try {
    const result = await new Promise<{ code: number }>((resolve) =>
      exporter.export(SPANS_LATE, resolve),
    );
    expect(result.code).toBe(0);
    await exporter.forceFlush();
    const [key] = [...s3.stored.keys()];
    expect(key).toMatch(/\/traces_[0-9a-f-]{36}\.json$/);
    const decoded = await decodeStoredObjectAsync(
      key ?? '',
      s3.stored.get(key ?? '') ?? Buffer.alloc(0),
    );
    const official = spanTimes([
      JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(SPANS_LATE) ?? []).toString()),
    ]);
    expect(spanTimes([decoded.request as never])).toEqual(official);
    expect(exporter.stats()).toMatchObject({
      exportsAccepted: 1,
      pointsDropped: 0,
      batchesUploaded: 1,
    });
    expect(
      logged.some(
        (l) =>
          l.text.includes(
            'Timestamp 9300000000000000005 is past the latest time a Parquet timestamp holds',
          ) && l.text.includes('as its records, uncompressed (.json)'),
      ),
    ).toBe(true);
  } finally {
    await exporter.shutdown();
  }
});
