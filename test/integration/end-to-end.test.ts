import type { S3Client } from '@aws-sdk/client-s3';
import { ExportResultCode } from '@opentelemetry/core';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { expect, test } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import { dataPointRows, metricKeyParser } from '../../src/reader.js';
import {
  COMPRESSIONS,
  EXTENSION,
  FORMATS,
  type RawPointRow,
  rawRows,
} from '../support/reader-fixtures.js';
import {
  connection,
  decodeStored,
  describeS3,
  expectStoredAsRecorded,
  listAndFetch,
  s3Server,
  skipReason,
  withS3,
} from '../support/s3.js';
import {
  manualProvider,
  recordEveryInstrument,
  recordingProvider,
  sequenceGauge,
} from '../support/service.js';

if (!s3Server) console.warn(`end-to-end tests skipped: ${skipReason}`);

function byMetric(rows: RawPointRow[], metric: string): RawPointRow[] {
  return rows.filter((r) => r.metric === metric);
}

describeS3('S3MetricExporter end to end against a real S3 server', () => {
  let client: S3Client;
  let bucket: string;

  withS3('e2e', (s) => ({ client, bucket } = s));
  /** An exporter on the test server's bucket, under `prefix`. */
  const exporterAt = (prefix: string, options: Partial<S3MetricExporterOptions> = {}) =>
    new S3MetricExporter({ bucket, prefix, ...connection(), ...options });

  for (const format of FORMATS) {
    for (const compression of COMPRESSIONS) {
      test(`${format} + ${compression}: one request per object, key in the layout, every instrument's values`, async () => {
        const prefix = `e2e/${format}-${compression}`;
        const exporter = exporterAt(prefix, { format, compression });
        const { provider, exported } = recordingProvider(exporter);
        recordEveryInstrument(provider);
        const before = new Date();
        await provider.forceFlush();
        const after = new Date();
        const objects = await listAndFetch(client, bucket, `${prefix}/`);
        await provider.shutdown(); // collects and uploads once more, after the read-back
        expect(objects).toHaveLength(1);
        // The object, read by decoders independent of src/, is the collection the SDK exported.
        expectStoredAsRecorded(objects, exported.slice(0, 1));
        const [object] = objects;
        if (object === undefined) throw new Error('unreachable');

        const parsed = metricKeyParser({ prefix })(object.key);
        expect(parsed, object.key).toBeDefined();
        expect(object.key.startsWith(`${prefix}/year=`)).toBe(true);
        expect(parsed?.extension).toBe(EXTENSION[format] + EXTENSION[compression]);
        const partition = parsed?.partition?.start.getTime() ?? Number.NaN;
        expect(parsed?.partition?.end.getTime()).toBe(partition + 60_000);
        expect(partition).toBeGreaterThanOrEqual(Math.floor(before.getTime() / 60_000) * 60_000);
        expect(partition).toBeLessThanOrEqual(after.getTime());

        const request = decodeStored(object);
        expect(Object.keys(request)).toEqual(['resourceMetrics']);
        expect(request.resourceMetrics).toHaveLength(1);
        const rows = rawRows(request);
        expect(rows.every((r) => r.resource['service.name'] === 'test-service')).toBe(true);
        expect(rows.every((r) => r.scope === 'test-meter')).toBe(true);

        const requests = byMetric(rows, 'http.requests');
        expect(requests.map((r) => [r.attributes.route, r.value]).sort()).toEqual([
          ['/a', 12],
          ['/b', 1],
        ]);
        expect(requests[0]).toMatchObject({
          type: 'sum',
          monotonic: true,
          temporality: 'cumulative',
          unit: '{request}',
        });

        const active = byMetric(rows, 'http.active');
        expect(active).toHaveLength(1);
        expect(active[0]).toMatchObject({ type: 'sum', monotonic: false, value: 7 });

        const temperature = byMetric(rows, 'cpu.temperature');
        expect(temperature).toHaveLength(1);
        expect(temperature[0]).toMatchObject({
          type: 'gauge',
          value: 42.5,
          attributes: { host: 'h1' },
        });

        const latency = byMetric(rows, 'http.latency');
        expect(latency).toHaveLength(1);
        expect(latency[0]).toMatchObject({
          type: 'histogram',
          count: 3,
          sum: 333,
          min: 3,
          max: 300,
        });
        const bounds = latency[0]?.explicitBounds ?? [];
        const counts = latency[0]?.bucketCounts ?? [];
        expect(counts).toHaveLength(bounds.length + 1);
        expect(counts.reduce((a, b) => a + b, 0)).toBe(3);
        // Each value sits in the bucket whose upper bound is the first one >= the value.
        for (const v of [3, 30, 300]) {
          const i = bounds.findIndex((b) => v <= b);
          expect(counts[i === -1 ? bounds.length : i]).toBeGreaterThanOrEqual(1);
        }

        const payload = byMetric(rows, 'payload.size');
        expect(payload).toHaveLength(1);
        const p = payload[0];
        expect(p).toMatchObject({
          type: 'exponentialHistogram',
          count: 3,
          sum: 1003,
          min: 1,
          max: 1000,
          zeroCount: 0,
        });
        const positive = p?.positive?.bucketCounts ?? [];
        expect(positive.reduce((a, b) => a + b, 0)).toBe(3);
        // The base-2^(2^-scale) bucket index of each value lies within the populated range.
        const scale = p?.scale ?? 0;
        const offset = p?.positive?.offset ?? 0;
        for (const v of [1, 2, 1000]) {
          const index = Math.ceil(Math.log2(v) * 2 ** scale) - 1;
          expect(index).toBeGreaterThanOrEqual(offset);
          expect(index).toBeLessThan(offset + positive.length);
        }

        const stats = exporter.stats();
        expect(stats.batchesUploaded).toBe(2);
        expect(stats.pointsUploaded).toBe(2 * rows.length);
        expect(stats.pointsDropped).toBe(0);
      });
    }
  }

  test('many batches: every exported collection is stored exactly once', async () => {
    const prefix = 'e2e/many-batches';
    const exporter = exporterAt(prefix, {
      maxBatchBytes: 8 * 1024,
      uploadConcurrency: 4,
    });
    // A fast periodic reader: batches fill by size with several collections each, and seal
    // while earlier ones are still uploading.
    const provider = new MeterProvider({
      readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 20 })],
    });
    // Each collection reports its own sequence number: a missing or doubled collection shows.
    const sequence = sequenceGauge(provider);
    const requests = provider.getMeter('sequence').createCounter('work.done');
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      for (let route = 0; route < 20; route++) requests.add(1, { route: `/r${route}` });
      await new Promise((r) => setTimeout(r, 5));
    }
    await provider.shutdown();
    const collections = sequence();

    const objects = await listAndFetch(client, bucket, `${prefix}/`);
    const stats = exporter.stats();
    expect(collections).toBeGreaterThan(30);
    expect(stats.batchesSealed).toBeGreaterThan(5);
    expect(stats.batchesSealed).toBeLessThan(collections);
    expect(objects).toHaveLength(stats.batchesUploaded);
    expect(new Set(objects.map((o) => o.key)).size).toBe(objects.length);
    const seen = objects.flatMap((o) =>
      dataPointRows(decodeStored(o))
        .filter((r) => r.metric === 'collection.seq')
        .map((r) => r.value),
    );
    expect(seen.sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
      Array.from({ length: collections }, (_, i) => i + 1),
    );
    expect(stats.pointsDropped).toBe(0);
  });

  test('forceFlush() makes everything exported so far visible; nothing is uploaded before', async () => {
    const prefix = 'e2e/force-flush';
    const exporter = exporterAt(prefix, { maxBatchAgeMillis: 3_600_000 });
    const provider = manualProvider(exporter);
    recordEveryInstrument(provider);
    // Collect and export without flushing the exporter: the batch stays open in memory.
    const collected = await new Promise<number>((resolve, reject) => {
      // biome-ignore lint/suspicious/noExplicitAny: reaching the reader's collect() for the test
      const reader = (provider as any)._sharedState.metricCollectors[0]._metricReader;
      reader.collect().then(({ resourceMetrics }: { resourceMetrics: never }) => {
        exporter.export(resourceMetrics, (result) =>
          result.code === ExportResultCode.SUCCESS ? resolve(1) : reject(result.error),
        );
      }, reject);
    });
    expect(collected).toBe(1);
    expect(await listAndFetch(client, bucket, `${prefix}/`)).toHaveLength(0);
    expect(exporter.stats().bufferedBytes).toBeGreaterThan(0);

    await exporter.forceFlush();
    const objects = await listAndFetch(client, bucket, `${prefix}/`);
    expect(objects).toHaveLength(1);
    expect(dataPointRows(decodeStored(objects[0] as never)).length).toBe(5 + 0 + 1);
    await provider.shutdown();
  });

  test('shutdown() uploads what is pending; then export() answers FAILED, shutdown() and forceFlush() are no-ops', async () => {
    const prefix = 'e2e/shutdown';
    const exporter = exporterAt(prefix, { maxBatchAgeMillis: 3_600_000 });
    const provider = manualProvider(exporter);
    recordEveryInstrument(provider);
    await provider.shutdown();
    const objects = await listAndFetch(client, bucket, `${prefix}/`);
    expect(objects).toHaveLength(1);
    expect(
      dataPointRows(decodeStored(objects[0] as never))
        .map((r) => r.metric)
        .sort(),
    ).toEqual([
      'cpu.temperature',
      'http.active',
      'http.latency',
      'http.requests',
      'http.requests',
      'payload.size',
    ]);
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      exporter.export({ resource: undefined as never, scopeMetrics: [] }, resolve),
    );
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/after shutdown/);
    // A second shutdown is the same promise (not a second run); a late forceFlush resolves at
    // once; neither changes anything.
    expect(exporter.shutdown()).toBe(exporter.shutdown());
    const again = performance.now();
    await exporter.shutdown();
    await exporter.forceFlush();
    expect(performance.now() - again).toBeLessThan(50);
    expect(await listAndFetch(client, bucket, `${prefix}/`)).toHaveLength(1);
  });

  test('a batch is sealed and uploaded by age without any flush', async () => {
    const prefix = 'e2e/by-age';
    const exporter = exporterAt(prefix, { maxBatchAgeMillis: 300 });
    const provider = manualProvider(exporter);
    recordEveryInstrument(provider);
    // biome-ignore lint/suspicious/noExplicitAny: reaching the reader's collect() for the test
    const reader = (provider as any)._sharedState.metricCollectors[0]._metricReader;
    const { resourceMetrics } = await reader.collect();
    exporter.export(resourceMetrics, () => {});
    const deadline = Date.now() + 10_000;
    let objects = await listAndFetch(client, bucket, `${prefix}/`);
    while (objects.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      objects = await listAndFetch(client, bucket, `${prefix}/`);
    }
    expect(objects).toHaveLength(1);
    await provider.shutdown();
  });
});
