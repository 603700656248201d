import { gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeAll, expect, test } from 'vitest';
import { objectName } from '../../src/layout/formats.js';
import {
  dataPointRows,
  listMetricObjects,
  type MetricObject,
  ReadAccessError,
  readMetrics,
  type UnreadableObject,
} from '../../src/reader.js';
import { type Exported, exportEveryCombination } from '../support/exported-objects.js';
import { renderKey } from '../support/layout-fixtures.js';
import { collect, instrumentValues, keyAt, recordedValues } from '../support/reader-fixtures.js';
import { connection, describeS3, s3Server, skipReason, testClient, withS3 } from '../support/s3.js';

if (!s3Server) console.warn(`reader round-trip tests skipped: ${skipReason}`);

/** Records the input of every command `client` sends, by command name. */
function recordCommands(client: S3Client): { name: string; input: Record<string, unknown> }[] {
  const sent: { name: string; input: Record<string, unknown> }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push({ name: context.commandName ?? '', input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize' },
  );
  return sent;
}

const serviceOf = (object: MetricObject) =>
  dataPointRows(object.request)[0]?.resource['service.name'];

describeS3('readMetrics against a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  let exported: Exported[];
  let objects: MetricObject[];

  withS3('reader', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    exported = await exportEveryCombination(bucket, 'rt');
    objects = await collect(readMetrics({ bucket, prefix: 'rt', ...connection() }));
  });

  test('every instrument type, both formats, all compressions: read back as the exporter recorded them', () => {
    expect(objects).toHaveLength(exported.length);
    for (const { service, format, compression, recorded } of exported) {
      const object = objects.find((o) => serviceOf(o) === service);
      expect(object, service).toBeDefined();
      expect(object?.encoding).toEqual({ format, compression });
      expect(object?.key.endsWith(objectName(format, compression).extension)).toBe(true);
      const values = instrumentValues(dataPointRows(object?.request ?? {}));
      expect(values).toEqual(recordedValues(service, recorded));
    }
  });

  test('objects come in key order, each with its UUIDv7 time, stored size and uncompressed size', async () => {
    expect(objects.map((o) => o.key)).toEqual(objects.map((o) => o.key).sort());
    for (const object of objects) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: object.key }));
      const stored = await got.Body?.transformToByteArray();
      expect(object.size).toBe(stored?.length);
      expect(Buffer.from(object.bytes).equals(Buffer.from(stored ?? []))).toBe(true);
      const id = /metrics_([0-9a-f-]{36})/.exec(object.key)?.[1] ?? '';
      expect(object.time.getTime()).toBe(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16));
    }
    const plain = objects.filter((o) => o.encoding.compression === 'none');
    for (const o of plain) expect(o.rawBytes).toBe(o.size);
  });

  test('from and to select objects by their time to the millisecond', async () => {
    const times = objects.map((o) => o.time.getTime());
    const from = new Date(times[1] as number);
    const to = new Date(times[4] as number);
    const inRange = await collect(readMetrics({ bucket, prefix: 'rt', from, to, ...connection() }));
    const expected = objects.filter((o) => o.time >= from && o.time < to).map((o) => o.key);
    expect(inRange.map((o) => o.key)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(objects.length);
  });

  test('lists only the partitions the range can hold and fetches only the objects in it', async () => {
    const now = Date.now();
    const from = new Date(now - 10 * 60_000);
    const to = new Date(now + 60_000);
    const keys = {
      old: keyAt('range', new Date(now - 2 * 3_600_000), '.json.zst'),
      // Sealed in the minute before `from`, named (UUIDv7) just after it: inside the range.
      lateName: keyAt(
        'range',
        new Date(from.getTime() + 20),
        '.json.zst',
        new Date(from.getTime() - 60_000),
      ),
      inside: keyAt('range', new Date(now - 60_000), '.json.zst'),
      future: keyAt('range', new Date(now + 2 * 3_600_000), '.json.zst'),
    };
    const zstdJson = objects.find((o) => o.key.endsWith('.json.zst'))?.bytes;
    for (const Key of Object.values(keys)) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: zstdJson }));
    }

    const reader = testClient();
    const sent = recordCommands(reader);
    try {
      // The OTLP formats' minute layout alone: without a format the listing starts at the hour
      // (Parquet's partitions are read too).
      const read = await collect(
        readMetrics({ bucket, prefix: 'range', format: 'otlp-json', from, to, s3Client: reader }),
      );
      expect(read.map((o) => o.key)).toEqual([keys.lateName, keys.inside].sort());
      const lists = sent.filter((c) => c.name === 'ListObjectsV2Command');
      expect(lists).toHaveLength(1);
      expect(lists[0]?.input).toMatchObject({
        Prefix: 'range/',
        // The hour directory of from − 1 min's partition: compaction outputs are filed there,
        // and every key of that minute or later sorts after it.
        StartAfter: renderKey({ prefix: 'range' }, new Date(from.getTime() - 60_000), '').replace(
          /\/minute=.*$/,
          '',
        ),
      });
      const gets = sent.filter((c) => c.name === 'GetObjectCommand').map((c) => c.input.Key);
      expect(gets.sort()).toEqual([keys.lateName, keys.inside].sort());
    } finally {
      reader.destroy();
    }
  });

  test("partitionTime 'data': objects filed minutes before their seal time are found by a range that starts after their partition", async () => {
    const sealed = Date.now() - 5 * 60_000;
    const zstdJson = objects.find((o) => o.key.endsWith('.json.zst'))?.bytes;
    const key = (sealedAt: number, dataAgeMillis: number) =>
      renderKey({ prefix: 'data' }, new Date(sealedAt), '.json.zst', {
        partition: new Date(sealedAt - dataAgeMillis),
      });
    const keys = {
      // Partitions 2.5 and 3 minutes before the seal times: a minute or more before the
      // partition of from − 1 min, where the old listing started, whatever the clock says now.
      twoAndAHalf: key(sealed, 150_000),
      three: key(sealed + 1_000, 3 * 60_000),
      sealedBefore: key(sealed - 31_000, 2 * 60_000),
    };
    for (const Key of Object.values(keys)) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: zstdJson }));
    }
    const range = { from: new Date(sealed - 30_000), to: new Date(sealed + 60_000) };

    const reader = testClient();
    const sent = recordCommands(reader);
    try {
      const options = {
        bucket,
        prefix: 'data',
        format: 'otlp-json' as const,
        ...range,
        s3Client: reader,
      };
      const read = await collect(readMetrics({ ...options, partitionTime: 'data' }));
      expect(read.map((o) => o.key)).toEqual([keys.twoAndAHalf, keys.three].sort());
      expect(read.every((o) => o.time >= range.from && o.time < range.to)).toBe(true);
      const [list] = sent.filter((c) => c.name === 'ListObjectsV2Command');
      // maxBatchAgeMillis + the export interval + 1 min, the defaults: 3 min before from; the
      // listing starts at that partition's hour directory, where compaction outputs are filed.
      expect(list?.input.StartAfter).toBe(
        renderKey({ prefix: 'data' }, new Date(range.from.getTime() - 3 * 60_000), '').replace(
          /\/minute=.*$/,
          '',
        ),
      );
      // Read as partitionTime 'upload', they are before the listing starts.
      expect(await collect(listMetricObjects(options))).toEqual([]);
    } finally {
      reader.destroy();
    }
  });

  test('an unreadable object is reported through onError and skipped; the others are read', async () => {
    const [good] = objects.filter((o) => o.key.endsWith('.json.zst'));
    const t = Date.now();
    const keys = {
      good: keyAt('broken', new Date(t), '.json.zst'),
      badZstd: keyAt('broken', new Date(t + 1), '.json.zst'),
      badProto: keyAt('broken', new Date(t + 2), '.binpb.gz'),
    };
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: keys.good, Body: good?.bytes }));
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: keys.badZstd, Body: 'not zstd' }),
    );
    // A valid gzip stream of invalid protobuf.
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: keys.badProto,
        Body: gzipSync(Buffer.from([0x0a, 0xff, 0xff, 0x7f])),
      }),
    );
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({
      bucket,
      prefix: 'broken',
      ...connection(),
      onError: (p) => problems.push(p),
    });
    const read = await collect(stream);
    expect(read.map((o) => o.key)).toEqual([keys.good]);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([
      [keys.badZstd, 'decompress'],
      [keys.badProto, 'decode'],
    ]);
    expect(stream.stats).toMatchObject({ objects: 3, objectsRead: 1, objectsUnreadable: 2 });
  });

  test.each([
    [
      'a wrong secret key',
      { secretAccessKey: 'wrong-secret-key-000000000000000000000000' },
      'bad-credentials',
      /secret key does not match/,
    ],
    [
      'an unknown access key id',
      { accessKeyId: 'NOSUCHKEY00000000000' },
      'bad-credentials',
      /access key id is unknown/,
    ],
  ])(
    '%s is a ReadAccessError that says to check the credentials',
    async (_name, override, reason, hint) => {
      const c = connection();
      const credentials = {
        ...(c.credentials as { accessKeyId: string; secretAccessKey: string }),
        ...override,
      };
      const error = await collect(readMetrics({ bucket, prefix: 'rt', ...c, credentials })).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ReadAccessError);
      expect(error).toMatchObject({ reason });
      expect((error as Error).message).toMatch(hint);
    },
  );

  test('a missing bucket is a ReadAccessError that says the bucket does not exist', async () => {
    const error = await collect(
      listMetricObjects({ bucket: `${bucket}-missing`, ...connection() }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReadAccessError);
    expect(error).toMatchObject({ reason: 'no-such-bucket' });
    expect((error as Error).message).toMatch(
      /NoSuchBucket \(HTTP 404\); the bucket does not exist/,
    );
  });
});
