import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { Attributes } from '@opentelemetry/api';
import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { CompactMetricsOptions } from '../../src/compact/index.js';
import { type Compression, type Format, S3MetricExporter } from '../../src/index.js';
import { duckdbRows } from './duckdb.js';
import { writeAtKey } from './reader-fixtures.js';

/**
 * Data for the compaction tests: batches of metrics whose points lie in a chosen past hour,
 * exported by the real exporter with partitionTime 'data' (so each object is filed under that
 * hour, as a service's late or replayed batches are), and the points as the test recorded them,
 * in one canonical text per point to compare multisets with what DuckDB reads.
 */

/** A point as the test recorded it. */
export interface RecordedPoint {
  service: string;
  metric: string;
  type: 'gauge' | 'sum' | 'histogram';
  attributes: Record<string, string>;
  timeMillis: number;
  value?: number;
  count?: number;
  sum?: number;
  bucketCounts?: number[];
}

export interface Batch {
  rm: ResourceMetrics;
  points: RecordedPoint[];
}

const BOUNDS = [10, 100, 1000];

/**
 * One export of `service`: a counter (integer), a gauge (double) and a histogram, `series`
 * series each, all at `timeMillis` (whole milliseconds: the table keeps microseconds).
 */
export function batchAt(service: string, timeMillis: number, series: number, seed = 1): Batch {
  const hr = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];
  const time = hr(timeMillis);
  const start = hr(timeMillis - 3_600_000);
  const points: RecordedPoint[] = [];
  const attrs = (i: number): Attributes => ({ route: `/r/${i}`, zone: i % 2 === 0 ? 'a' : 'b' });
  const text = (i: number) => ({ route: `/r/${i}`, zone: i % 2 === 0 ? 'a' : 'b' });
  const counter: MetricData = {
    descriptor: { name: 'requests', description: 'requests', unit: '1', valueType: ValueType.INT },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.SUM,
    isMonotonic: true,
    dataPoints: Array.from({ length: series }, (_, i) => {
      const value = seed * 1000 + i + (timeMillis % 97);
      points.push({
        service,
        metric: 'requests',
        type: 'sum',
        attributes: text(i),
        timeMillis,
        value,
      });
      return { startTime: start, endTime: time, attributes: attrs(i), value };
    }),
  };
  const gauge: MetricData = {
    descriptor: { name: 'load', description: '', unit: '%', valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.GAUGE,
    dataPoints: Array.from({ length: series }, (_, i) => {
      const value = (seed + i) * 0.25 + (timeMillis % 13) / 4;
      points.push({
        service,
        metric: 'load',
        type: 'gauge',
        attributes: text(i),
        timeMillis,
        value,
      });
      return { startTime: time, endTime: time, attributes: attrs(i), value };
    }),
  };
  const histogram: MetricData = {
    descriptor: { name: 'latency', description: '', unit: 'ms', valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.HISTOGRAM,
    dataPoints: Array.from({ length: series }, (_, i) => {
      const bucketCounts = [i % 3, seed, 2, (timeMillis % 5) + 1];
      const count = bucketCounts.reduce((a, b) => a + b, 0);
      const sum = count * 50 + i;
      points.push({
        service,
        metric: 'latency',
        type: 'histogram',
        attributes: text(i),
        timeMillis,
        count,
        sum,
        bucketCounts,
      });
      return {
        startTime: start,
        endTime: time,
        attributes: attrs(i),
        value: { buckets: { boundaries: BOUNDS, counts: bucketCounts }, count, sum },
      };
    }),
  };
  return {
    rm: {
      resource: resourceFromAttributes({ 'service.name': service, 'host.name': `${service}-1` }),
      scopeMetrics: [{ scope: { name: 'compaction-test' }, metrics: [counter, gauge, histogram] }],
    },
    points,
  };
}

/** One text per point: what the multiset comparison compares. */
export function pointText(p: RecordedPoint): string {
  const attributes = Object.entries(p.attributes).sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([
    p.service,
    p.metric,
    p.type,
    attributes,
    p.timeMillis,
    p.value ?? null,
    p.count ?? null,
    p.sum ?? null,
    p.bucketCounts ?? null,
  ]);
}

/**
 * The compactor's options for the compaction tests against a server: `prefix` of `bucket` by the
 * data's time, from the hour `fromMillis`, no clock skew allowed for leases; `extra` on top.
 */
export const compactOptions = (
  connection: Record<string, unknown>,
  where: { bucket: string; prefix: string; fromMillis: number },
  extra: Partial<CompactMetricsOptions> = {},
): CompactMetricsOptions =>
  ({
    bucket: where.bucket,
    ...connection,
    prefix: where.prefix,
    partitionTime: 'data',
    from: new Date(where.fromMillis),
    leaseClockSkewMillis: 0,
    ...extra,
  }) as CompactMetricsOptions;

/**
 * Exports each batch as one object (the exporter's own encoding, format and compression),
 * filed by partitionTime 'data' under the hour of its points.
 */
export async function exportBatches(
  options: { bucket: string; prefix: string; format: Format; compression?: Compression },
  connection: Record<string, unknown>,
  batches: Batch[],
): Promise<void> {
  const exporter = new S3MetricExporter({
    ...connection,
    bucket: options.bucket,
    prefix: options.prefix,
    format: options.format,
    compression: options.compression ?? 'zstd',
    partitionTime: 'data',
    maxBatchAgeMillis: 3_600_000,
  });
  for (const { rm } of batches) {
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      exporter.export(rm, resolve),
    );
    if (result.code !== 0) throw result.error ?? new Error('export failed');
    await exporter.forceFlush();
  }
  await exporter.shutdown();
  const stats = exporter.stats();
  if (stats.batchesUploaded !== batches.length) {
    throw new Error(`expected ${batches.length} objects uploaded, got ${JSON.stringify(stats)}`);
  }
}

