import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeAll, expect, test } from 'vitest';
import { compactMetrics } from '../../src/compact/index.js';
import { type Compression, type Format, S3MetricExporter } from '../../src/index.js';
import { dataPointRows, listMetricObjects, readMetrics } from '../../src/reader.js';
import { compactOptions } from '../support/compaction-data.js';
import { exportEveryCombination } from '../support/exported-objects.js';
import { renderKey } from '../support/layout-fixtures.js';
import {
  collect,
  encodeObject,
  instrumentValues,
  recordedValues,
  sampleMetrics,
} from '../support/reader-fixtures.js';
import { connection, describeS3, s3Server, skipReason, testClient, withS3 } from '../support/s3.js';
import { recordingProvider } from '../support/service.js';
import { SETTLED_HOUR } from '../support/time.js';

if (!s3Server) console.warn(`reader listing tests skipped: ${skipReason}`);

/** Counts the ListObjectsV2 requests `client` sends. */
function countLists(client: S3Client): { lists: number } {
  const count = { lists: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ListObjectsV2Command') count.lists++;
      return next(args);
    },
    { step: 'initialize' },
  );
  return count;
}

/** Every key under `prefix/`, as the server lists them (all pages). */
async function serverKeys(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return keys;
}

async function putAll(client: S3Client, bucket: string, keys: string[], body: Uint8Array) {
  const queue = [...keys];
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      }
    }),
  );
}

