import { rm } from 'node:fs/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeEach, expect, test } from 'vitest';
import { compactLogRecords, compactSpans } from '../../src/compact/index.js';
import { logRecordRows, readLogRecords, readSpans, spanRows } from '../../src/reader.js';
import {
  batchAt,
  compactOptions,
  exportBatches,
  listing,
  mirrorOf,
} from '../support/compaction-data.js';
import { duckdbRows } from '../support/duckdb.js';
import {
  duckdbLogRows,
  duckdbSpanRows,
  exportLogBatches,
  exportSpanBatches,
  type FlatBatch,
} from '../support/flat-batches.js';
import { connection, describeS3, s3Environment, s3Server, withS3 } from '../support/s3.js';
import { SETTLED_HOUR } from '../support/time.js';

/**
 * Compaction of spans and log records against the real S3 server: what the SDK recorded goes
 * through the exporters as Parquet, each hour is compacted into one sorted file, and DuckDB and
 * this package's reader read every row exactly once, before, while both the inputs and the
 * output are stored, and after.
 */

const HOUR = SETTLED_HOUR;
const sorted = (rows: readonly string[]) => [...rows].sort();

/**
 * The TraceId bloom filters of a file, as DuckDB reads them: which row groups have one, and for
 * each id, whether some row group's filter lets it through.
 */
async function traceIdFilters(path: string, ids: readonly string[]) {
  const meta = await duckdbRows(
    `SELECT row_group_id, bloom_filter_offset FROM parquet_metadata('${path}')
     WHERE path_in_schema = 'TraceId' ORDER BY row_group_id`,
  );
  const probes = await duckdbRows(
    ids
      .map(
        (id, i) =>
          `SELECT ${i} AS i, bool_and(bloom_filter_excludes) AS excluded FROM parquet_bloom_probe('${path}', 'TraceId', '${id}')`,
      )
      .join(' UNION ALL '),
  );
  return {
    withFilter: meta.filter((m) => m.bloom_filter_offset !== null).length,
    rowGroups: meta.length,
    passed: probes.filter((p) => p.excluded === false).length,
  };
}

/** `n` trace ids no test writes (32 hex digits). */
const absentIds = (n: number) =>
  Array.from({ length: n }, (_, i) => `${(0xa5a5a5a5 + i).toString(16)}${'0'.repeat(24)}`);