/** Every object under `prefix`: key, size and ETag, in key order. */
export async function listing(
  client: S3Client,
  bucket: string,
  prefix = '',
): Promise<{ key: string; size: number; etag: string }[]> {
  const out: { key: string; size: number; etag: string }[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const e of page.Contents ?? []) {
      out.push({ key: e.Key ?? '', size: e.Size ?? 0, etag: e.ETag ?? '' });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return out;
}

/** The bucket's objects under `prefix`, copied into a new local directory (`{dir}/{key}`). */
export async function mirrorOf(client: S3Client, bucket: string, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'otel-s3-compaction-'));
  for (const { key } of await listing(client, bucket, prefix)) {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = await (
      got.Body as { transformToByteArray(): Promise<Uint8Array> }
    ).transformToByteArray();
    await writeAtKey(dir, key, bytes);
  }
  return dir;
}

/** Every Parquet file's rows under `dir`, read by DuckDB, one text per point (see pointText). */
export async function duckdbPointTexts(dir: string, glob = '**/*.parquet'): Promise<string[]> {
  const rows = await duckdbRows(
    `SELECT ServiceName, MetricName, MetricType, Attributes, epoch_ms(TimeUnix) AS t,
            Value, ValueAsInt, Count, Sum, BucketCounts
     FROM read_parquet('${join(dir, glob)}')`,
  );
  return rows.map((r) => {
    const type = String(r.MetricType) as RecordedPoint['type'];
    const attributes = Object.fromEntries(
      (r.Attributes as { key: string; value: string }[]).map((e) => [e.key, e.value]),
    );
    const num = (v: unknown) => (v === null || v === undefined ? undefined : Number(v));
    return pointText({
      service: String(r.ServiceName),
      metric: String(r.MetricName),
      type,
      attributes,
      timeMillis: Number(r.t),
      value: type === 'histogram' ? undefined : (num(r.ValueAsInt) ?? num(r.Value)),
      count: num(r.Count),
      sum: num(r.Sum),
      bucketCounts:
        type === 'histogram' ? (r.BucketCounts as unknown[]).map((c) => Number(c)) : undefined,
    });
  });
}

/** Stores `bytes` under `key` as it is (a corrupt or hostile object). */
export async function putRaw(
  client: S3Client,
  bucket: string,
  key: string,
  bytes: Uint8Array,
): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
}

/** Sorted, for multiset comparison. */
export const sorted = (texts: string[]) => [...texts].sort();

/** Every point of `batches`, as pointText() spells it, sorted: what a compaction must keep. */
export const pointsOf = (batches: Batch[]) =>
  sorted(batches.flatMap((b) => b.points.map(pointText)));
