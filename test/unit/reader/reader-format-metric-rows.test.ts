import { join } from 'node:path';
import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  AggregationType,
  type DataPoint,
  MeterProvider,
  type MetricData,
  type ResourceMetrics,
  type ViewOptions,
} from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import {
  dataPointRows,
  type OtlpObject,
  type OtlpValue,
  type PointRow,
  readMetrics,
  type UnreadableObject,
} from '../../../src/reader.js';
import { walkRequest } from '../../../src/signals/metrics/otlp-walk.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { num } from '../../../src/signals/plain-values.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { collect, encodeObject, keyAt, writeAtKey } from '../../support/reader-fixtures.js';
import { CollectingReader } from '../../support/service.js';
import { asText, EVERY_ATTRIBUTE_VALUE } from '../../support/stored-text.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';
import { zstdCompress } from '../../support/zstd.js';

/**
 * A differential test, as reader-format-rows.test.ts for spans and log records: the same awkward
 * metrics, recorded through the SDK's MeterProvider, stored once as the default format
 * (OTLP/JSON + zstd) and once as Parquet, read back with the reader and made rows by
 * dataPointRows(). The rows must be equal but for what docs/parquet.md says the Parquet table
 * cannot keep, which the test normalises (and only that).
 */

/** EVERY_ATTRIBUTE_VALUE, with `__proto__` as a key too. */
const EVERY_VALUE = {
  ...(JSON.parse('{"__proto__": "own key"}') as Record<string, string>),
  ...EVERY_ATTRIBUTE_VALUE,
};

const VIEWS: ViewOptions[] = [
  // A single bucket (no bounds), no min and max recorded.
  {
    instrumentName: 'one.bucket',
    aggregation: {
      type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM,
      options: { boundaries: [], recordMinMax: false },
    },
  },
  // Negative values: an up-down counter aggregated as a histogram takes them.
  {
    instrumentName: 'signed.histogram',
    aggregation: {
      type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM,
      options: { boundaries: [-10, -1, 0, 1, 10] },
    },
  },
  { instrumentName: 'exp.*', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } },
  {
    instrumentName: 'small.exp',
    aggregation: {
      type: AggregationType.EXPONENTIAL_HISTOGRAM,
      options: { maxSize: 4, recordMinMax: false },
    },
  },
];

