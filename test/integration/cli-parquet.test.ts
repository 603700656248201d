/**
 * `otel-s3` over a prefix of Parquet files written with the exporter's defaults, on a real S3
 * server: found with no flag (they are in Parquet's hour layout, not the OTLP minute layout), and
 * described truly by `stats` — the codec inside the files, checked against DuckDB's reading of
 * their footers, and their size against the same points stored as uncompressed OTLP/JSON by the
 * exporter.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { beforeAll, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import type { PointRecord } from '../../src/cli/point-record.js';
import { S3MetricExporter } from '../../src/index.js';
import { type CliRun, lines, runCliChild } from '../support/cli-child.js';
import { duckdbRows } from '../support/duckdb.js';
import {
  connection,
  describeS3,
  listAndFetch,
  type StoredObject,
  s3Environment,
  s3Server,
  withS3,
} from '../support/s3.js';
import { collectingProvider } from '../support/service.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

/** Routes per collection, and what each collection adds to each route's counter. */
const ROUTES = 100;
const COLLECTIONS = [3, 4];
/** Per collection: a counter and a histogram point per route. */
const POINTS_PER_COLLECTION = 2 * ROUTES;

describeS3('otel-s3 over a Parquet prefix written with the defaults', () => {
  let client: S3Client;
  let bucket: string;
  let cwd: string;
  /** Stored objects per prefix, as plain ListObjectsV2 / GetObject see them. */
  const stored = new Map<string, StoredObject[]>();
  const otelS3 = (args: string[]): Promise<CliRun> =>
    runCliChild(args, {
      cwd,
      env: { ...s3Environment(), AWS_REGION: s3Server?.region ?? 'us-east-1' },
    });

  withS3('cli-parquet', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-cli-parquet-');
    // The same collections, through four exporters: Parquet with each compression, and OTLP/JSON
    // uncompressed (the size the Parquet files are compared with).
    const exporters = {
      lake: new S3MetricExporter({ bucket, prefix: 'lake', format: 'parquet', ...connection() }),
      'lake-gzip': new S3MetricExporter({
        bucket,
        prefix: 'lake-gzip',
        format: 'parquet',
        compression: 'gzip',
        ...connection(),
      }),
      'lake-none': new S3MetricExporter({
        bucket,
        prefix: 'lake-none',
        format: 'parquet',
        compression: 'none',
        ...connection(),
      }),
      json: new S3MetricExporter({ bucket, prefix: 'json', compression: 'none', ...connection() }),
    };
    const { provider, collect } = collectingProvider('checkout');
    const meter = provider.getMeter('http');
    const requests = meter.createCounter('http.server.requests');
    const duration = meter.createHistogram('http.server.request.duration', { unit: 'ms' });
    for (const n of COLLECTIONS) {
      for (let r = 0; r < ROUTES; r++) {
        requests.add(n, { 'http.route': `/route/${r}` });
        duration.record(10 * r, { 'http.route': `/route/${r}` });
      }
      const rm: ResourceMetrics = await collect();
      for (const exporter of Object.values(exporters)) {
        await new Promise((resolve) => exporter.export(rm, resolve));
        await exporter.forceFlush(); // one object per collection
      }
    }
    await Promise.all(Object.values(exporters).map((e) => e.shutdown()));
    await provider.shutdown();
    for (const prefix of Object.keys(exporters)) {
      stored.set(prefix, await listAndFetch(client, bucket, `${prefix}/`));
    }
    return () => removeDir(cwd);
  });

  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

  test('the files are in the hour layout, and ls, points and stats read them with no flag', async () => {
    const lake = stored.get('lake') ?? [];
    expect(lake).toHaveLength(COLLECTIONS.length);
    for (const { key } of lake) {
      expect(key).toMatch(
        /^lake\/year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d\/metrics_[0-9a-f-]{36}\.parquet$/,
      );
    }
    const where = ['--bucket', bucket, '--prefix', 'lake'];
    const ls = await otelS3(['ls', ...where, '--format', 'jsonl']);
    expect([ls.code, ls.stderr]).toEqual([0, '']);
    expect(lines(ls.stdout).map((l) => (JSON.parse(l) as { key: string }).key)).toEqual(
      lake.map((o) => o.key),
    );
    const points = await otelS3(['points', ...where, '--format', 'jsonl']);
    expect([points.code, points.stderr]).toEqual([0, '']);
    const records = lines(points.stdout).map((l) => JSON.parse(l) as PointRecord);
    expect(records).toHaveLength(COLLECTIONS.length * POINTS_PER_COLLECTION);
    // The last value of each route's counter is what the test added in all.
    const last = records.filter(
      (p) => p.metric === 'http.server.requests' && p.attributes['http.route'] === '/route/7',
    );
    expect(last.map((p) => p.value)).toEqual([COLLECTIONS[0], sum(COLLECTIONS)]);

    const text = await otelS3(['stats', ...where]);
    expect([text.code, text.stderr]).toEqual([0, '']);
    expect(text.stdout).toContain(`objects       2 (parquet+zstd: 2)\n`);
    expect(text.stdout).not.toContain('other keys');
  });

  test('stats: the codec inside the files, as DuckDB reads it from their footers', async () => {
    for (const [prefix, compression, codec] of [
      ['lake', 'zstd', 'ZSTD'],
      ['lake-gzip', 'gzip', 'GZIP'],
      ['lake-none', 'none', 'UNCOMPRESSED'],
    ] as const) {
      const { code, stdout } = await otelS3([
        'stats',
        '--bucket',
        bucket,
        '--prefix',
        prefix,
        '--format',
        'json',
      ]);
      expect(code).toBe(0);
      const report = JSON.parse(stdout) as StatsReport;
      expect(report.encodings).toEqual({ [`parquet+${compression}`]: COLLECTIONS.length });
      // DuckDB, an independent reader, sees that codec in every column chunk of the files.
      for (const object of stored.get(prefix) ?? []) {
        const file = join(cwd, `${prefix}.parquet`);
        await writeFile(file, object.bytes);
        const codecs = await duckdbRows(
          `SELECT DISTINCT compression FROM parquet_metadata('${file}')`,
        );
        expect(codecs).toEqual([{ compression: codec }]);
      }
    }
  });

  test('stats: the files against the same points as uncompressed OTLP/JSON, and it says so', async () => {
    const { code, stdout } = await otelS3([
      'stats',
      '--bucket',
      bucket,
      '--prefix',
      'lake',
      '--format',
      'json',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StatsReport;
    const parquetBytes = sum((stored.get('lake') ?? []).map((o) => o.size));
    // What the exporter stored for the same points as OTLP/JSON, uncompressed.
    const jsonBytes = sum((stored.get('json') ?? []).map((o) => o.size));
    expect(report).toMatchObject({
      objects: 2,
      bytes: parquetBytes,
      rawBytes: 0,
      compressionRatio: null,
      dataPoints: COLLECTIONS.length * POINTS_PER_COLLECTION,
    });
    expect(report.parquet?.objects).toBe(2);
    expect(report.parquet?.bytes).toBe(parquetBytes);
    // The decoded points re-spelled as OTLP/JSON (attribute values all text, as Parquet keeps
    // them) come within 10 % of the exporter's own OTLP/JSON objects.
    const asJson = report.parquet?.otlpJsonBytes ?? 0;
    expect(Math.abs(asJson - jsonBytes) / jsonBytes).toBeLessThan(0.1);
    expect(report.parquet?.ratio).toBeCloseTo(asJson / parquetBytes, 2);
    expect(report.parquet?.ratio).toBeGreaterThan(1);

    // The text names what it compares with: uncompressed OTLP/JSON, not what the default
    // otlp-json + zstd would store (which can be less than the Parquet files).
    const text = await otelS3(['stats', '--bucket', bucket, '--prefix', 'lake']);
    expect([text.code, text.stderr]).toEqual([0, '']);
    const line =
      /^as OTLP\/JSON {2}.* \(([\d,]+) bytes\) uncompressed: the Parquet files \(2\) are ([\d.]+)x smaller$/m.exec(
        text.stdout,
      );
    if (line === null)
      throw new Error(`no "as OTLP/JSON ... uncompressed" line in:\n${text.stdout}`);
    const printedJson = Number((line[1] as string).replaceAll(',', ''));
    expect(Math.abs(printedJson - jsonBytes) / jsonBytes).toBeLessThan(0.1);
    // The ratio is rounded for people, to hundredths and then to tenths.
    expect(Math.abs(Number(line[2]) - printedJson / parquetBytes)).toBeLessThan(0.06);
  });
});
