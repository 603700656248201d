import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  type Attributes,
  context,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { S3LogRecordExporter, S3SpanExporter } from '../../src/index.js';
import { logRecordRows, readLogRecords, readSpans, spanRows } from '../../src/reader.js';
import { documentedQuery } from '../support/documented-query.js';
import { duckdbRows } from '../support/duckdb.js';
import { oneBatchLoggers, oneBatchTracerProvider } from '../support/one-batch-providers.js';
import { type LogRow, logRow, Recording, type SpanRow, spanRow } from '../support/otel-rows.js';
import { connection, describeS3, listAndFetch, withS3 } from '../support/s3.js';
import { inSpanContext, remoteParentContext, TRACE_ID } from '../support/trace-context.js';

/**
 * Spans and log records made by the SDK (BatchSpanProcessor, BatchLogRecordProcessor) go through
 * the exporters with format 'parquet' into the real S3 server. DuckDB, pyarrow and Polars read the stored
 * files back as the `otel_traces` and `otel_logs` tables, and every row is what the test spelled
 * from the ReadableSpans and log records the processors handed over (the ClickHouse exporter's
 * spelling, support/otel-rows.ts: hex ids, kinds and status codes as words, attribute values as
 * text); a lookup by TraceId returns exactly that trace's spans; this package's reader reads the
 * objects too.
 */

const run = promisify(execFile);
const RESOURCE = resourceFromAttributes({
  'service.name': 'checkout',
  'host.name': 'node-1',
  'process.pid': 4242,
});
const attributes = (i: number): Attributes => ({
  'http.request.method': 'GET',
  'http.response.status_code': 200 + i,
  'url.full': 'https://example.com/a?b="c"&d=é 💥',
  ratio: 0.25,
  big: 2 ** 60,
  flag: i % 2 === 0,
  list: ['a', 'b'],
});

/** 24 spans in 6 traces: kinds, statuses, events and links, a remote parent. */
async function produceSpans(exporter: Recording<ReadableSpan, SpanRow>): Promise<void> {
  const provider = oneBatchTracerProvider(RESOURCE, exporter);
  const tracers = [provider.getTracer('http', '1.2.3'), provider.getTracer('db')];
  const kinds = [SpanKind.SERVER, SpanKind.CLIENT, SpanKind.INTERNAL];
  for (let t = 0; t < 6; t++) {
    const tracer = tracers[t % 2] as (typeof tracers)[number];
    const root = tracer.startSpan(
      `GET /item/${t}`,
      {
        kind: kinds[t % 3],
        attributes: attributes(t),
        links:
          t % 2 === 0
            ? [
                {
                  context: {
                    traceId: 'ffffffffffffffffffffffffffffff00',
                    spanId: '00000000000000ff',
                    traceFlags: TraceFlags.NONE,
                  },
                  attributes: { 'link.reason': 'retry', attempt: t },
                },
              ]
            : [],
      },
      t === 5 ? remoteParentContext() : undefined,
    );
    const inRoot = trace.setSpan(context.active(), root);
    for (let c = 0; c < 3; c++) {
      const child = tracer.startSpan(`step ${c}`, { attributes: { step: c } }, inRoot);
      if (c === 1) child.addEvent('exception', { 'exception.message': 'boom "x"', count: c });
      if (c === 2) child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed: 💥' });
      child.end();
    }
    root.addEvent('done');
    root.setStatus({ code: t % 3 === 0 ? SpanStatusCode.OK : SpanStatusCode.UNSET });
    root.end();
  }
  await provider.forceFlush();
  await provider.shutdown();
}

/** 30 log records: bodies of several types, severities, in and out of a span, event names. */
async function produceLogs(exporter: Recording<ReadableLogRecord, LogRow>): Promise<void> {
  const { provider, loggers } = oneBatchLoggers(RESOURCE, exporter);
  const bodies: unknown[] = ['a plain message', 'quotes " and \n 😀', 42, true, ['a', 'b']];
  for (let i = 0; i < 30; i++) {
    const logger = loggers[i % 2] as (typeof loggers)[number];
    logger.emit({
      body: bodies[i % bodies.length] as string,
      severityNumber: [9, 17, 5][i % 3],
      severityText: ['INFO', 'ERROR', 'DEBUG'][i % 3],
      ...(i % 4 === 0 ? { eventName: `event.${i}` } : {}),
      attributes: attributes(i),
      ...(i % 2 === 0 ? { context: inSpanContext() } : {}),
    });
  }
  await provider.forceFlush();
  await provider.shutdown();
}

/**
 * pyarrow's rows of the files: timestamps and INT64 as decimal strings, maps as [key, value] pairs.
 * Timestamps are cast to their int64 nanoseconds before as_py(): without pandas, pyarrow cannot
 * make a Python datetime of a nanosecond that is not a whole microsecond.
 */
