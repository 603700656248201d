import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { parquetReadObjects } from 'hyparquet';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import type { PointRecord } from '../../src/cli/point-record.js';
import { S3MetricExporter } from '../../src/index.js';
import { type MetricObject, readMetrics } from '../../src/reader.js';
import { type CliRun, lines, runCliChild } from '../support/cli-child.js';
import { duckdbRows } from '../support/duckdb.js';
import { pointRowOfTable } from '../support/parquet-rows.js';
import {
  instrumentValues,
  type RawPointRow,
  rawRowOf,
  rawRows,
  recordedValues,
  type TimePrecision,
} from '../support/reader-fixtures.js';
import {
  asParquetKeepsIt,
  catLine,
  flatPoints,
  recordedRequest,
} from '../support/recorded-request.js';
import { cliEnvironment, connection, describeS3, listAndFetch, withS3 } from '../support/s3.js';
import { recordEveryInstrument, recordingProvider } from '../support/service.js';
import { zstdDecompress } from '../support/zstd.js';

const COMPRESSIONS = ['zstd', 'gzip', 'none'] as const;
const serviceOf = (compression: string) => `lake-${compression}`;
const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

/** What each service's SDK handed to its exporter, by service name. */
const recorded = new Map<string, ResourceMetrics>();

/** Groups rows by service and checks each service's points against what it recorded. */
function expectRecorded(rows: Record<string, unknown>[], precision: TimePrecision): void {
  expectRecordedPoints(rows.map(pointRowOfTable), precision);
}

function expectRecordedPoints(rows: RawPointRow[], precision: TimePrecision = 'micros'): void {
  for (const compression of COMPRESSIONS) {
    const service = serviceOf(compression);
    const points = rows.filter((r) => r.resource['service.name'] === service);
    const values = instrumentValues(points);
    const rm = recorded.get(service);
    if (rm === undefined) throw new Error(`nothing recorded for ${service}`);
    expect(values, service).toEqual(recordedValues(service, rm, precision));
  }
}

