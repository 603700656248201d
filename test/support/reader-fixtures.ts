import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { HrTime } from '@opentelemetry/api';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { UUID } from 'uuidv7';
import { beforeAll } from 'vitest';
import type { Compression } from '../../src/index.js';
import { objectKey } from '../../src/layout/keys.js';
import type { OtlpObject, PlainValue, PointRow } from '../../src/reader.js';
import { dataPointRows, type MetricType } from '../../src/reader.js';
import { metricsExport } from '../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../src/signals/metrics/parquet/encode.js';
import { collectingProvider, recordEveryInstrument } from './service.js';
import { makeTempDir, removeDir } from './temp-dir.js';
import { zstdCompress } from './zstd.js';

export { COMPRESSIONS } from '../../src/config/options.js';
/** The formats whose object is one framed request, wrapped by the compression (not Parquet). */
export const FORMATS = ['otlp-json', 'otlp-proto'] as const;
export type FramedFormat = (typeof FORMATS)[number];
export const EXTENSION = {
  'otlp-json': '.json',
  'otlp-proto': '.binpb',
  zstd: '.zst',
  gzip: '.gz',
  none: '',
} as const;

/**
 * For a file of reader tests: sampleMetrics() and a temp directory, made before its tests (the
 * directory removed after them) and handed to `use`.
 */
export function withSampleInDir(
  prefix: string,
  use: (made: { rm1: ResourceMetrics; dir: string }) => void,
): void {
  beforeAll(async () => {
    const rm1 = await sampleMetrics();
    const dir = await makeTempDir(prefix);
    use({ rm1, dir });
    return () => removeDir(dir);
  });
}

/**
 * One collection of every instrument type (values in `recordedValues`). It is collected a few
 * milliseconds after the recording, so each point's start and end times differ.
 */
export async function sampleMetrics(serviceName = 'test-service'): Promise<ResourceMetrics> {
  const { provider, collect } = collectingProvider(serviceName);
  recordEveryInstrument(provider);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const rm = await collect();
  await provider.shutdown();
  return rm;
}

/** The bytes of one stored object, encoded as the exporter does and compressed by libraries. */
export function encodeObject(
  rm: ResourceMetrics,
  format: FramedFormat,
  compression: Compression,
): Buffer {
  const f = metricsExport.records[format];
  const record = f.encode(rm);
  const raw = f.assemble([record], record.length);
  if (compression === 'zstd') return zstdCompress(raw);
  if (compression === 'gzip') return gzipSync(raw);
  return raw;
}

/** sampleMetrics() as an uncompressed metrics Parquet file, written by the exporter's encoder. */
export async function sampleParquet(): Promise<Uint8Array> {
  const builders = new MetricColumnBuilders();
  builders.appendResourceMetrics(await sampleMetrics());
  return new Uint8Array(await encodeParquet(builders.seal(), { compression: 'none' }));
}

let sequence = 0;
/** A key of the exporter's layout, filed under `partition` with a UUIDv7 made at `time`. */
export function keyAt(prefix: string, time: Date, extension: string, partition = time): string {
  const id = UUID.fromFieldsV7(time.getTime(), ++sequence & 0xfff, 0, sequence).toString();
  return objectKey({ prefix, filePrefix: '', time: partition, extension, id });
}

/** Writes `bytes` at `{dir}/{key}`, the layout `--dir` reads. */
export async function writeAtKey(dir: string, key: string, bytes: Uint8Array): Promise<void> {
  const path = join(dir, ...key.split('/'));
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}

/** How finely a reader gives times back: Parquet keeps microseconds, a JS Date milliseconds. */
export type TimePrecision = 'nanos' | 'micros' | 'millis';
const STEP: Record<TimePrecision, bigint> = { nanos: 1n, micros: 1_000n, millis: 1_000_000n };

/** An SDK time as decimal nanoseconds since 1970, cut to `precision`; worked out here, not by src/. */
export function hrTimeNanos([seconds, nanos]: HrTime, precision: TimePrecision = 'nanos'): string {
  const total = BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
  return (total - (total % STEP[precision])).toString();
}