const PYARROW_ROWS = `
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
def ints(t):
    if pa.types.is_timestamp(t): return pa.int64()
    if pa.types.is_list(t):
        f = t.value_field
        return pa.list_(pa.field(f.name, ints(f.type), f.nullable))
    return t
def spell(v, t):
    if v is None: return None
    if pa.types.is_map(t): return [[k, spell(x, t.item_type)] for k, x in v]
    if pa.types.is_list(t): return [spell(x, t.value_type) for x in v]
    if pa.types.is_timestamp(t) or pa.types.is_int64(t): return str(v)
    return v
rows = []
for path in sys.argv[1:]:
    table = pq.read_table(path)
    types = {f.name: f.type for f in table.schema}
    columns = {n: table.column(n).cast(ints(types[n])) for n in table.column_names}
    for i in range(table.num_rows):
        rows.append({n: spell(columns[n][i].as_py(), types[n]) for n in table.column_names})
print(json.dumps(rows))
`;

/** pyarrow's rows of the files at `paths` (PYARROW_ROWS, in the integration setup's Python). */
async function pyarrowRows(paths: string[]): Promise<Record<string, unknown>[]> {
  const pyarrow = inject('pyarrow'); // the integration setup's (test/support/pyarrow-python.ts)
  if (!('python' in pyarrow)) throw new Error(pyarrow.unavailable);
  const { stdout } = await run(pyarrow.python, ['-c', PYARROW_ROWS, ...paths], {
    maxBuffer: 1 << 26,
  });
  return JSON.parse(stdout) as Record<string, unknown>[];
}

/**
 * Polars' rows of the files: timestamps (nanoseconds) and INT64 as decimal strings (Polars gives
 * 64-bit integers as doubles), maps (lists of key/value structs) as [key, value] pairs.
 */
function polarsRows(paths: string[], timestamps: string[], integers: string[]) {
  const pairs = (v: unknown): unknown =>
    Array.isArray(v) && v.every((e) => typeof e === 'object' && e !== null && 'key' in e)
      ? v.map((e: { key: string; value: unknown }) => [e.key, e.value])
      : Array.isArray(v)
        ? v.map(pairs)
        : v;
  return paths.flatMap((path) => {
    const frame = pl.readParquet(path);
    const text = frame.select(
      ...frame.columns.map((c) => {
        if (timestamps.includes(c)) return pl.col(c).cast(pl.Int64).cast(pl.Utf8);
        if (c === 'Events.Timestamp')
          return pl.col(c).cast(pl.List(pl.Int64)).cast(pl.List(pl.Utf8));
        if (integers.includes(c)) return pl.col(c).cast(pl.Utf8);
        return pl.col(c);
      }),
    );
    return (text.toRecords() as Record<string, unknown>[]).map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, pairs(v)])),
    );
  });
}

