import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { objectName } from '../../../src/layout/formats.js';
import {
  dataPointRows,
  InvalidOptionError,
  listMetricObjects,
  type MetricObject,
  ObjectGoneError,
  ReadAccessError,
  readMetrics,
  type UnreadableObject,
} from '../../../src/reader.js';
import { FakeS3 } from '../../support/fake-s3-client.js';
import {
  COMPRESSIONS,
  collect,
  encodeObject,
  FORMATS,
  instrumentValues,
  keyAt,
  recordedValues,
  withSampleInDir,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import { s3Error } from '../../support/s3-error.js';
import { READER_T0, timesAfter } from '../../support/time.js';
import { waitFor } from '../../support/wait.js';
import { zstdCompress } from '../../support/zstd.js';

const at = timesAfter(READER_T0);

let rm1: ResourceMetrics;
let dir: string;
withSampleInDir('otel-s3-reader-', (made) => ({ rm1, dir } = made));

/** A fake bucket holding `n` valid JSON objects one second apart from T0, under prefix `p`. */
function fakeBucket(n: number): FakeS3 {
  const s3 = new FakeS3();
  const bytes = encodeObject(rm1, 'otlp-json', 'gzip');
  for (let i = 0; i < n; i++) s3.put(keyAt('p', at(i * 1000), '.json.gz'), bytes);
  return s3;
}

describe('readMetrics from a directory laid out like the bucket', () => {
  test('decodes both formats and every compression to the recorded values, in key order', async () => {
    const root = join(dir, 'all');
    const written: string[] = [];
    let i = 0;
    for (const format of FORMATS) {
      for (const compression of COMPRESSIONS) {
        const key = keyAt('prod/app', at(i++ * 1000), objectName(format, compression).extension);
        await writeAtKey(root, key, encodeObject(rm1, format, compression));
        written.push(key);
      }
    }
    const stream = readMetrics({ dir: root, prefix: '/prod/app/' });
    const objects = await collect(stream);

    expect(objects.map((o) => o.key)).toEqual(written.sort());
    for (const object of objects) {
      const values = instrumentValues(dataPointRows(object.request));
      expect(values).toEqual(recordedValues('test-service', rm1));
      const ext = object.key.slice(object.key.indexOf('.'));
      const { format, compression } = object.encoding;
      expect(ext).toBe(objectName(format, compression).extension);
    }
    expect(stream.stats).toMatchObject({
      objects: 6,
      objectsRead: 6,
      objectsUnreadable: 0,
      keysSkipped: 0,
      bytes: objects.reduce((sum, o) => sum + o.size, 0),
    });
    // rawBytes: the uncompressed JSON is the same size as the object stored uncompressed.
    const plainJson = objects.find((o) => o.key.endsWith('.json'));
    const zstdJson = objects.find((o) => o.key.endsWith('.json.zst'));
    expect(zstdJson?.rawBytes).toBe(plainJson?.size);
  });

  test('from and to filter on the UUIDv7 time to the millisecond; a key filed a minute earlier still counts', async () => {
    const root = join(dir, 'range');
    const bytes = encodeObject(rm1, 'otlp-json', 'none');
    const from = new Date('2026-03-04T05:10:00.000Z');
    const to = new Date('2026-03-04T05:20:00.000Z');
    const keys = {
      before: keyAt('p', new Date(from.getTime() - 1), '.json'),
      atFrom: keyAt('p', from, '.json'),
      // Sealed at 05:09:59.9 (partition minute 09), named after compression at 05:10:00.050.
      lateName: keyAt('p', new Date(from.getTime() + 50), '.json', new Date(from.getTime() - 100)),
      inside: keyAt('p', new Date('2026-03-04T05:15:00Z'), '.json'),
      lastMilli: keyAt('p', new Date(to.getTime() - 1), '.json'),
      atTo: keyAt('p', to, '.json'),
    };
    for (const key of Object.values(keys)) await writeAtKey(root, key, bytes);

    const read = await collect(readMetrics({ dir: root, prefix: 'p', from, to }));
    expect(read.map((o) => o.key).sort()).toEqual(
      [keys.atFrom, keys.lateName, keys.inside, keys.lastMilli].sort(),
    );
    expect(read.every((o) => o.time >= from && o.time < to)).toBe(true);
  });

  test('unreadable objects go to onError with their stage, are skipped and counted; the rest is read', async () => {
    const root = join(dir, 'broken');
    const good = encodeObject(rm1, 'otlp-json', 'zstd');
    const json = encodeObject(rm1, 'otlp-json', 'none');
    const broken = {
      zstd: [keyAt('p', at(1), '.json.zst'), Buffer.from('not zstd at all')],
      gzip: [keyAt('p', at(2), '.json.gz'), gzipSync(json).subarray(0, 40)],
      json: [keyAt('p', at(3), '.json'), Buffer.from('{"resourceMetrics":[\n')],
      twoLines: [keyAt('p', at(4), '.json.zst'), zstdCompress(Buffer.concat([json, json]))],
      proto: [keyAt('p', at(5), '.binpb'), Buffer.from([0x0a, 0xff, 0xff, 0x01])],
    } as const;
    const goodKeys = [keyAt('p', at(0), '.json.zst'), keyAt('p', at(6), '.json.zst')];
    for (const key of goodKeys) await writeAtKey(root, key, good);
    for (const [key, bytes] of Object.values(broken)) await writeAtKey(root, key, bytes);

    const problems: UnreadableObject[] = [];
    const stream = readMetrics({ dir: root, prefix: 'p', onError: (p) => problems.push(p) });
    const read = await collect(stream);

    expect(read.map((o) => o.key)).toEqual(goodKeys);
    const stages = Object.fromEntries(problems.map((p) => [p.key, p.stage]));
    expect(stages).toEqual({
      [broken.zstd[0]]: 'decompress',
      [broken.gzip[0]]: 'decompress',
      [broken.json[0]]: 'decode',
      [broken.twoLines[0]]: 'decode',
      [broken.proto[0]]: 'decode',
    });
    expect(problems.find((p) => p.key === broken.twoLines[0])?.error.message).toMatch(
      /expected one JSON line, found 2/,
    );
    expect(stream.stats).toMatchObject({ objects: 7, objectsRead: 2, objectsUnreadable: 5 });
  });

  test('keys not in the layout, and keys under a deeper prefix, are skipped and counted', async () => {
    const root = join(dir, 'foreign');
    const bytes = encodeObject(rm1, 'otlp-json', 'none');
    const mine = keyAt('p', at(0), '.json');
    await writeAtKey(root, mine, bytes);
    await writeAtKey(root, 'p/README.txt', Buffer.from('hello'));
    await writeAtKey(root, keyAt('p/deeper', at(0), '.json'), bytes);
    await writeAtKey(root, keyAt('other', at(0), '.json'), bytes);

    const stream = listMetricObjects({ dir: root, prefix: 'p' });
    expect((await collect(stream)).map((o) => o.key)).toEqual([mine]);
    expect(stream.stats).toMatchObject({ objects: 1, keysSkipped: 2, otherPrefixes: ['p/deeper'] });
  });

  test('a missing directory is a ReadAccessError that says so', async () => {
    const error = await collect(readMetrics({ dir: join(dir, 'nope') })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReadAccessError);
    expect(error).toMatchObject({ reason: 'no-such-directory' });
    expect((error as Error).message).toMatch(/does not exist/);
  });
});

describe('readMetrics listing S3', () => {
  test('starts after the partition before from and stops paginating past the partition of to', async () => {
    const s3 = new FakeS3();
    s3.pageSize = 2;
    const bytes = encodeObject(rm1, 'otlp-json', 'none');
    const from = new Date('2026-03-04T06:00:00Z');
    const to = new Date('2026-03-04T06:01:00Z');
    const inside = [keyAt('p', new Date('2026-03-04T06:00:10Z'), '.json')];
    for (let h = 0; h < 5; h++)
      s3.put(keyAt('p', new Date(Date.UTC(2026, 2, 4, h)), '.json'), bytes);
    s3.put(inside[0] as string, bytes);
    for (let m = 5; m < 25; m++)
      s3.put(keyAt('p', new Date(Date.UTC(2026, 2, 4, 6, m)), '.json'), bytes);

    // The OTLP formats' minute layout alone (without a format, Parquet's hours are read too).
    const read = await collect(
      readMetrics({
        bucket: 'b',
        prefix: 'p',
        format: 'otlp-json',
        from,
        to,
        s3Client: s3.asClient(),
      }),
    );
    expect(read.map((o) => o.key)).toEqual(inside);
    expect(s3.listCalls[0]).toMatchObject({
      Bucket: 'b',
      Prefix: 'p/',
      // The hour of from - 1 min, without the "/" that keys filed under it go on with: its
      // compaction outputs sort before its minutes (of which only minute 59 on is read).
      StartAfter: 'p/year=2026/month=03/day=04/hour=05',
    });
    // Page 1: the inside key and the first one past; the 19 later keys are never listed.
    expect(s3.listCalls).toHaveLength(1);
    expect(s3.getCalls).toEqual(inside);
    expect(s3.destroyed).toBe(false); // the caller's client is the caller's to destroy
  });

  test('fetches at most `concurrency` objects at once, and holds no more than that while the consumer works', async () => {
    const s3 = fakeBucket(10);
    s3.manual = true;
    const stream = readMetrics({
      bucket: 'b',
      prefix: 'p',
      concurrency: 3,
      s3Client: s3.asClient(),
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = iterator.next();
    await waitFor(() => s3.pending.length === 3, 2_000, '3 pending GETs', 2);
    s3.release();
    await first;
    // The consumer holds object 1 and has not asked for more: it and 2 downloads, 3 in all.
    await new Promise((r) => setTimeout(r, 50));
    expect(s3.getCalls).toHaveLength(3);
    for (;;) {
      const next = iterator.next();
      await waitFor(
        () => s3.pending.length > 0 || s3.getCalls.length === 10,
        2_000,
        'a pending GET or all 10 done',
        2,
      );
      while (s3.pending.length > 0) s3.release();
      if ((await next).done) break;
    }
    expect(s3.maxInFlight).toBe(3);
    expect(stream.stats.objectsRead).toBe(10);
  });

  test('fetches 32 small objects at once by default, and large ones only within 32 MiB as listed', async () => {
    const small = fakeBucket(40);
    small.manual = true;
    const reading = collect(readMetrics({ bucket: 'b', prefix: 'p', s3Client: small.asClient() }));
    await waitFor(() => small.pending.length === 32, 2_000, '32 pending GETs', 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(small.pending).toHaveLength(32);
    small.manual = false;
    while (small.pending.length > 0) small.release();
    expect(await reading).toHaveLength(40);

    // Listed at 12 MiB each: two fit in 32 MiB, a third waits until the first is read.
    const large = fakeBucket(6);
    for (const key of large.objects.keys()) large.listedSizes.set(key, 12 * 1024 * 1024);
    large.manual = true;
    const stream = readMetrics({ bucket: 'b', prefix: 'p', s3Client: large.asClient() });
    const iterator = stream[Symbol.asyncIterator]();
    let next = iterator.next();
    await waitFor(() => large.pending.length === 2, 2_000, '2 pending GETs', 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(large.getCalls).toHaveLength(2);
    for (;;) {
      await waitFor(
        () => large.pending.length > 0 || large.getCalls.length === 6,
        2_000,
        'a pending GET or all 6 done',
        2,
      );
      while (large.pending.length > 0) large.release();
      if ((await next).done) break;
      next = iterator.next();
    }
    expect(large.maxInFlight).toBe(2);
    expect(stream.stats.objectsRead).toBe(6);
  });

  test('yields in key order when later objects arrive first', async () => {
    const s3 = fakeBucket(5);
    s3.manual = true;
    const keys = [...s3.objects.keys()].sort();
    const reading = collect(readMetrics({ bucket: 'b', prefix: 'p', s3Client: s3.asClient() }));
    await waitFor(() => s3.pending.length === 5, 2_000, '5 pending GETs', 2);
    for (const key of [...keys].reverse()) s3.release(key);
    expect((await reading).map((o: MetricObject) => o.key)).toEqual(keys);
  });

  test('an AbortSignal ends the iteration with its reason and aborts the downloads in flight', async () => {
    const s3 = fakeBucket(6);
    s3.manual = true;
    const controller = new AbortController();
    const reading = collect(
      readMetrics({ bucket: 'b', prefix: 'p', signal: controller.signal, s3Client: s3.asClient() }),
    );
    await waitFor(() => s3.pending.length === 6, 2_000, '6 pending GETs', 2);
    const signals = s3.pending.map((p) => p.signal);
    controller.abort(new Error('stop now'));
    await expect(reading).rejects.toThrow('stop now');
    expect(signals.every((s) => s?.aborted)).toBe(true);
  });

  test('breaking out of the loop aborts the downloads in flight', async () => {
    const s3 = fakeBucket(6);
    s3.manual = true;
    const reading = (async () => {
      for await (const _object of readMetrics({
        bucket: 'b',
        prefix: 'p',
        s3Client: s3.asClient(),
      })) {
        break;
      }
    })();
    await waitFor(() => s3.pending.length === 6, 2_000, '6 pending GETs', 2);
    const rest = s3.pending.slice(1).map((p) => p.signal);
    s3.release();
    await reading;
    expect(rest.every((s) => s?.aborted)).toBe(true);
  });

  test('a listed object gone when read (NoSuchKey, or a bare 404 to a range) is reported as deleted since the listing, skipped and counted; access errors end the read', async () => {
    const s3 = fakeBucket(3);
    const [k0, k1, k2] = [...s3.objects.keys()].sort();
    s3.put(k1 as string, s3Error('NoSuchKey', 404, 'UnknownError'));
    // Listed over 16 MiB, a Parquet object is read by range: the first range finds it gone.
    const large = keyAt('p', at(2500), '.parquet');
    s3.put(large, s3Error('NotFound', 404, 'UnknownError'));
    s3.listedSizes.set(large, 17 * 1024 * 1024);
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({
      bucket: 'b',
      prefix: 'p',
      s3Client: s3.asClient(),
      onError: (p) => problems.push(p),
    });
    const read = await collect(stream);
    expect(read.map((o) => o.key)).toEqual([k0, k2]);
    const gone =
      'deleted after it was listed (a compaction replaced it during this read?): read again for exact counts';
    expect(problems.map((p) => [p.key, p.stage, p.error.name, p.error.message])).toEqual([
      [k1, 'fetch', 'ObjectGoneError', gone],
      [large, 'fetch', 'ObjectGoneError', gone],
    ]);
    expect(problems.map((p) => p.error)).toEqual([
      expect.any(ObjectGoneError),
      expect.any(ObjectGoneError),
    ]);
    expect(problems[0]?.error.cause).toMatchObject({ name: 'NoSuchKey' });
    // The read is short, and says so: the objects count as unreadable.
    expect(stream.stats).toMatchObject({ objects: 4, objectsRead: 2, objectsUnreadable: 2 });

    s3.put(k1 as string, s3Error('AccessDenied', 403));
    const denied = await collect(
      readMetrics({ bucket: 'b', prefix: 'p', s3Client: s3.asClient() }),
    ).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(ReadAccessError);
    expect(denied).toMatchObject({ reason: 'access-denied' });
  });

  test.each([
    ['InvalidAccessKeyId', 403, 'bad-credentials', /access key id is unknown/],
    ['SignatureDoesNotMatch', 403, 'bad-credentials', /secret key does not match/],
    ['NoSuchBucket', 404, 'no-such-bucket', /bucket does not exist/],
    ['AccessDenied', 403, 'access-denied', /grant s3:ListBucket and s3:GetObject/],
  ])(
    'a listing failing with %s is a ReadAccessError (%s) that says what to fix',
    async (name, status, reason, hint) => {
      const s3 = fakeBucket(1);
      s3.listError = s3Error(name, status);
      const error = await collect(
        readMetrics({ bucket: 'b', prefix: 'p', s3Client: s3.asClient() }),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReadAccessError);
      expect(error).toMatchObject({ reason });
      expect((error as Error).message).toMatch(/^cannot list s3:\/\/b\/p\/: /);
      expect((error as Error).message).toMatch(hint);
    },
  );
});

describe('options', () => {
  test.each([
    [{ bucket: 'b', dir: '/x' }, 'bucket'],
    [{}, 'bucket'],
    [{ bucket: 'a/b' }, 'bucket'],
    [{ bucket: 'b', concurrency: 0 }, 'concurrency'],
    [{ bucket: 'b', concurrency: 65 }, 'concurrency'],
    [{ bucket: 'b', prefix: 'a/../b' }, 'prefix'],
    [{ bucket: 'b', endpoint: 'localhost:9000' }, 'endpoint'],
    [{ bucket: 'b', from: new Date('x') }, 'from'],
    [{ bucket: 'b', from: new Date(2), to: new Date(1) }, 'to'],
  ])('%j is rejected naming %s', (options, option) => {
    expect(() => readMetrics(options as never)).toThrow(InvalidOptionError);
    expect(() => readMetrics(options as never)).toThrow(new RegExp(`invalid option ${option}:`));
  });

  test('a stream can be iterated only once', async () => {
    const stream = readMetrics({ bucket: 'b', s3Client: new FakeS3().asClient() });
    await collect(stream);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/only once/);
  });
});