/** `2026-11-30T04:00:00.123456789Z` (any number of fraction digits) as decimal nanoseconds; '' stays ''. */
export function isoNanos(iso: string): string {
  if (iso === '') return '';
  const match =
    /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(?:Z|[+-]00(?::?00)?)$/.exec(iso);
  if (match === null) throw new Error(`not a UTC time: ${iso}`);
  const seconds = Date.parse(`${(match[1] as string).replace(' ', 'T')}Z`) / 1000;
  return (BigInt(seconds) * 1_000_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'))).toString();
}

/**
 * The start and end times, as decimal nanoseconds at `precision`, of the point of `metric` with
 * `attributes` in a collection the test recorded.
 */
export function recordedTimes(
  recorded: ResourceMetrics,
  metric: string,
  attributes: Record<string, unknown>,
  precision: TimePrecision = 'nanos',
): { startTimeUnixNano: string; timeUnixNano: string } {
  const same = (a: Record<string, unknown>) => JSON.stringify(a) === JSON.stringify(attributes);
  const points = recorded.scopeMetrics
    .flatMap((sm) => sm.metrics)
    .filter((m) => m.descriptor.name === metric)
    .flatMap(
      (m) =>
        m.dataPoints as {
          attributes: Record<string, unknown>;
          startTime: HrTime;
          endTime: HrTime;
        }[],
    )
    .filter((p) => same(p.attributes));
  const [point] = points;
  if (point === undefined || points.length > 1) {
    throw new Error(`${points.length} recorded points of ${metric} ${JSON.stringify(attributes)}`);
  }
  return {
    startTimeUnixNano: hrTimeNanos(point.startTime, precision),
    timeUnixNano: hrTimeNanos(point.endTime, precision),
  };
}

/** Rows of `metric`, sorted by their attributes. */
function byMetric(rows: RawPointRow[], metric: string): RawPointRow[] {
  return rows
    .filter((r) => r.metric === metric)
    .sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));
}

/** The exponential-histogram bucket index of value `v` at `scale` (base 2^(2^-scale)). */
const exponentialIndex = (v: number, scale: number) => Math.ceil(Math.log2(v) * 2 ** scale) - 1;

/**
 * The values of one recordEveryInstrument() collection as read back from `rows`, in a shape
 * that `recordedValues` gives for what was recorded: compare the two with toEqual.
 */
export function instrumentValues(given: readonly (PointRow | RawPointRow)[]) {
  const rows = given.map((r) => ('time' in r ? rawRowOf(r) : r));
  const pick = (r: RawPointRow | undefined) => ({
    startTimeUnixNano: r?.startTimeUnixNano,
    timeUnixNano: r?.timeUnixNano,
    type: r?.type,
    monotonic: r?.monotonic,
    temporality: r?.temporality,
    unit: r?.unit,
    attributes: r?.attributes,
  });
  const [latency] = byMetric(rows, 'http.latency');
  const [payload] = byMetric(rows, 'payload.size');
  const histogramBuckets: Record<string, number> = {};
  (latency?.bucketCounts ?? []).forEach((count, i) => {
    if (count > 0) histogramBuckets[String(latency?.explicitBounds?.[i] ?? '+Inf')] = count;
  });
  const exponentialBuckets: Record<number, number> = {};
  (payload?.positive?.bucketCounts ?? []).forEach((count, j) => {
    if (count > 0) exponentialBuckets[(payload?.positive?.offset ?? 0) + j] = count;
  });
  return {
    points: rows.length,
    services: [...new Set(rows.map((r) => r.resource['service.name']))],
    counter: byMetric(rows, 'http.requests').map((r) => ({ ...pick(r), value: r.value })),
    upDownCounter: byMetric(rows, 'http.active').map((r) => ({ ...pick(r), value: r.value })),
    gauge: byMetric(rows, 'cpu.temperature').map((r) => ({ ...pick(r), value: r.value })),
    histogram: {
      ...pick(latency),
      count: latency?.count,
      sum: latency?.sum,
      min: latency?.min,
      max: latency?.max,
      buckets: histogramBuckets,
    },
    exponentialHistogram: {
      ...pick(payload),
      count: payload?.count,
      sum: payload?.sum,
      min: payload?.min,
      max: payload?.max,
      zeroCount: payload?.zeroCount,
      scale: payload?.scale,
      buckets: exponentialBuckets,
    },
  };
}

/**
 * What recordEveryInstrument() recorded, in the shape of instrumentValues(): the values it
 * records, and the times and exponential scale of `recorded`, the collection the SDK handed to
 * the exporter, times at the precision the reader keeps.
 */