describeS3('compaction of spans and log records against a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  const dirs: string[] = [];
  let prefixSeq = 0;
  let prefix: string;

  withS3('compaction-signals', (s) => ({ client, bucket } = s));
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    prefix = `s${++prefixSeq}-${Date.now().toString(36)}`;
  });

  const options = () => compactOptions(connection(), { bucket, prefix, fromMillis: HOUR });
  const keys = async (under: string) =>
    (await listing(client, bucket, `${prefix}/${under}`)).map((o) => o.key);
  const outputs = async (under: string) =>
    (await keys(under)).filter((k) => k.endsWith('.compacted.parquet'));
  /** A mirror of the prefix, for DuckDB. */
  const mirror = async () => {
    const dir = await mirrorOf(client, bucket, `${prefix}/`);
    dirs.push(dir);
    return dir;
  };
  /** Spans as this package's reader reads them (each object once, outputs for what they replace). */
  const readerSpans = async () => {
    const ids: string[] = [];
    // Every default layout (as `otel-s3 spans` reads them without --object-format).
    for await (const object of readSpans({ bucket, ...connection(), prefix })) {
      ids.push(...spanRows(object.request).map((r) => r.spanId));
    }
    return ids;
  };
  const readerLogs = async () => {
    let n = 0;
    const stream = readLogRecords({ bucket, ...connection(), prefix });
    for await (const object of stream) n += logRecordRows(object.request).length;
    return n;
  };
  const spanBatches: FlatBatch[] = [
    { service: 'web', minute: 3, items: 9, seed: 1 },
    { service: 'api', minute: 14, items: 12, seed: 2 },
    { service: 'web', minute: 27, items: 6, seed: 3 },
    { service: 'db', minute: 41, items: 9, seed: 4 },
  ];

  test('spans: an hour of Parquet files becomes one output sorted by ServiceName, StatusCode, TraceId and Timestamp, with exactly the rows the SDK recorded', async () => {
    const recorded = await exportSpanBatches({ bucket, prefix }, connection(), HOUR, spanBatches);
    const inputs = await keys('traces/');
    expect(inputs).toHaveLength(spanBatches.length);
    const spanIds = recorded.map((r) => JSON.parse(r)[2] as string);
    expect(sorted(await readerSpans())).toEqual(sorted(spanIds));

    const report = await compactSpans(options());
    expect(report.partitions.map((p) => [p.partition.slice(0, 12), p.status])).toEqual([
      ['traces/year=', 'compacted'],
    ]);
    expect(report.partitions[0]?.read.points).toBe(recorded.length);
    const written = await outputs('traces/');
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(
      /\/traces\/year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d\/traces_[^/]+\.compacted\.parquet$/,
    );
    // The exporter's files are gone.
    expect(await keys('traces/')).toEqual(written);

    const dir = await mirror();
    const rows = await duckdbSpanRows(`${dir}/${written[0]}`);
    expect(sorted(rows)).toEqual(sorted(recorded));
    // In file order: ServiceName, then StatusCode, then TraceId, then Timestamp.
    const order = rows.map((r) => JSON.parse(r) as string[]);
    const key = (r: string[]) => [r[0], r[8], r[1], BigInt(r[4] as string)] as const;
    const byKey = (a: string[], b: string[]) => {
      const [x, y] = [key(a), key(b)];
      for (let i = 0; i < 4; i++) {
        if ((x[i] as string | bigint) < (y[i] as string | bigint)) return -1;
        if ((x[i] as string | bigint) > (y[i] as string | bigint)) return 1;
      }
      return 0;
    };
    expect(order.map(key)).toEqual([...order].sort(byKey).map(key));
    // A lookup by TraceId returns its spans, and nothing else.
    const traceId = order[5]?.[1] as string;
    const found = await duckdbRows(
      `SELECT SpanId FROM read_parquet('${dir}/${prefix}/traces/**/*.parquet') WHERE TraceId = '${traceId}'`,
    );
    expect(sorted(found.map((r) => String(r.SpanId)))).toEqual(
      sorted(order.filter((r) => r[1] === traceId).map((r) => r[2] as string)),
    );
    expect(sorted(await readerSpans())).toEqual(sorted(spanIds));
    // Every row group's TraceId has a bloom filter, which lets every written id through and
    // rules out nearly every other (sized at 1 % false positives).
    const written0 = `${dir}/${written[0]}`;
    const traceIds = [...new Set(order.map((r) => r[1] as string))];
    const present = await traceIdFilters(written0, traceIds);
    expect(present.withFilter).toBe(present.rowGroups);
    expect(present.passed).toBe(traceIds.length);
    expect((await traceIdFilters(written0, absentIds(100))).passed).toBeLessThan(10);
  });

  test('log records: an hour of Parquet files becomes one sorted output with exactly the rows the SDK recorded', async () => {
    const batches: FlatBatch[] = [
      { service: 'web', minute: 5, items: 20, seed: 5 },
      { service: 'api', minute: 25, items: 15, seed: 6 },
      { service: 'web', minute: 45, items: 10, seed: 7 },
    ];
    const recorded = await exportLogBatches({ bucket, prefix }, connection(), HOUR, batches);
    expect(await readerLogs()).toBe(recorded.length);
    const report = await compactLogRecords(options());
    expect(report.partitions.map((p) => [p.partition.slice(0, 10), p.status])).toEqual([
      ['logs/year=', 'compacted'],
    ]);
    const written = await outputs('logs/');
    expect(written).toHaveLength(1);
    expect(await keys('logs/')).toEqual(written);
    const dir = await mirror();
    const rows = await duckdbLogRows(`${dir}/${written[0]}`);
    expect(sorted(rows)).toEqual(sorted(recorded));
    const order = rows.map((r) => JSON.parse(r) as string[]);
    const key = (r: string[]) => `${r[0]}\u0000${r[1]}\u0000${String(r[3]).padStart(20, '0')}`;
    expect(order.map(key)).toEqual(order.map(key).sort());
    expect(await readerLogs()).toBe(recorded.length);
    const traceIds = [...new Set(order.map((r) => r[1] as string).filter((id) => id !== ''))];
    const present = await traceIdFilters(`${dir}/${written[0]}`, traceIds);
    expect([present.withFilter, present.passed]).toEqual([present.rowGroups, traceIds.length]);
  });

  test('a compactor killed after the output PUT, before the deletes: every span read once, a rerun deletes the inputs and writes no second output', async () => {
    const { spawnTs } = await import('../support/child.js');
    const { childConnectionEnv } = await import('../support/children/connection.js');
    const recorded = await exportSpanBatches({ bucket, prefix }, connection(), HOUR, spanBatches);
    const spanIds = sorted(recorded.map((r) => JSON.parse(r)[2] as string));
    const inputs = await keys('traces/');
    const child = spawnTs('test/support/children/compaction-killpoint.ts', {
      ...childConnectionEnv(s3Server?.endpoint, bucket, s3Server),
      S3_PREFIX: prefix,
      COMPACT_FROM: new Date(HOUR).toISOString(),
      COMPACT_SIGNAL: 'traces',
      KILL_POINT: 'before-deletes',
    });
    const stopped = await child.waitForJson<{ killpoint?: string; output: string }>(
      (v) => v.killpoint !== undefined,
    );
    child.process.kill('SIGKILL');
    await child.exited;
    // The window: the output and every input it replaces, both stored.
    expect(await outputs('traces/')).toEqual([stopped.output]);
    expect((await keys('traces/')).filter((k) => inputs.includes(k))).toEqual(inputs);
    expect(sorted(await readerSpans())).toEqual(spanIds);

    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the dead run's lease expires
    const report = await compactSpans(options());
    expect(report.partitions.map((p) => [p.status, p.deleted, p.written.length])).toEqual([
      ['finished', inputs.length, 0],
    ]);
    expect(await keys('traces/')).toEqual([stopped.output]);
    const dir = await mirror();
    expect(sorted(await duckdbSpanRows(`${dir}/${prefix}/traces/**/*.parquet`))).toEqual(
      sorted(recorded),
    );
    expect(sorted(await readerSpans())).toEqual(spanIds);
  });

  test('a late file of spans is merged by the next run into a new output that replaces the first; a run with nothing to do writes nothing', async () => {
    const first = await exportSpanBatches({ bucket, prefix }, connection(), HOUR, spanBatches);
    await compactSpans(options());
    const [old] = await outputs('traces/');
    const late = await exportSpanBatches({ bucket, prefix }, connection(), HOUR, [
      { service: 'api', minute: 58, items: 6, seed: 9 },
    ]);
    const report = await compactSpans(options());
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const now = await outputs('traces/');
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(old);
    expect(await keys('traces/')).toEqual(now);
    const dir = await mirror();
    expect(sorted(await duckdbSpanRows(`${dir}/${now[0]}`))).toEqual(sorted([...first, ...late]));
    expect(sorted(await readerSpans())).toEqual(
      sorted([...first, ...late].map((r) => JSON.parse(r)[2] as string)),
    );
    const snapshot = await listing(client, bucket, `${prefix}/`);
    const again = await compactSpans(options());
    expect(again.partitions).toEqual([]);
    expect(await listing(client, bucket, `${prefix}/`)).toEqual(snapshot);
  });

  test('otel-s3 compact takes every signal: the hour of metrics, of spans and of log records, each into its own output', async () => {
    const { compactInChild } = await import('../support/cli-child.js');
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('web', HOUR + 20 * 60_000, 3, 2),
    ]);
    const spans = await exportSpanBatches({ bucket, prefix }, connection(), HOUR, spanBatches);
    const logs = await exportLogBatches({ bucket, prefix }, connection(), HOUR, [
      { service: 'web', minute: 7, items: 8, seed: 8 },
      { service: 'api', minute: 37, items: 8, seed: 9 },
    ]);
    const run = await compactInChild({ bucket, prefix, fromMillis: HOUR }, s3Environment());
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(
      lines.map((l) =>
        l
          .replace(/year=.*hour=\d\d/, 'HOUR')
          .split('  ')
          .slice(0, 2),
      ),
    ).toEqual([
      ['HOUR', 'compacted'],
      ['traces/HOUR', 'compacted'],
      ['logs/HOUR', 'compacted'],
    ]);
    const all = await keys('');
    expect(all.filter((k) => k.endsWith('.parquet') && !k.endsWith('.compacted.parquet'))).toEqual(
      [],
    );
    const dir = await mirror();
    expect(sorted(await duckdbSpanRows(`${dir}/${prefix}/traces/**/*.parquet`))).toEqual(
      sorted(spans),
    );
    expect(sorted(await duckdbLogRows(`${dir}/${prefix}/logs/**/*.parquet`))).toEqual(sorted(logs));
    expect(await outputs('year=')).toHaveLength(1);
  });
});
