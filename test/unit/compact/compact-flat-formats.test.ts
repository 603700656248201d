import { join } from 'node:path';
import { context, createTraceState, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { beforeEach, describe, expect, test } from 'vitest';
import { compactLogRecords, compactSpans } from '../../../src/compact/index.js';
import { S3LogRecordExporter, S3SpanExporter } from '../../../src/index.js';
import { dirClient, keysIn } from '../../support/compaction-dir.js';
import { duckdbRows } from '../../support/duckdb.js';
import { ONE_BATCH, oneBatchTracerProvider } from '../../support/one-batch-providers.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

/**
 * The same SDK spans and log records, of values the common tests do not make (trace states of
 * spans and links, a text past 64 KiB, empty names and maps, attribute values of every kind,
 * bodies of every AnyValue type, a scope's schema URL, trace flags), exported as
 * Parquet, OTLP/JSON and OTLP protobuf and compacted: every column of the outputs, as DuckDB
 * reads them, is the same whatever the inputs' format (the compaction's OTLP rows are the
 * exporter's Parquet rows). Span ids are random: they are compared blank.
 */

const FORMATS = ['parquet', 'otlp-json', 'otlp-proto'] as const;
type Format = (typeof FORMATS)[number];

/** `offsetNanos` into minute 5 of the hour. */
const at = (offsetNanos: number): [number, number] => {
  const ns = BigInt(HOUR + 5 * 60_000) * 1_000_000n + BigInt(offsetNanos);
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
};

const ODD = {
  constructor: 'c',
  toString: 'not a function',
  long: `${'x'.repeat(70_000)}é`,
  empty: [],
  holes: ['a', null, 'b'] as unknown as string[],
  nan: Number.NaN,
  inf: Number.NEGATIVE_INFINITY,
  negZero: -0,
  large: 2 ** 60,
  yes: true,
};

const connection = (dir: string, format: Format) => ({
  s3Client: dirClient(dir),
  bucket: 'b',
  prefix: 'p',
  format,
  partitionTime: 'data' as const,
  maxBatchAgeMillis: 3_600_000,
});

const parentOf = (traceId: string) =>
  trace.setSpanContext(context.active(), {
    traceId,
    spanId: 'bbbbbbbbbbbbbbbb',
    traceFlags: TraceFlags.SAMPLED,
    traceState: createTraceState('k1=v1,k2=v2'),
    isRemote: true,
  });

async function exportSpans(dir: string, format: Format): Promise<void> {
  const s3 = new S3SpanExporter(connection(dir, format));
  const resource = resourceFromAttributes({ 'service.name': 'svc', ...ODD });
  const provider = oneBatchTracerProvider(resource, s3);
  const tracer = provider.getTracer('t', '1');
  const links = [
    {
      context: { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 },
      attributes: ODD,
    },
    {
      context: {
        traceId: `${'c'.repeat(31)}e`,
        spanId: 'd'.repeat(16),
        traceFlags: 0,
        traceState: createTraceState('l=1'),
      },
    },
  ];
  const span = tracer.startSpan(
    'odd',
    { kind: SpanKind.PRODUCER, startTime: at(1), attributes: ODD, links },
    parentOf('a'.repeat(32)),
  );
  span.addEvent('e1', ODD, at(2));
  span.addEvent('', {}, at(0));
  span.setStatus({ code: 1, message: '' });
  span.end(at(5_000_000_000_000)); // 83 minutes: the next hour
  const empty = tracer.startSpan('', { startTime: at(3) }, parentOf('f'.repeat(32)));
  empty.end(at(3));
  await provider.forceFlush();
  await s3.forceFlush();
  await provider.shutdown();
  await s3.shutdown();
}

async function exportLogs(dir: string, format: Format): Promise<void> {
  const s3 = new S3LogRecordExporter(connection(dir, format));
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'svc', ...ODD }),
    processors: [new BatchLogRecordProcessor({ exporter: s3, ...ONE_BATCH })],
  });
  const logger = provider.getLogger('app', '1.0.0', { schemaUrl: 'https://example.com/schema/1' });
  const bodies: unknown[] = [
    new Uint8Array([0, 1, 255]),
    { a: { b: [1, null, 'x'] }, '': '' },
    {},
    [],
    '',
    null,
    undefined,
    1.5,
    -0,
    2 ** 60,
    Number.NaN,
    [new Uint8Array([1])],
    ODD.long,
  ];
  bodies.forEach((body, i) => {
    const inSpan =
      i % 2 === 0
        ? trace.setSpanContext(context.active(), {
            traceId: 'a'.repeat(32),
            spanId: 'b'.repeat(16),
            traceFlags: i % 4 === 0 ? TraceFlags.SAMPLED : TraceFlags.NONE,
          })
        : undefined;
    logger.emit({
      timestamp: at(i),
      observedTimestamp: at(100 + i),
      body: body as string,
      ...(i % 3 === 0 ? { severityText: 'Warning' } : { severityNumber: i }),
      attributes: ODD,
      ...(i % 5 === 0 ? { eventName: `event.${i}` } : {}),
      ...(inSpan === undefined ? {} : { context: inSpan }),
    });
  });
  await provider.forceFlush();
  await s3.forceFlush();
  await provider.shutdown();
  await s3.shutdown();
}

/** Every column of the hour's one output, a JSON text a row, sorted; SpanId blank. */
async function outputRows(dir: string): Promise<string[]> {
  const outputs = (await keysIn(dir)).filter((k) => k.endsWith('.compacted.parquet'));
  expect(outputs).toHaveLength(1);
  const path = join(dir, outputs[0] as string);
  const rows = await duckdbRows(`SELECT * FROM read_parquet('${path}', hive_partitioning = false)`);
  // A span's id is random; a log record's is the test's.
  const blank = (r: Record<string, unknown>) => ('SpanName' in r ? { ...r, SpanId: '' } : r);
  return rows.map((r) => JSON.stringify(blank(r))).sort();
}

describe('spans and log records compacted from each format into the same rows', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-compact-formats-', (path) => (root = path)));

  const cases = [
    { name: 'spans', exportTo: exportSpans, compact: compactSpans, items: 2 },
    { name: 'log records', exportTo: exportLogs, compact: compactLogRecords, items: 13 },
  ];
  for (const c of cases) {
    test(`${c.name}: Parquet, OTLP/JSON and OTLP protobuf inputs of odd values give equal outputs`, async () => {
      const rows: Record<string, string[]> = {};
      for (const format of FORMATS) {
        const dir = join(root, format);
        await c.exportTo(dir, format);
        const report = await c.compact({
          dir,
          prefix: 'p',
          settleMillis: 0,
          from: new Date(HOUR),
        });
        expect(report.partitions.map((p) => [p.status, p.read.points, p.skipped])).toEqual([
          ['compacted', c.items, []],
        ]);
        rows[format] = await outputRows(dir);
      }
      expect(rows['otlp-json']).toEqual(rows.parquet);
      expect(rows['otlp-proto']).toEqual(rows.parquet);
    });
  }
});