describeS3('the reader against a real S3 server: listing and time bounds', () => {
  let client: S3Client;
  let bucket: string;
  let body: Uint8Array;

  withS3('reader-listing', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    body = encodeObject(await sampleMetrics(), 'otlp-json', 'none');
  });

  test('1,050 objects under one prefix: S3 pages at 1,000, every object is read once, in key order', async () => {
    // Two hours, so that a page ends inside the first: 700 + 350 objects, 5 ms apart.
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
    const times = [
      ...Array.from({ length: 700 }, (_, i) => hour + 1_000 + i * 5),
      ...Array.from({ length: 350 }, (_, i) => hour + 3_600_000 + 1_000 + i * 5),
    ];
    const keys = times.map((t) => renderKey({ prefix: 'many' }, new Date(t), '.json'));
    await putAll(client, bucket, keys, body);
    const stored = await serverKeys(client, bucket, 'many');
    expect(stored).toHaveLength(1_050);

    const reader = testClient();
    const count = countLists(reader);
    try {
      const read = await collect(
        readMetrics({ bucket, prefix: 'many', s3Client: reader, concurrency: 32 }),
      );
      expect(read.map((o) => o.key)).toEqual(stored);
      expect(new Set(read.map((o) => o.key)).size).toBe(1_050);
      expect(count.lists).toBe(2);
      // A range that starts in the first hour: StartAfter, then a continuation token.
      const from = new Date(times[100] as number);
      const to = new Date((times[1_000] as number) + 1);
      const ranged = await collect(
        listMetricObjects({ bucket, prefix: 'many', s3Client: reader, from, to }),
      );
      expect(ranged.map((o) => o.key)).toEqual(stored.slice(100, 1_001));
    } finally {
      reader.destroy();
    }
  });

  test.each([
    ['spaces, +, %, = and unicode', 'esc/checkout api+v2/100% ü=ß 日本'],
    ['an encoded-looking prefix', 'esc/a%2Fb+%20c'],
  ])(
    'a prefix with %s: the exporter writes, the reader lists and reads it, with and without a range',
    async (_name, prefix) => {
      const from = new Date();
      const exporter = new S3MetricExporter({ bucket, prefix, ...connection() });
      const { provider } = recordingProvider(exporter, 'checkout api+v2');
      provider.getMeter('m').createCounter('orders').add(3);
      await provider.shutdown();
      const to = new Date(Date.now() + 1);
      expect(exporter.stats().batchesUploaded).toBe(1);
      const stored = await serverKeys(client, bucket, prefix);
      expect(stored).toHaveLength(1);
      expect(stored[0]?.startsWith(`${prefix}/year=`)).toBe(true);

      for (const range of [{}, { from, to }]) {
        const stream = readMetrics({ bucket, prefix, ...connection(), ...range });
        const read = await collect(stream);
        expect(read.map((o) => o.key)).toEqual(stored);
        expect(stream.stats.keysSkipped).toBe(0);
        const rows = dataPointRows(read[0]?.request ?? {});
        expect(rows.map((r) => [r.resource['service.name'], r.metric, r.value])).toEqual([
          ['checkout api+v2', 'orders', 3],
        ]);
      }
    },
  );

  test('a key template with service.name "checkout api+v2": stored under its sanitized value, read by the template', async () => {
    const keyTemplate = 'year=%Y/month=%m/day=%d/hour=%H/{service.name}/metrics_{uuid}';
    const from = new Date();
    const exporter = new S3MetricExporter({ bucket, prefix: 'svc', ...connection(), keyTemplate });
    const { provider } = recordingProvider(exporter, 'checkout api+v2 ü=%');
    provider.getMeter('m').createCounter('orders').add(5);
    await provider.shutdown();
    const to = new Date(Date.now() + 1);
    const stored = await serverKeys(client, bucket, 'svc');
    expect(stored).toEqual([
      expect.stringMatching(/\/checkout_api_v2____\/metrics_[0-9a-f-]{36}\.json\.zst$/),
    ]);
    const read = await collect(
      readMetrics({ bucket, prefix: 'svc', ...connection(), keyTemplate, from, to }),
    );
    expect(read.map((o) => [o.key, o.attributes])).toEqual([
      [stored[0], { 'service.name': 'checkout_api_v2____' }],
    ]);
    expect(dataPointRows(read[0]?.request ?? {}).map((r) => r.value)).toEqual([5]);
  });

  test('from and to on partition boundaries: hh:00:00.000 is in [hh:00, hh+1:00), hh:59:59.999 too, their neighbours not', async () => {
    const hh = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 5 * 3_600_000;
    const at = {
      before: hh - 1,
      first: hh,
      last: hh + 3_600_000 - 1,
      after: hh + 3_600_000,
    };
    const keys: Record<string, Record<keyof typeof at, string>> = {};
    // The OTLP minute layout and Parquet's hour layout (a Parquet name: listed, not read).
    for (const [layout, template, extension] of [
      ['minute', undefined, '.json'],
      ['hour', 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_{uuid}', '.parquet'],
    ] as const) {
      const entries = Object.entries(at).map(([name, t]) => [
        name,
        renderKey({ prefix: 'bounds', keyTemplate: template }, new Date(t), extension),
      ]);
      keys[layout] = Object.fromEntries(entries) as Record<keyof typeof at, string>;
      await putAll(client, bucket, Object.values(keys[layout]), body);
    }
    const { minute, hour } = keys as Record<'minute' | 'hour', Record<keyof typeof at, string>>;
    const list = async (from: number, to: number, format?: 'otlp-json' | 'parquet') =>
      (
        await collect(
          listMetricObjects({
            bucket,
            prefix: 'bounds',
            ...connection(),
            from: new Date(from),
            to: new Date(to),
            ...(format === undefined ? {} : { format }),
          }),
        )
      )
        .map((o) => o.key)
        .sort();
    const hourOf = (k: Record<keyof typeof at, string>) => [k.first, k.last];
    expect(await list(at.first, at.after)).toEqual([...hourOf(minute), ...hourOf(hour)].sort());
    // A format picks its own layout: the other one's keys are out of it.
    expect(await list(at.first, at.after, 'otlp-json')).toEqual(hourOf(minute).sort());
    expect(await list(at.first, at.after, 'parquet')).toEqual(hourOf(hour).sort());
    // One millisecond either way moves one object out or in.
    expect(await list(at.first + 1, at.after)).toEqual([minute.last, hour.last].sort());
    expect(await list(at.first, at.last)).toEqual([minute.first, hour.first].sort());
    expect(await list(at.before, at.after + 1)).toEqual(
      [...Object.values(minute), ...Object.values(hour)].sort(),
    );
    expect(await list(at.last, at.after)).toEqual([minute.last, hour.last].sort());
    expect(await list(at.after, at.after + 1)).toEqual([minute.after, hour.after].sort());
  });

  test('every format and compression under one prefix, Parquet included: one stream, each point once', async () => {
    const combinations = [
      ...(['otlp-json', 'otlp-proto'] as const).flatMap((f) =>
        (['zstd', 'gzip', 'none'] as const).map((c): [Format, Compression] => [f, c]),
      ),
      ['parquet', 'zstd'],
      ['parquet', 'none'],
    ] as [Format, Compression][];
    const exported = await exportEveryCombination(bucket, 'mixed', combinations);
    const stream = readMetrics({ bucket, prefix: 'mixed', ...connection() });
    const read = await collect(stream);
    expect(read).toHaveLength(combinations.length);
    expect(stream.stats).toMatchObject({ objectsRead: 8, objectsUnreadable: 0, keysSkipped: 0 });
    for (const { service, recorded } of exported) {
      const rows = read.flatMap((o) =>
        dataPointRows(o.request).filter((r) => r.resource['service.name'] === service),
      );
      expect(instrumentValues(rows), service).toEqual(recordedValues(service, recorded));
    }
    expect(read.map((o) => o.encoding.format).sort()).toEqual(combinations.map(([f]) => f).sort());
  });

  test('a compaction output beside the OTLP objects it replaces, read with a range inside its hour: each point once', async () => {
    const prefix = 'ranged-compact';
    const minutes = [5, 15, 25, 35, 45, 55];
    const keys = minutes.map((m) =>
      renderKey({ prefix }, new Date(SETTLED_HOUR + m * 60_000 + 7), '.json'),
    );
    await putAll(client, bucket, keys, body);
    const points = async (range: { from?: Date; to?: Date }) => {
      const stream = readMetrics({ bucket, prefix, ...connection(), ...range });
      const read = await collect(stream);
      const rows = read.reduce((n, o) => n + dataPointRows(o.request).length, 0);
      return { keys: read.map((o) => o.key), rows, stats: stream.stats };
    };
    const before = await points({});
    expect(before.keys).toEqual(keys);

    const report = await compactMetrics(
      compactOptions(
        connection(),
        { bucket, prefix, fromMillis: SETTLED_HOUR },
        { partitionTime: 'upload' },
      ),
    );
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const stored = await serverKeys(client, bucket, prefix);
    const outputs = stored.filter((k) => k.endsWith('.compacted.parquet'));
    expect(outputs).toHaveLength(1);
    // The OTLP inputs are kept beside the output.
    expect(stored.filter((k) => keys.includes(k))).toEqual(keys);

    for (const range of [
      {},
      { from: new Date(SETTLED_HOUR + 20 * 60_000), to: new Date(SETTLED_HOUR + 40 * 60_000) },
    ]) {
      const after = await points(range);
      // The output holds the whole hour: it is read once, in place of every input.
      expect(after.keys).toEqual(outputs);
      expect(after.rows).toBe(before.rows);
      expect(after.stats.objectsReplaced).toBeGreaterThan(0);
    }
  });
});