export function recordedValues(
  service: string,
  recorded: ResourceMetrics,
  precision: TimePrecision = 'nanos',
) {
  const at = (metric: string, attributes: Record<string, unknown> = {}) =>
    recordedTimes(recorded, metric, attributes, precision);
  // The SDK picks the exponential histogram's scale for the values; the buckets must fit it.
  const exponentialScale = (
    recorded.scopeMetrics
      .flatMap((sm) => sm.metrics)
      .find((m) => m.descriptor.name === 'payload.size')?.dataPoints[0]?.value as
      | { scale: number }
      | undefined
  )?.scale;
  if (exponentialScale === undefined) throw new Error('payload.size was not recorded');
  const common = { temporality: 'cumulative' };
  /** The http.requests counter of `route`. */
  const requests = (route: string, value: number) => ({
    ...at('http.requests', { route }),
    ...common,
    type: 'sum',
    monotonic: true,
    unit: '{request}',
    attributes: { route },
    value,
  });
  return {
    points: 6,
    services: [service],
    counter: [requests('/a', 12), requests('/b', 1)],
    upDownCounter: [
      {
        ...at('http.active'),
        ...common,
        type: 'sum',
        monotonic: false,
        unit: '',
        attributes: {},
        value: 7,
      },
    ],
    gauge: [
      {
        ...at('cpu.temperature', { host: 'h1' }),
        type: 'gauge',
        monotonic: undefined,
        temporality: undefined,
        unit: 'Cel',
        attributes: { host: 'h1' },
        value: 42.5,
      },
    ],
    // The SDK's default bounds are 0, 5, 10, 25, 50, 75, 100, 250, 500, ...: 3, 30 and 300
    // fall in the buckets ending at 5, 50 and 500.
    histogram: {
      ...at('http.latency'),
      ...common,
      type: 'histogram',
      monotonic: undefined,
      unit: 'ms',
      attributes: {},
      count: 3,
      sum: 333,
      min: 3,
      max: 300,
      buckets: { '5': 1, '50': 1, '500': 1 },
    },
    exponentialHistogram: {
      ...at('payload.size'),
      ...common,
      type: 'exponentialHistogram',
      monotonic: undefined,
      unit: 'By',
      attributes: {},
      count: 3,
      sum: 1003,
      min: 1,
      max: 1000,
      zeroCount: 0,
      scale: exponentialScale,
      buckets: Object.fromEntries(
        [1, 2, 1000].map((v) => [exponentialIndex(v, exponentialScale), 1]),
      ),
    },
  };
}

/**
 * A data point in the shape of OTLP itself: nanosecond strings, OTLP metric types with the
 * monotonic flag, buckets unnested. What the recorded values are compared in (recordedValues,
 * recordedTimes), so a row of dataPointRows() or of `otel-s3 points` is read back into it.
 */
export interface RawPointRow {
  resource: Record<string, PlainValue>;
  scope: string;
  metric: string;
  unit: string;
  type: MetricType;
  temporality: PointRow['temporality'] | undefined;
  monotonic: boolean | undefined;
  startTimeUnixNano: string;
  timeUnixNano: string;
  attributes: Record<string, PlainValue>;
  value?: number;
  count?: number;
  sum?: number;
  min?: number;
  max?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
  scale?: number;
  zeroCount?: number;
  positive?: { offset: number; bucketCounts: number[] };
  negative?: { offset: number; bucketCounts: number[] };
}

/** A row of dataPointRows() (and of `otel-s3 points --format jsonl`) in the shape of OTLP. */
export function rawRowOf(row: PointRow): RawPointRow {
  const TYPES = {
    counter: ['sum', true],
    'up-down-counter': ['sum', false],
    gauge: ['gauge', undefined],
    histogram: ['histogram', undefined],
    'exponential-histogram': ['exponentialHistogram', undefined],
    summary: ['summary', undefined],
  } as const;
  const [type, monotonic] = TYPES[row.type];
  const buckets = row.buckets ?? {};
  return {
    resource: row.resource,
    scope: row.scope,
    metric: row.metric,
    unit: row.unit,
    type,
    temporality: row.temporality === '' ? undefined : row.temporality,
    monotonic,
    startTimeUnixNano: isoNanos(row.start),
    timeUnixNano: isoNanos(row.time),
    attributes: row.attributes,
    ...(row.value === undefined ? {} : { value: row.value }),
    ...(row.count === undefined ? {} : { count: row.count }),
    ...(row.sum === undefined ? {} : { sum: row.sum }),
    ...(row.min === undefined ? {} : { min: row.min }),
    ...(row.max === undefined ? {} : { max: row.max }),
    ...buckets,
  };
}

/** The rows of a request in the shape of OTLP (see RawPointRow). */
export function rawRows(request: OtlpObject): RawPointRow[] {
  return dataPointRows(request).map(rawRowOf);
}

/** Every item of a stream, in order (Array.fromAsync arrived after Node 20). */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}
