import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  AggregationType,
  DataPointType,
  MeterProvider,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { duckdbRows } from '../../support/duckdb.js';
import { hrTimeNanos } from '../../support/reader-fixtures.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { CollectingReader } from '../../support/service.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';

/**
 * Every column docs/parquet.md ("The table") says the Parquet table keeps, read by DuckDB from
 * files the exporter stored, against what the test recorded through the SDK. The expected rows
 * are worked out here from the SDK's own objects and the docs' column meanings, not by src/.
 */

/** The column names of the docs' table (first cells, every name in backticks). */
async function documentedColumns(): Promise<string[]> {
  const text = await readFile(new URL('../../../docs/parquet.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('\n## The table'), text.indexOf('\n### What the table'));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]))
    .filter((name): name is string => name !== undefined);
}

const RESOURCE_SCHEMA = 'https://opentelemetry.io/schemas/1.29.0';
const SCOPE_SCHEMA = 'https://opentelemetry.io/schemas/1.30.0';

/** Instruments of every kind, with descriptions, units, versions, schema URLs, ints and doubles. */
function recordForEveryColumn(provider: MeterProvider): void {
  const meter = provider.getMeter('columns.meter', '4.5.6', { schemaUrl: SCOPE_SCHEMA });
  const jobs = meter.createCounter('jobs.done', {
    description: 'Jobs finished',
    unit: '{job}',
    valueType: ValueType.INT,
  });
  jobs.add(3, { queue: 'a' });
  jobs.add(4, { queue: 'b', retried: true, attempt: 2 });
  meter
    .createUpDownCounter('queue.depth', {
      description: 'Jobs waiting',
      valueType: ValueType.DOUBLE,
    })
    .add(-2.5, { queue: 'a' });
  meter
    .createGauge('workers', { description: 'Workers alive', valueType: ValueType.INT })
    .record(12, { pool: 'p1' });
  const duration = meter.createHistogram('job.duration', { description: 'Job time', unit: 's' });
  for (const v of [0.2, 3, 40]) duration.record(v, { queue: 'a' });
  const size = meter.createHistogram('job.size', { description: 'Job size', unit: 'By' });
  for (const v of [1, 3, 1e6]) size.record(v);
  // A second scope without version or schema URL.
  provider.getMeter('bare.meter').createCounter('bare.count').add(1.5);
}

const TEXT = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v))) return String(v);
  throw new Error(`this test records only strings, booleans and integers, not ${String(v)}`);
};
const map = (attributes: Attributes) =>
  Object.entries(attributes).map(([key, value]) => ({ key, value: TEXT(value) }));
const micros = (t: HrTime) => (BigInt(hrTimeNanos(t, 'micros')) / 1000n).toString();
const int64 = (n: number | undefined) => (n === undefined ? null : String(n));
const TYPE = {
  [DataPointType.GAUGE]: 'gauge',
  [DataPointType.SUM]: 'sum',
  [DataPointType.HISTOGRAM]: 'histogram',
  [DataPointType.EXPONENTIAL_HISTOGRAM]: 'exponential_histogram',
} as const;

/** The rows the docs' table promises for `recorded`, as DuckDB gives them in JSON. */
function expectedRows(recorded: ResourceMetrics, partition: Record<string, string>) {
  const resource = recorded.resource;
  return recorded.scopeMetrics.flatMap((sm) =>
    sm.metrics.flatMap((metric: MetricData) =>
      metric.dataPoints.map((p) => {
        const isSum = metric.dataPointType === DataPointType.SUM;
        const isGauge = metric.dataPointType === DataPointType.GAUGE;
        const value = isSum || isGauge ? (p.value as number) : undefined;
        const h = metric.dataPointType === DataPointType.HISTOGRAM ? (p.value as never) : undefined;
        const e =
          metric.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM
            ? (p.value as never)
            : undefined;
        const histogram = (h ?? e) as
          | { count: number; sum?: number; min?: number; max?: number }
          | undefined;
        const explicit = h as { buckets: { boundaries: number[]; counts: number[] } } | undefined;
        const exponential = e as
          | {
              scale: number;
              zeroCount: number;
              positive: { offset: number; bucketCounts: number[] };
              negative: { offset: number; bucketCounts: number[] };
            }
          | undefined;
        return {
          TimeUnix: micros(p.endTime),
          StartTimeUnix: micros(p.startTime),
          ServiceName: TEXT(resource.attributes['service.name'] ?? ''),
          ResourceSchemaUrl: resource.schemaUrl ?? '',
          ResourceAttributes: map(resource.attributes),
          ScopeName: sm.scope.name,
          ScopeVersion: sm.scope.version ?? '',
          ScopeSchemaUrl: sm.scope.schemaUrl ?? '',
          MetricName: metric.descriptor.name,
          MetricDescription: metric.descriptor.description,
          MetricUnit: metric.descriptor.unit,
          MetricType: TYPE[metric.dataPointType],
          Attributes: map(p.attributes),
          // The OTLP enum: the SDK's DELTA (0) is 1, CUMULATIVE (1) is 2; gauges 0.
          AggregationTemporality: isGauge
            ? 0
            : metric.aggregationTemporality === AggregationTemporality.DELTA
              ? 1
              : 2,
          IsMonotonic: isSum && metric.isMonotonic,
          Value: value ?? null,
          ValueAsInt:
            value !== undefined && metric.descriptor.valueType === ValueType.INT
              ? String(value)
              : null,
          Count: int64(histogram?.count),
          Sum: histogram?.sum ?? null,
          Min: histogram?.min ?? null,
          Max: histogram?.max ?? null,
          BucketCounts: (explicit?.buckets.counts ?? []).map(String),
          ExplicitBounds: explicit?.buckets.boundaries ?? [],
          Scale: exponential?.scale ?? null,
          ZeroCount: int64(exponential?.zeroCount),
          PositiveOffset: exponential?.positive.offset ?? null,
          NegativeOffset: exponential?.negative.offset ?? null,
          PositiveBucketCounts: (exponential?.positive.bucketCounts ?? []).map(String),
          NegativeBucketCounts: (exponential?.negative.bucketCounts ?? []).map(String),
          Flags: 0, // the JS SDK sets no data point flags
          ...partition,
        };
      }),
    ),
  );
}