async function recordOne(
  temporality: AggregationTemporality,
  resourceAttrs: Record<string, unknown>,
  schemaUrl?: string,
): Promise<ResourceMetrics[]> {
  const reader = new CollectingReader({ aggregationTemporalitySelector: () => temporality });
  const provider = new MeterProvider({
    resource: resourceFromAttributes(resourceAttrs as never, schemaUrl ? { schemaUrl } : {}),
    readers: [reader],
    views: VIEWS,
  });
  const m = provider.getMeter('meter-𝄞', '1.2.3', { schemaUrl: 'https://opentelemetry.io/s/1' });
  const bare = provider.getMeter('');

  const ints = m.createCounter('int.counter', {
    valueType: ValueType.INT,
    unit: 'By',
    description: 'bytes ✓',
  });
  const doubles = m.createCounter('double.counter');
  const updown = m.createUpDownCounter('updown', { unit: '{item}' });
  const intUpdown = m.createUpDownCounter('int.updown', { valueType: ValueType.INT });
  const gauge = m.createGauge('gauge', { unit: '1', description: '' });
  const intGauge = bare.createGauge('int.gauge', { valueType: ValueType.INT });
  const histogram = m.createHistogram('histogram', {
    unit: 'ms',
    advice: { explicitBucketBoundaries: [0, 1, 2, 5, 1000] },
  });
  const oneBucket = m.createHistogram('one.bucket');
  const signed = m.createUpDownCounter('signed.histogram');
  const expWide = m.createHistogram('exp.wide');
  const expZeros = m.createHistogram('exp.zeros');
  const expSigned = m.createUpDownCounter('exp.signed');
  const expSmall = m.createHistogram('small.exp');
  const expNothing = m.createHistogram('exp.nothing');

  ints.add(1, EVERY_VALUE as never);
  ints.add(2 ** 60, { big: true });
  // Empty values, an empty key, text that is not valid Unicode.
  ints.add(4, {
    withNull: ['a', null, 'b'],
    nothing: null,
    undef: undefined,
    '': 'empty key',
    'key\ud800': 'value\udfff',
    list: ['\ud800'],
  } as never);
  ints.add(2 ** 53 + 2, { past: '2^53' });
  doubles.add(-0, { z: 'negZero' });
  doubles.add(0.1, { z: 'tenth' });
  doubles.add(Number.POSITIVE_INFINITY, { z: 'inf' });
  doubles.add(Number.NaN, { z: 'nan' });
  updown.add(-5.5);
  updown.add(-(2 ** 60), { big: 'negative' });
  updown.add(Number.NEGATIVE_INFINITY, { z: '-inf' });
  intUpdown.add(-(2 ** 62), { k: 1 });
  gauge.record(-0);
  gauge.record(Number.NaN, { z: 'nan' });
  gauge.record(1e21, { z: 'huge' });
  gauge.record(5e-324, { z: 'denormal' });
  intGauge.record(2 ** 60 + 2 ** 10, { k: 'big' });
  intGauge.record(-(2 ** 53) - 2, { k: 'small' });
  // Integers an INT64 holds at its ends, and past them (the SDK takes any integral number).
  intGauge.record(-(2 ** 63), { k: 'int64 min' });
  intGauge.record(2 ** 63, { k: '2^63' });
  intGauge.record(2 ** 64, { k: '2^64' });
  intGauge.record(-1e300, { k: '-1e300' });
  intGauge.record(-0, { k: '-0' });
  // Empty buckets in the middle.
  histogram.record(0.5);
  histogram.record(2000);
  histogram.record(0, { only: 'zero' });
  histogram.record(Number.NaN, { special: 'nan' });
  histogram.record(Number.POSITIVE_INFINITY, { special: 'inf' });
  histogram.record(-0, { special: '-0' });
  oneBucket.record(3);
  oneBucket.record(7.25);
  signed.add(-20);
  signed.add(-0.5);
  signed.add(0);
  signed.add(0.5);
  signed.add(20);
  signed.add(-3, { only: 'negative' });
  // A range wide enough for the scale to come down.
  for (const v of [1e-300, 1e-9, 1, 1e9, 1e300]) expWide.record(v);
  expWide.record(Number.POSITIVE_INFINITY, { special: 'inf' });
  expZeros.record(0);
  expZeros.record(0);
  for (const v of [-1e6, -3, -0.001, 0, 2, 4]) expSigned.add(v);
  expSigned.add(-8, { only: 'negative' });
  for (const v of [1, 2, 4, 8, 16, 32, 64, 128, 256]) expSmall.record(v);
  expNothing.record(Number.NaN);

  // One name, instruments that differ (the SDK warns and keeps each as a metric of its own).
  m.createCounter('dup', { unit: 'a' }).add(1);
  m.createCounter('dup', { unit: 'b', description: 'other' }).add(2);
  m.createUpDownCounter('dup', { unit: 'a' }).add(3);
  m.createGauge('dup', { unit: 'a' }).record(4);
  m.createHistogram('dup', { unit: 'a' }).record(5);
  m.createCounter('dup', { unit: 'a', valueType: ValueType.INT }).add(6);

  // Scopes that differ only in their version or schema URL, the same metric in each.
  provider.getMeter('meter-𝄞', '9.9.9').createCounter('int.counter', { unit: 'By' }).add(7);
  provider
    .getMeter('meter-𝄞', '1.2.3', { schemaUrl: 'https://opentelemetry.io/s/2' })
    .createCounter('int.counter', { unit: 'By' })
    .add(8);

  const first = (await reader.collect()).resourceMetrics;
  // A second collection: a scale that changes (cumulative) or starts again (delta).
  for (const v of [1e-200, 5e250]) expWide.record(v, { second: true });
  expWide.record(1.5);
  ints.add(3);
  const second = (await reader.collect()).resourceMetrics;
  await provider.shutdown();
  return [first, second];
}

