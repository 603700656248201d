import { join } from 'node:path';
import type { HrTime } from '@opentelemetry/api';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { beforeAll, describe, expect, test } from 'vitest';
import { objectName } from '../../../src/layout/formats.js';
import {
  InvalidOptionError,
  type LogRecordRow,
  listSpanObjects,
  logRecordRows,
  readLogRecords,
  readMetrics,
  readSpans,
  readStoredObjects,
  type SpanRow,
  spanRows,
  type UnreadableObject,
} from '../../../src/reader.js';
import {
  COMPRESSIONS,
  collect,
  encodeObject,
  FORMATS,
  hrTimeNanos,
  keyAt,
  sampleMetrics,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import {
  encodeLogRecords,
  encodeSpans,
  type RecordedTrace,
  recordTrace,
  signalKeyAt,
} from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0, timesAfter } from '../../support/time.js';

const at = timesAfter(READER_T0);

let recorded: RecordedTrace;
let dir: string;
beforeAll(async () => {
  recorded = await recordTrace();
  dir = await makeTempDir('otel-s3-read-signals-');
  return () => removeDir(dir);
});

/** Decimal nanoseconds as ISO 8601 with nine digits, worked out here, not by src/. */
function iso(time: HrTime): string {
  const ns = BigInt(hrTimeNanos(time));
  const ms = Number(ns / 1_000_000n);
  return `${new Date(ms).toISOString().slice(0, 19)}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}Z`;
}
const KINDS = ['internal', 'server', 'client', 'producer', 'consumer'];
const STATUSES = ['unset', 'ok', 'error'];

/** The row each recorded span must read back as (the fields the SDK gave it). */
function expectedSpan(span: ReadableSpan): Partial<SpanRow> {
  const ns = (t: HrTime) => BigInt(hrTimeNanos(t));
  return {
    time: iso(span.startTime),
    end: iso(span.endTime),
    duration: Number(ns(span.endTime) - ns(span.startTime)) / 1e6,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    name: span.name,
    kind: KINDS[span.kind] as SpanRow['kind'],
    status: STATUSES[span.status.code] as SpanRow['status'],
    statusMessage: span.status.message ?? '',
    service: String(span.resource.attributes['service.name']),
    scope: span.instrumentationScope.name,
    attributes: span.attributes as SpanRow['attributes'],
  };
}

function expectedLog(record: ReadableLogRecord): Partial<LogRecordRow> {
  return {
    time: iso(record.hrTime),
    observedTime: iso(record.hrTimeObserved),
    severityNumber: record.severityNumber ?? 0,
    body: (record.body ?? null) as LogRecordRow['body'],
    traceId: record.spanContext?.traceId ?? '',
    spanId: record.spanContext?.spanId ?? '',
    service: String(record.resource.attributes['service.name']),
    attributes: record.attributes as LogRecordRow['attributes'],
  };
}

const pick = <T extends object>(row: T, like: Partial<T>): Partial<T> =>
  Object.fromEntries(Object.keys(like).map((k) => [k, row[k as keyof T]])) as Partial<T>;

/**
 * Each object's rows, in the order of their `key` field (a request groups them by resource and
 * scope), against `wanted` (the rows as recorded) on the fields those have; each object's rows.
 */
function expectEachObject<Q, K extends string, R extends Partial<Record<K, string>>>(
  objects: readonly { key: string; request: Q }[],
  rowsOf: (request: Q) => R[],
  recorded: Partial<R>[],
  key: K,
): R[][] {
  const inOrder = <T extends Partial<Record<K, string>>>(rows: T[]) =>
    rows.toSorted((a, b) => ((a[key] ?? '') < (b[key] ?? '') ? -1 : 1));
  const wanted = inOrder(recorded);
  return objects.map((object) => {
    const rows = inOrder(rowsOf(object.request));
    expect(
      rows.map((row, n) => pick(row, wanted[n] ?? {})),
      object.key,
    ).toEqual(wanted);
    return rows;
  });
}