/** An exponential histogram with negative buckets, which the SDK never makes. */
const NEGATIVE_BUCKETS: MetricData = {
  descriptor: {
    name: 'temperature.delta',
    description: 'Change',
    unit: 'Cel',
    valueType: ValueType.DOUBLE,
  },
  aggregationTemporality: AggregationTemporality.DELTA,
  dataPointType: DataPointType.EXPONENTIAL_HISTOGRAM,
  dataPoints: [
    {
      startTime: [1_800_000_000, 1_000],
      endTime: [1_800_000_060, 999_999],
      attributes: { sensor: 's1' },
      value: {
        count: 6,
        sum: -7.25,
        min: -4,
        max: 2,
        scale: 1,
        zeroCount: 1,
        positive: { offset: 1, bucketCounts: [1, 0] },
        negative: { offset: -2, bucketCounts: [1, 0, 3] },
      },
    },
  ],
};

const order = (row: Record<string, unknown>) =>
  JSON.stringify([row.ScopeName, row.MetricName, row.Attributes]);
const sorted = <T extends Record<string, unknown>>(rows: T[]) =>
  [...rows].sort((a, b) => order(a).localeCompare(order(b)));

describe("format: 'parquet': every documented column, read by DuckDB, as recorded", () => {
  let dir: string;
  let recorded: ResourceMetrics;
  let key: string;
  beforeAll(async () => {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, {
      format: 'parquet',
      prefix: 'lake',
      temporalityPreference: 'delta', // deltas and cumulatives side by side
    });
    const reader = new CollectingReader({
      aggregationTemporalitySelector: (type) => exporter.selectAggregationTemporality(type),
    });
    const provider = new MeterProvider({
      resource: resourceFromAttributes(
        { 'service.name': 'columns', 'deployment.environment': 'test', 'host.cores': 2 },
        { schemaUrl: RESOURCE_SCHEMA },
      ),
      readers: [reader],
      views: [
        {
          instrumentName: 'job.size',
          aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM },
        },
      ],
    });
    recordForEveryColumn(provider);
    await new Promise((resolve) => setTimeout(resolve, 5)); // start and end times differ
    recorded = (await reader.collect()).resourceMetrics;
    // The SDK drops negative histogram values: negative buckets come from a point made here.
    recorded.scopeMetrics[0]?.metrics.push(NEGATIVE_BUCKETS);
    const result = await new Promise<{ code: number }>((resolve) =>
      exporter.export(recorded, resolve),
    );
    expect(result.code).toBe(0);
    await exporter.shutdown();
    await provider.shutdown();
    const stored = [...s3.stored];
    expect(stored).toHaveLength(1);
    const [[storedKey, body]] = stored as [[string, Buffer]];
    key = storedKey;
    dir = await makeTempDir('otel-s3-parquet-columns-');
    await mkdir(dirname(join(dir, key)), { recursive: true });
    await writeFile(join(dir, key), body);
  });
  afterAll(() => (dir === undefined ? undefined : removeDir(dir)));

  test('the file has exactly the documented columns', async () => {
    const described = await duckdbRows(
      `DESCRIBE SELECT * FROM read_parquet('${dir}/**/*.parquet', hive_partitioning = true)`,
    );
    const columns = described.map((c) => String(c.column_name));
    const documented = await documentedColumns();
    expect(documented.length).toBeGreaterThan(30);
    expect([...columns].sort()).toEqual([...documented].sort());
  });

  test('every column of every row holds what the SDK recorded', async () => {
    const [, year, month, day, hour] =
      /year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\//.exec(key) ?? [];
    const rows = await duckdbRows(
      `SELECT * REPLACE (epoch_us(TimeUnix)::VARCHAR AS TimeUnix,
                         epoch_us(StartTimeUnix)::VARCHAR AS StartTimeUnix)
       FROM read_parquet('${dir}/**/*.parquet', hive_partitioning = true)`,
    );
    const expected = expectedRows(recorded, {
      year: String(year),
      month: String(month),
      day: String(day),
      hour: String(hour),
    });
    expect(expected).toHaveLength(8);
    // The recording exercises what it is meant to: the checks below cannot pass by emptiness.
    expect(new Set(expected.map((r) => r.MetricType)).size).toBe(4);
    expect(expected.some((r) => r.ValueAsInt !== null && r.Value !== null)).toBe(true);
    expect(expected.some((r) => r.NegativeBucketCounts.length > 0)).toBe(true);
    expect(new Set(expected.map((r) => r.AggregationTemporality))).toEqual(new Set([0, 1, 2]));
    expect(expected.every((r) => r.StartTimeUnix < r.TimeUnix)).toBe(true);
    expect(sorted(rows)).toEqual(sorted(expected));
  });
});