let batches: ResourceMetrics[];
let dir: string;
beforeAll(async () => {
  batches = [
    ...(await recordOne(AggregationTemporality.CUMULATIVE, {
      'service.name': 'svc-𝄞',
      'host.name': 'node-1',
    })),
    ...(await recordOne(
      AggregationTemporality.DELTA,
      { ...EVERY_VALUE, 'service.name': 2 ** 60, 'host.name': 'node-2' },
      'https://opentelemetry.io/schemas/1.30.0',
    )),
    ...(await recordOne(AggregationTemporality.DELTA, { 'host.name': 'no-service' })),
  ];
  batches.push(handMade(batches[0] as ResourceMetrics));
  dir = await makeTempDir('otel-s3-format-metric-rows-');
});
afterAll(() => removeDir(dir));

/**
 * Points the SDK never makes but a hand-made ResourceMetrics may hold, each a copy of a recorded
 * metric with one point: times at 0, times with nanoseconds, an exponential histogram that
 * counted nothing and has no sum, min or max; under a resource with no attributes at all.
 */
function handMade(rm: ResourceMetrics): ResourceMetrics {
  const metrics = rm.scopeMetrics.flatMap((sm) => sm.metrics);
  const named = (name: string) => {
    const m = metrics.find((x) => x.descriptor.name === name);
    if (m === undefined) throw new Error(`no ${name}`);
    return m;
  };
  const withPoints = (m: MetricData, points: DataPoint<unknown>[]): MetricData =>
    ({ ...m, dataPoints: points }) as MetricData;
  const gauge = named('gauge');
  const counter = named('int.counter');
  const exp = named('exp.zeros');
  const [g, c, e] = [gauge, counter, exp].map((m) => m.dataPoints[0] as DataPoint<unknown>) as [
    DataPoint<unknown>,
    DataPoint<unknown>,
    DataPoint<unknown>,
  ];
  return {
    resource: resourceFromAttributes({}),
    scopeMetrics: [
      {
        scope: { name: 'hand-made' },
        metrics: [
          withPoints(gauge, [
            { ...g, startTime: [0, 0], attributes: { t: 'start 0' } },
            { ...g, startTime: [0, 0], endTime: [0, 0], attributes: { t: 'both 0' } },
            { ...g, endTime: [1_796_000_000, 123_456_789], attributes: { t: 'nanos' } },
            // Past 2^63 ns (2262), which OTLP's fixed64 holds; the year 2242, to the nanosecond.
            { ...g, endTime: [1e10, 0], attributes: { t: 'past int64 nanos' } },
            { ...g, endTime: [2 ** 33, 999_999_999], attributes: { t: '2242' } },
          ]),
          withPoints(counter, [{ ...c, endTime: [0, 1], attributes: { t: 'end 1ns' } }]),
          withPoints(exp, [
            {
              ...e,
              value: {
                count: 0,
                scale: 0,
                zeroCount: 0,
                positive: { offset: 0, bucketCounts: [] },
                negative: { offset: 0, bucketCounts: [] },
              },
            },
          ]),
        ],
      },
      {
        // Names that are not valid Unicode (lone surrogates), an empty metric name.
        scope: { name: 'scope \ud800', version: 'v\udc00', schemaUrl: 'https://x/\ud800' },
        metrics: [
          {
            ...gauge,
            descriptor: {
              ...gauge.descriptor,
              name: 'name \ud800',
              description: 'd\udfff',
              unit: 'u\ud800',
            },
          } as MetricData,
          {
            ...counter,
            descriptor: { ...counter.descriptor, name: '', description: '', unit: '' },
          } as MetricData,
        ],
      },
    ],
  };
}