describe('readSpans and readLogRecords', () => {
  test('read every format and compression to what the SDK recorded; each signal only its own', async () => {
    const root = join(dir, 'all');
    const spanKeys: string[] = [];
    const logKeys: string[] = [];
    let i = 0;
    const rm = await sampleMetrics('svc');
    for (const format of FORMATS) {
      for (const compression of COMPRESSIONS) {
        const { extension } = objectName(format, compression);
        const spanKey = signalKeyAt('traces', format, 'prod', at(i++ * 1000), extension);
        await writeAtKey(root, spanKey, encodeSpans(recorded.spans, format, compression));
        spanKeys.push(spanKey);
        const logKey = signalKeyAt('logs', format, 'prod', at(i++ * 1000), extension);
        await writeAtKey(root, logKey, encodeLogRecords(recorded.logs, format, compression));
        logKeys.push(logKey);
        const metricKey = keyAt('prod', at(i++ * 1000), extension);
        await writeAtKey(root, metricKey, encodeObject(rm, format, compression));
      }
    }

    const spans = readSpans({ dir: root, prefix: 'prod' });
    const spanObjects = await collect(spans);
    expect(spanObjects.map((o) => [o.key, o.signal])).toEqual(spanKeys.map((k) => [k, 'traces']));
    // Compared in span id order.
    for (const rows of expectEachObject(
      spanObjects,
      spanRows,
      recorded.spans.map(expectedSpan),
      'spanId',
    )) {
      const add = rows.find((r) => r.name === 'add item');
      expect(add?.events.map((e) => [e.name, e.attributes])).toEqual([
        ['exception', { 'exception.message': 'out of stock' }],
      ]);
    }
    // Another signal's objects are not keys out of the layout.
    expect(spans.stats).toMatchObject({ keysSkipped: 0, otherSignals: { metrics: 6, logs: 6 } });

    const logs = readLogRecords({ dir: root, prefix: 'prod' });
    const logObjects = await collect(logs);
    expect(logObjects.map((o) => o.key)).toEqual(logKeys);
    // Compared in time order.
    for (const rows of expectEachObject(
      logObjects,
      logRecordRows,
      recorded.logs.map(expectedLog),
      'time',
    )) {
      // Without severity text: the short name of its number.
      expect(rows.map((r) => r.severity)).toEqual(['INFO', 'ERROR', 'INFO', 'DEBUG']);
    }
    expect(logs.stats).toMatchObject({ keysSkipped: 0, otherSignals: { metrics: 6, traces: 6 } });

    const metrics = readMetrics({ dir: root, prefix: 'prod' });
    expect(await collect(metrics)).toHaveLength(6);
    expect(metrics.stats).toMatchObject({ keysSkipped: 0, otherSignals: { traces: 6, logs: 6 } });

    const all = await collect(readStoredObjects({ dir: root, prefix: 'prod' }));
    // In key order: within one minute's partition, by name.
    expect(all.map((o) => o.signal)).toEqual(
      (['logs', 'metrics', 'traces'] as const).flatMap((s) => Array(6).fill(s)),
    );
    const listed = await collect(
      listSpanObjects({ dir: root, prefix: 'prod', format: 'otlp-proto' }),
    );
    // `format` picks the layout (the OTLP formats share theirs), the extension the decoder.
    expect(listed.map((o) => o.key)).toEqual(spanKeys);
  });

  test('hostile and oversized objects are reported to onError, skipped and counted', async () => {
    const root = join(dir, 'hostile');
    const good = signalKeyAt('traces', 'otlp-json', 'p', at(0), '.json');
    await writeAtKey(root, good, encodeSpans(recorded.spans, 'otlp-json', 'none'));
    const bad = signalKeyAt('traces', 'otlp-json', 'p', at(1000), '.json.gz');
    await writeAtKey(root, bad, Buffer.from('not gzip'));
    const deep = signalKeyAt('traces', 'otlp-json', 'p', at(2000), '.json');
    const nested = `${'{"arrayValue":{"values":['.repeat(300)}${']}}'.repeat(300)}`;
    await writeAtKey(
      root,
      deep,
      Buffer.from(
        `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","attributes":[{"key":"a","value":${nested}}]}]}]}]}\n`,
      ),
    );
    const problems: UnreadableObject[] = [];
    const stream = readSpans({ dir: root, prefix: 'p', onError: (p) => problems.push(p) });
    const objects = await collect(stream);
    expect(objects.map((o) => o.key)).toEqual([good]);
    expect(problems.map((p) => [p.key, p.stage, p.signal])).toEqual([
      [bad, 'decompress', 'traces'],
      [deep, 'decode', 'traces'],
    ]);
    expect(stream.stats).toMatchObject({ objects: 3, objectsRead: 1, objectsUnreadable: 2 });

    const limited: UnreadableObject[] = [];
    const small = readSpans({
      dir: root,
      prefix: 'p',
      maxObjectBytes: 100,
      onError: (p) => limited.push(p),
    });
    expect(await collect(small)).toEqual([]);
    // Over the limit as listed, never downloaded; the small bad one fails as before.
    expect(limited.map((p) => [p.key, p.stage])).toEqual([
      [good, 'fetch'],
      [bad, 'decompress'],
      [deep, 'fetch'],
    ]);
  });

  test('a broken Parquet file of log records is reported unreadable, not taken for metrics', async () => {
    const root = join(dir, 'parquet');
    const key = signalKeyAt('logs', 'parquet', 'p', at(0), '.parquet');
    expect(key).toMatch(
      /^p\/logs\/year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d\/logs_[0-9a-f-]{36}\.parquet$/,
    );
    await writeAtKey(root, key, Buffer.from('PAR1 not really PAR1'));
    const problems: UnreadableObject[] = [];
    const stream = readLogRecords({ dir: root, prefix: 'p', onError: (p) => problems.push(p) });
    expect(await collect(stream)).toEqual([]);
    expect(problems.map((p) => [p.key, p.stage, p.signal])).toEqual([[key, 'decode', 'logs']]);
    expect(problems[0]?.error.message).toMatch(/parquet/i);
    const metrics = readMetrics({ dir: root, prefix: 'p' });
    expect(await collect(metrics)).toEqual([]);
    expect(metrics.stats).toMatchObject({ objects: 0, keysSkipped: 0, otherSignals: { logs: 1 } });
  });

  test('readStoredObjects checks its signals', () => {
    expect(() => readStoredObjects({ dir, signals: ['spans' as 'traces'] })).toThrow(
      InvalidOptionError,
    );
    expect(() => readStoredObjects({ dir, signals: [] })).toThrow(/signals/);
  });
});