describeS3("format: 'parquet' read by engines we did not write (DuckDB, Polars, hyparquet)", () => {
  let client: S3Client;
  let bucket: string;
  let mirror: string;
  let files: { key: string; path: string }[];

  withS3('parquet', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    for (const compression of COMPRESSIONS) {
      const exporter = new S3MetricExporter({
        bucket,
        prefix: 'lake',
        format: 'parquet',
        compression,
        ...connection(),
      });
      const { provider, exported } = recordingProvider(exporter, serviceOf(compression));
      recordEveryInstrument(provider);
      await new Promise((resolve) => setTimeout(resolve, 5)); // start and end times differ
      await provider.shutdown();
      expect(exporter.stats()).toMatchObject({ batchesUploaded: 1, pointsDropped: 0 });
      expect(exported).toHaveLength(1);
      recorded.set(serviceOf(compression), exported[0] as ResourceMetrics);
    }
    // A local mirror of the bucket (`aws s3 sync` would make the same tree).
    mirror = await mkdtemp(join(tmpdir(), 'otel-s3-parquet-'));
    files = [];
    for (const object of await listAndFetch(client, bucket, 'lake/')) {
      const path = join(mirror, ...object.key.split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, object.bytes);
      files.push({ key: object.key, path });
    }
  });
  afterAll(async () => {
    if (mirror !== undefined) await rm(mirror, { recursive: true, force: true });
  });

  test('one plain .parquet object per batch, in hour partitions', () => {
    expect(files).toHaveLength(COMPRESSIONS.length);
    for (const { key } of files) {
      expect(key).toMatch(
        /^lake\/year=\d{4}\/month=\d{2}\/day=\d{2}\/hour=\d{2}\/metrics_[0-9a-f-]{36}\.parquet$/,
      );
    }
  });

  test('DuckDB finds every data point with the recorded values, and the partition columns resolve', async () => {
    const rows = await duckdbRows(
      `SELECT *, filename FROM read_parquet('${mirror}/lake/**/*.parquet', hive_partitioning = true, filename = true)`,
    );
    expect(rows).toHaveLength(6 * COMPRESSIONS.length);
    expectRecorded(rows, 'micros');
    for (const row of rows) {
      const [, year, month, day, hour] =
        /year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\//.exec(String(row.filename)) ?? [];
      expect([row.year, row.month, row.day, row.hour].map(Number)).toEqual(
        [year, month, day, hour].map(Number),
      );
      // The partition is the batch's hour: its points were collected in it (or just before).
      const time = new Date(String(row.TimeUnix).replace(' ', 'T').replace(/\+00$/, 'Z'));
      const partition = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour));
      expect(time.getTime()).toBeGreaterThan(partition - 3_600_000);
      expect(time.getTime()).toBeLessThan(partition + 3_600_000);
    }
    const types = await duckdbRows(
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${mirror}/lake/**/*.parquet'))`,
    );
    const typeOf = Object.fromEntries(types.map((t) => [t.column_name, t.column_type]));
    expect(typeOf).toMatchObject({
      TimeUnix: 'TIMESTAMP WITH TIME ZONE',
      StartTimeUnix: 'TIMESTAMP WITH TIME ZONE',
      ResourceAttributes: 'MAP(VARCHAR, VARCHAR)',
      Attributes: 'MAP(VARCHAR, VARCHAR)',
      BucketCounts: 'BIGINT[]',
      ExplicitBounds: 'DOUBLE[]',
      Value: 'DOUBLE',
      Count: 'BIGINT',
      AggregationTemporality: 'INTEGER',
      IsMonotonic: 'BOOLEAN',
    });
  });

  test('Polars finds every data point with the recorded values, with hive partitions', () => {
    const frame = pl
      .scanParquet(`${mirror}/lake/**/*.parquet`, { hivePartitioning: true })
      .collectSync();
    const rows = frame.toRecords() as Record<string, unknown>[];
    expect(rows).toHaveLength(6 * COMPRESSIONS.length);
    expectRecorded(rows, 'millis'); // Polars gives JS Dates
    expect(frame.columns).toEqual(expect.arrayContaining(['year', 'month', 'day', 'hour']));
    expect(rows.every((r) => Number(r.year) >= 2026 && Number(r.hour) >= 0)).toBe(true);
    expect(String(frame.schema.TimeUnix)).toMatch(/Datetime.*us.*UTC/i);
  });

  test('hyparquet finds every data point with the recorded values', async () => {
    const rows: Record<string, unknown>[] = [];
    for (const { path } of files) {
      const bytes = await readFile(path);
      const file = new Uint8Array(bytes).buffer;
      rows.push(
        ...(await parquetReadObjects({
          file,
          compressors: {
            ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompress(input)),
            GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
          },
          // The raw microseconds, not a Date of milliseconds.
          parsers: { timestampFromMicroseconds: (micros: bigint) => micros as never },
        })),
      );
    }
    expect(rows).toHaveLength(6 * COMPRESSIONS.length);
    expectRecorded(rows, 'micros');
  });

  describe('read back by this package: readMetrics and the otel-s3 CLI', () => {
    let objects: MetricObject[];
    const otelS3 = (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
      runCliChild(args, {
        cwd: mirror,
        env: {
          ...cliEnvironment(bucket, 'lake'),
          ...env,
        },
      });

    beforeAll(async () => {
      objects = [];
      const stream = readMetrics({ bucket, prefix: 'lake', format: 'parquet', ...connection() });
      for await (const object of stream) objects.push(object);
      expect(stream.stats).toMatchObject({ keysSkipped: 0, objectsUnreadable: 0 });
    });

    test("readMetrics with format 'parquet' finds every object and every recorded value", () => {
      expect(objects.map((o) => o.key)).toEqual(files.map((f) => f.key).sort());
      expect(objects.every((o) => o.encoding.format === 'parquet')).toBe(true);
      expectRecordedPoints(objects.flatMap((o) => rawRows(o.request)));
    });

    test('points, cat, ls and stats read Parquet with OTEL_EXPORTER_S3_FORMAT=parquet', async () => {
      const env = { OTEL_EXPORTER_S3_FORMAT: 'parquet' };
      const [points, cat, ls, stats] = await Promise.all([
        otelS3(['points', '--format', 'jsonl'], env),
        otelS3(['cat'], env),
        otelS3(['ls', '--format', 'jsonl'], env),
        otelS3(['stats', '--format', 'json'], env),
      ]);
      expect([points.code, points.stderr]).toEqual([0, '']);
      expectRecordedPoints(lines(points.stdout).map((l) => rawRowOf(JSON.parse(l) as PointRecord)));
      // cat gives OTLP/JSON that a strict decoder reads as the recorded points, up to the
      // documented losses, one line per file.
      expect(cat.code).toBe(0);
      const printed = lines(cat.stdout).map(catLine);
      expect(printed).toHaveLength(COMPRESSIONS.length);
      expect(printed.flatMap(flatPoints).sort(byText)).toEqual(
        [...recorded.values()].flatMap((rm) => asParquetKeepsIt(recordedRequest(rm))).sort(byText),
      );
      expect(ls.code).toBe(0);
      expect(lines(ls.stdout).map((l) => (JSON.parse(l) as { key: string }).key)).toEqual(
        objects.map((o) => o.key),
      );
      expect(stats.code).toBe(0);
      expect(JSON.parse(stats.stdout) as StatsReport).toMatchObject({
        objects: COMPRESSIONS.length,
        dataPoints: 6 * COMPRESSIONS.length,
        objectsUnreadable: 0,
      });
    });

    test('without a format the hour-partitioned keys are read; another format names the flag that reads them', async () => {
      const plain = await otelS3(['ls', '--format', 'jsonl']);
      expect([plain.code, plain.stderr]).toEqual([0, '']);
      expect(lines(plain.stdout)).toHaveLength(COMPRESSIONS.length);
      const { code, stdout, stderr } = await otelS3(['ls', '--object-format', 'otlp-json']);
      expect([code, stdout]).toEqual([5, '']);
      expect(stderr).toMatch(
        /nothing readable: ignored 3 keys .*; they are read with --object-format parquet\n$/,
      );
      const flagged = await otelS3(['ls', '--object-format', 'parquet', '--format', 'jsonl']);
      expect(lines(flagged.stdout)).toHaveLength(COMPRESSIONS.length);
    });
  });
});