/** One Parquet file of every export, as the exporter makes it (`compression: 'zstd'` its default). */
async function parquetMetrics(
  rms: ResourceMetrics[],
  compression: 'none' | 'zstd',
  rowGroupRows?: number,
): Promise<Uint8Array> {
  const builders = new MetricColumnBuilders();
  for (const rm of rms) builders.append(rm, newTally(false));
  const compressPage = (page: Uint8Array) => new Uint8Array(zstdCompress(page));
  return new Uint8Array(
    await encodeParquet(builders.seal(), {
      ...(compression === 'none' ? { compression } : { compression, compressPage }),
      ...(rowGroupRows === undefined ? {} : { rowGroupRows }),
    }),
  );
}

/** The objects of `rms` as OTLP/JSON + zstd: one an export, as the exporter's batches of one. */
const jsonMetrics = (rms: ResourceMetrics[]): Uint8Array[] =>
  rms.map((rm) => new Uint8Array(encodeObject(rm, 'otlp-json', 'zstd')));

/** Every row of the objects stored under `name`, read by the reader. */
async function readBack(
  name: string,
  extension: string,
  files: Uint8Array[],
): Promise<OtlpObject[]> {
  const root = join(dir, name);
  for (const [i, bytes] of files.entries()) {
    await writeAtKey(root, keyAt('p', new Date(READER_T0.getTime() + i), extension), bytes);
  }
  const problems: UnreadableObject[] = [];
  const objects = await collect(
    readMetrics({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }),
  );
  expect(problems).toEqual([]);
  expect(objects).toHaveLength(files.length);
  return objects.map((o) => o.request);
}

/**
 * Documented (docs/parquet.md, "What the table does not keep"): times cut to whole microseconds.
 * A time under a microsecond after 1970 is cut to 0, which in OTLP is no time: ''.
 */
function micros(iso: string): string {
  const cut = iso.replace(/(\.\d{6})\d{3}Z$/, '$1000Z');
  return cut === '1970-01-01T00:00:00.000000000Z' ? '' : cut;
}

/** Rows in one order whatever the format's (Parquet sorts its rows, documented). */
const inOrder = <R>(rows: R[]): R[] =>
  rows
    .map((row) => ({
      row,
      key: JSON.stringify(row, (_k, v) =>
        typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
      ),
    }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ row }) => row);

/**
 * What a point's row does not show but the table keeps (docs/parquet.md: "Everything else is
 * kept"): the metric's description, the scope's version and schema URL, the resource's schema
 * URL, the point's flags. One entry a point.
 */
function metadata(requests: OtlpObject[]): string[] {
  const out: string[] = [];
  for (const request of requests) {
    let resource = '';
    let scope = '';
    let metric = '';
    walkRequest(request, {
      resource(rm) {
        resource = JSON.stringify([rm.schemaUrl ?? '']);
      },
      scope(sm) {
        const s = (sm.scope ?? {}) as Record<string, unknown>;
        scope = JSON.stringify([s.name ?? '', s.version ?? '', sm.schemaUrl ?? '']);
      },
      metric(m, type, data) {
        metric = JSON.stringify([
          m.name ?? '',
          m.description ?? '',
          m.unit ?? '',
          type,
          data.isMonotonic ?? false,
        ]);
      },
      point(p) {
        // With the point's value or count, to tell which point has which.
        const field = (k: string) => num(p[k] as OtlpValue | undefined);
        const value = field('asInt') ?? field('asDouble') ?? field('count');
        out.push(
          `${resource} ${scope} ${metric} ${p.flags ?? 0} ${Object.is(value, -0) ? '-0' : value}`,
        );
      },
    });
  }
  return out.sort();
}