/** Values as this test compares them: bigints as decimal strings, pairs as arrays. */
const plain = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)));
const byKey = <T extends Record<string, unknown>>(rows: T[], key: (r: T) => string) =>
  rows.toSorted((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/** `pick` of the recorded rows of trace `traceId`, sorted. */
const traceValues = <R extends { TraceId: string }>(
  rows: R[],
  traceId: string,
  pick: (r: R) => string,
) =>
  rows
    .filter((r) => r.TraceId === traceId)
    .map(pick)
    .toSorted();

const DOCS = new URL('../../docs/parquet.md', import.meta.url);

/** A documented query, run verbatim in DuckDB with the mirror of the bucket's `lake/` as its directory. */
async function docsQuery(name: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  try {
    await connection.run(`SET file_search_path = '${join(dir, 'lake')}'`);
    const sql = await documentedQuery(DOCS, name);
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'otel-s3-lake-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Every file's TraceId chunks have a bloom filter that DuckDB reads (parquet_bloom_probe): the
 * file holding `present` lets it through, and of twenty ids no file holds, DuckDB rules most out
 * in every file (a filter that lets everything through would rule none out).
 */
async function traceIdBloomFilters(paths: string[], present: string) {
  for (const path of paths) {
    const meta = await duckdbRows(
      `SELECT path_in_schema FROM parquet_metadata('${path}') WHERE bloom_filter_offset IS NOT NULL`,
    );
    const groups = await duckdbRows(
      `SELECT DISTINCT row_group_id FROM parquet_metadata('${path}')`,
    );
    expect(meta.map((m) => m.path_in_schema)).toEqual(groups.map(() => 'TraceId'));
  }
  const probe = async (id: string) =>
    duckdbRows(
      paths
        .map(
          (p) =>
            `SELECT bloom_filter_excludes AS out FROM parquet_bloom_probe('${p}', 'TraceId', '${id}')`,
        )
        .join(' UNION ALL '),
    );
  // The lookups above found the id's rows: some file's filter lets it through.
  const letThrough = (await probe(present)).filter((r) => r.out === false).length;
  expect(letThrough).toBeGreaterThanOrEqual(1);
  let excluded = 0;
  let probes = 0;
  for (let i = 0; i < 20; i++) {
    const absent = `${i.toString(16).padStart(2, '0')}${'e'.repeat(30)}`;
    for (const r of await probe(absent)) {
      probes++;
      if (r.out === true) excluded++;
    }
  }
  expect(excluded).toBeGreaterThan(probes / 2);
}

describeS3('spans and log records as Parquet, through the SDK into a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  withS3('parquet-traces-logs', (s) => ({ client, bucket } = s));

  /** The stored objects, mirrored under `dir`; their paths. */
  async function mirror(prefix: string): Promise<string[]> {
    const objects = await listAndFetch(client, bucket, `${prefix}/`);
    const paths: string[] = [];
    for (const o of objects) {
      expect(o.key).toMatch(
        /^lake\/(traces|logs)\/year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d\/\1_[^/]+\.parquet$/,
      );
      const path = join(dir, o.key);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, o.bytes);
      paths.push(path);
    }
    return paths;
  }

  test('spans: DuckDB, pyarrow and Polars read what the SDK recorded; a TraceId lookup finds its trace', async () => {
    // One prefix for every signal, as the README's Quick start has it: each signal's Parquet
    // files are one table in a folder of their own, which Athena, Trino and Hive need.
    const prefix = 'lake';
    const s3 = new S3SpanExporter({ bucket, prefix, ...connection(), format: 'parquet' });
    const recording = new Recording<ReadableSpan, SpanRow>(s3, (s) => spanRow(s));
    await produceSpans(recording);
    expect(recording.rows).toHaveLength(24);
    expect(s3.stats()).toMatchObject({ pointsUploaded: 24, pointsDropped: 0 });
    const paths = await mirror(`${prefix}/traces`);
    expect(paths.length).toBeGreaterThan(0);
    const glob = `${dir}/${prefix}/traces/**/*.parquet`;
    const expected = byKey(plain(recording.rows) as Record<string, unknown>[], (r) =>
      String(r.SpanId),
    );

    // DuckDB: timestamps as it reads them (microseconds: a TIMESTAMP WITH TIME ZONE), the rest exact.
    const duck = await duckdbRows(
      `SELECT * REPLACE (epoch_us("Timestamp")::VARCHAR AS "Timestamp",
         "Duration"::VARCHAR AS "Duration",
         list_transform("Events.Timestamp", t -> epoch_us(t)::VARCHAR) AS "Events.Timestamp",
         list_transform(map_entries("ResourceAttributes"), e -> [e.key, e.value]) AS "ResourceAttributes",
         list_transform(map_entries("SpanAttributes"), e -> [e.key, e.value]) AS "SpanAttributes",
         list_transform("Events.Attributes", m -> list_transform(map_entries(m), e -> [e.key, e.value])) AS "Events.Attributes",
         list_transform("Links.Attributes", m -> list_transform(map_entries(m), e -> [e.key, e.value])) AS "Links.Attributes")
       FROM read_parquet('${glob}', hive_partitioning = false)`,
    );
    const micros = (ns: unknown) => String(BigInt(ns as string) / 1000n);
    expect(byKey(duck, (r) => String(r.SpanId))).toEqual(
      expected.map((r) => ({
        ...r,
        Timestamp: micros(r.Timestamp),
        'Events.Timestamp': (r['Events.Timestamp'] as string[]).map(micros),
      })),
    );

    // pyarrow: every value exact, nanoseconds included.
    expect(byKey(await pyarrowRows(paths), (r) => String(r.SpanId))).toEqual(expected);

    // Polars: every value exact too.
    expect(byKey(polarsRows(paths, ['Timestamp'], ['Duration']), (r) => String(r.SpanId))).toEqual(
      expected,
    );

    // A lookup by TraceId returns exactly the spans of that trace.
    const traceId = (recording.rows[5] as SpanRow).TraceId;
    const found = await duckdbRows(
      `SELECT "SpanId" FROM read_parquet('${glob}') WHERE "TraceId" = '${traceId}'`,
    );
    expect(found.map((r) => r.SpanId).toSorted()).toEqual(
      traceValues(recording.rows, traceId, (r) => r.SpanId),
    );
    expect(found).toHaveLength(4);
    await traceIdBloomFilters(paths, traceId);
    // The error spans of one service.
    const errors = await duckdbRows(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${glob}') WHERE "ServiceName" = 'checkout' AND "StatusCode" = 'Error'`,
    );
    expect(errors).toEqual([{ n: recording.rows.filter((r) => r.StatusCode === 'Error').length }]);

    // The documented queries, verbatim: the trace of the remote parent, the error spans.
    const ofTrace = recording.rows
      .filter((r) => r.TraceId === TRACE_ID)
      .sort((a, b) =>
        a.Timestamp < b.Timestamp
          ? -1
          : a.Timestamp > b.Timestamp
            ? 1
            : a.SpanId < b.SpanId
              ? -1
              : 1,
      );
    expect(ofTrace).toHaveLength(4);
    const traceRows = await docsQuery('trace-spans');
    expect(traceRows.map((r) => [r.SpanName, r.SpanId, r.ParentSpanId, r.Duration])).toEqual(
      ofTrace.map((r) => [r.SpanName, r.SpanId, r.ParentSpanId, String(r.Duration)]),
    );
    const errorRows = await docsQuery('error-spans');
    expect(errorRows.map((r) => [r.TraceId, r.SpanName, r.StatusMessage]).toSorted()).toEqual(
      recording.rows
        .filter((r) => r.StatusCode === 'Error')
        .map((r) => [r.TraceId, r.SpanName, r.StatusMessage])
        .toSorted(),
    );

    // This package's reader reads the objects back: the same spans, ids and times.
    const rows = [];
    for await (const object of readSpans({ dir, prefix })) rows.push(...spanRows(object.request));
    expect(rows.map((r) => [r.spanId, r.traceId, r.parentSpanId, r.name]).toSorted()).toEqual(
      recording.rows.map((r) => [r.SpanId, r.TraceId, r.ParentSpanId, r.SpanName]).toSorted(),
    );
  });

  test('log records: DuckDB, pyarrow and Polars read what the SDK recorded', async () => {
    // One prefix for every signal, as the README's Quick start has it: each signal's Parquet
    // files are one table in a folder of their own, which Athena, Trino and Hive need.
    const prefix = 'lake';
    const s3 = new S3LogRecordExporter({ bucket, prefix, ...connection(), format: 'parquet' });
    const recording = new Recording<ReadableLogRecord, LogRow>(s3, logRow);
    await produceLogs(recording);
    expect(recording.rows).toHaveLength(30);
    expect(s3.stats()).toMatchObject({ pointsUploaded: 30, pointsDropped: 0 });
    const paths = await mirror(`${prefix}/logs`);
    const glob = `${dir}/${prefix}/logs/**/*.parquet`;
    // Records have no id: compare in (Timestamp, Body, attributes) order.
    const key = (r: Record<string, unknown>) =>
      `${r.Timestamp}|${JSON.stringify(r.LogAttributes)}|${r.Body}|${r.ScopeName}`;
    const expected = byKey(plain(recording.rows) as Record<string, unknown>[], key);

    const duck = await duckdbRows(
      `SELECT * REPLACE (epoch_ns("Timestamp")::VARCHAR AS "Timestamp",
         list_transform(map_entries("ResourceAttributes"), e -> [e.key, e.value]) AS "ResourceAttributes",
         list_transform(map_entries("ScopeAttributes"), e -> [e.key, e.value]) AS "ScopeAttributes",
         list_transform(map_entries("LogAttributes"), e -> [e.key, e.value]) AS "LogAttributes")
       FROM read_parquet('${glob}', hive_partitioning = false)`,
    );
    const micros = (ns: unknown) => String((BigInt(ns as string) / 1000n) * 1000n);
    expect(byKey(duck, key)).toEqual(
      byKey(
        expected.map((r) => ({ ...r, Timestamp: micros(r.Timestamp) })),
        key,
      ),
    );

    expect(byKey(await pyarrowRows(paths), key)).toEqual(expected);
    expect(byKey(polarsRows(paths, ['Timestamp'], []), key)).toEqual(expected);

    // The log records of one trace.
    const traceId = (recording.rows[0] as LogRow).TraceId;
    const inTrace = await duckdbRows(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${glob}') WHERE "TraceId" = '${traceId}'`,
    );
    expect(inTrace).toEqual([{ n: recording.rows.filter((r) => r.TraceId === traceId).length }]);
    await traceIdBloomFilters(paths, traceId);

    // The documented query of one trace's log records, verbatim.
    const traceLogs = await docsQuery('trace-logs');
    expect(traceLogs.map((r) => r.Body).toSorted()).toEqual(
      traceValues(recording.rows, TRACE_ID, (r) => r.Body),
    );
    expect(traceLogs).toHaveLength(15);

    const rows = [];
    for await (const object of readLogRecords({ dir, prefix })) {
      rows.push(...logRecordRows(object.request));
    }
    expect(rows).toHaveLength(30);
  });
});