describe('the same metrics read back as the same rows from either format', () => {
  let json: OtlpObject[];
  let proto: OtlpObject[];
  let parquet: OtlpObject[];
  let zstdParquet: OtlpObject[];
  let fromRequests: OtlpObject[];
  beforeAll(async () => {
    // OTLP: an object per collection; Parquet: one file of them all.
    json = await readBack('json', '.json.zst', jsonMetrics(batches));
    proto = await readBack(
      'proto',
      '.binpb.zst',
      batches.map((rm) => new Uint8Array(encodeObject(rm, 'otlp-proto', 'zstd'))),
    );
    parquet = await readBack('parquet', '.parquet', [await parquetMetrics(batches, 'none')]);
    // Row groups of 7 rows: metrics and series split between them.
    zstdParquet = await readBack('zstd', '.parquet', [await parquetMetrics(batches, 'zstd', 7)]);
    const builders = new MetricColumnBuilders();
    for (const request of json) builders.appendRequest(request);
    const file = new Uint8Array(await encodeParquet(builders.seal(), { compression: 'none' }));
    fromRequests = await readBack('requests', '.parquet', [file]);
  });

  test('what the rows do not show: descriptions, versions, schema URLs, flags', () => {
    expect(metadata(json).join('\n')).toContain('"bytes ✓"');
    expect(metadata(json).join('\n')).toContain(
      '["meter-𝄞","1.2.3","https://opentelemetry.io/s/1"]',
    );
    expect(metadata(json).join('\n')).toContain('["https://opentelemetry.io/schemas/1.30.0"]');
    expect(metadata(parquet)).toEqual(metadata(json));
    expect(metadata(fromRequests)).toEqual(metadata(json));
    expect(metadata(proto)).toEqual(metadata(json));
  });

  test('data points', () => {
    const jsonRows = json.flatMap(dataPointRows);
    const parquetRows = parquet.flatMap(dataPointRows);
    expect(jsonRows.length).toBeGreaterThan(100);
    // OTLP/protobuf keeps everything OTLP/JSON does.
    expect(proto.flatMap(dataPointRows)).toEqual(jsonRows);
    // Every metric made it, the hand-made ones too (lone surrogates as U+FFFD).
    expect(new Set(parquetRows.map((r) => r.metric))).toEqual(
      new Set([
        ...['int.counter', 'double.counter', 'updown', 'int.updown', 'gauge', 'int.gauge'],
        ...['histogram', 'one.bucket', 'signed.histogram'],
        ...['exp.wide', 'exp.zeros', 'exp.signed', 'small.exp', 'exp.nothing'],
        ...['name \ufffd', '', 'dup'],
      ]),
    );
    // Documented, and all the Parquet rows may differ by: attribute values (the resource's and
    // the point's) as text, times cut to whole microseconds.
    const normalised = jsonRows.map(
      (row): PointRow => ({
        ...row,
        resource: asText(row.resource) as PointRow['resource'],
        attributes: asText(row.attributes) as PointRow['attributes'],
        time: micros(row.time),
        start: micros(row.start),
      }),
    );
    expect(inOrder(parquetRows)).toEqual(inOrder(normalised));
    expect(parquetRows.filter((r) => r.metric === 'small.exp')[0]?.count).toBe(9);
    // Compressed pages, in many row groups, read as the same rows.
    expect(zstdParquet.flatMap(dataPointRows)).toEqual(parquetRows);
    // Appended from the decoded OTLP/JSON requests (what compaction does), not from the SDK's.
    expect(inOrder(fromRequests.flatMap(dataPointRows))).toEqual(inOrder(parquetRows));
  });

  // Each jsonl line is a row as JSON writes it (docs/reading.md: a NaN or an infinity `null`,
  // -0 `0`), so the CLI gives each format's rows, which the test above compares.
  test('otel-s3 points --format jsonl prints those rows, from either format', async () => {
    for (const [name, requests] of [
      ['json', json],
      ['proto', proto],
      ['parquet', parquet],
      ['zstd', zstdParquet],
      ['requests', fromRequests],
    ] as const) {
      const args = ['points', '--dir', join(dir, name), '--prefix', 'p', '--format', 'jsonl'];
      const { code, stdout, stderr } = await runCliInProcess(args, { cwd: dir });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const printed = stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as PointRow);
      const rows = JSON.parse(JSON.stringify(requests.flatMap(dataPointRows))) as PointRow[];
      expect(inOrder(printed)).toEqual(inOrder(rows));
    }
  });
});
