import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { formatBytes } from '../../../src/base/byte-size.js';
import { dirSource } from '../../../src/reader/dir-source.js';
import { ObjectTooLargeError } from '../../../src/reader/read-limits.js';
import {
  anyValue,
  attributes,
  dataPointRows,
  decodeStoredObject,
  InvalidOptionError,
  logRecordRows,
  nanosToIso,
  ObjectDecodeError,
  type OtlpObject,
  type PlainValue,
  readMetrics,
  type UnreadableObject,
} from '../../../src/reader.js';
import { logRecordsToJsonBytes } from '../../../src/signals/logs/otlp-json.js';
import { logRecordsToProto } from '../../../src/signals/logs/otlp-proto.js';
import { FakeS3 } from '../../support/fake-s3-client.js';
import {
  gzipBomb,
  nestedJsonObject,
  nestedProtoObject,
  withGaugeTime,
  zstdBomb,
} from '../../support/hostile-objects.js';
import { varint } from '../../support/hostile-parquet.js';
import { logsReference } from '../../support/otlp-reference.js';
import {
  collect,
  encodeObject,
  keyAt,
  withSampleInDir,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import { syntheticLogRecords } from '../../support/signal-driver.js';
import { READER_T0, timesAfter } from '../../support/time.js';

const MiB = 1024 * 1024;
const at = timesAfter(READER_T0);

let rm1: ResourceMetrics;
let dir: string;
withSampleInDir('otel-s3-hostile-', (made) => ({ rm1, dir } = made));

/** Reads `dir/p` with `options`; the keys read and the problems reported, by key. */
/** The reader's source for the fake bucket `s3` (bucket `b`). */
const inBucket = (s3: FakeS3) => ({ bucket: 'b', s3Client: s3.asClient() });

async function readAll(
  source: { dir: string } | { bucket: string; s3Client: ReturnType<FakeS3['asClient']> },
  options: { maxObjectBytes?: number; maxDecompressedBytes?: number } = {},
) {
  const problems = new Map<string, UnreadableObject>();
  const stream = readMetrics({
    ...source,
    prefix: 'p',
    ...options,
    onError: (p) => problems.set(p.key, p),
  });
  const read = await collect(stream);
  return { keys: read.map((o) => o.key), problems, stats: stream.stats, read };
}

describe('hostile objects are skipped and counted with the reason; the rest is read', () => {
  test('a zstd and a gzip bomb stop at maxDecompressedBytes', async () => {
    const root = join(dir, 'bombs');
    const good = [keyAt('p', at(0), '.json.zst'), keyAt('p', at(3), '.binpb.gz')];
    const zstd = keyAt('p', at(1), '.json.zst');
    const gzip = keyAt('p', at(2), '.json.gz');
    await writeAtKey(root, good[0] as string, encodeObject(rm1, 'otlp-json', 'zstd'));
    await writeAtKey(root, good[1] as string, encodeObject(rm1, 'otlp-proto', 'gzip'));
    await writeAtKey(root, zstd, await zstdBomb(64 * MiB));
    await writeAtKey(root, gzip, await gzipBomb(64 * MiB));

    const { keys, problems, stats } = await readAll({ dir: root }, { maxDecompressedBytes: MiB });

    expect(keys).toEqual(good);
    for (const key of [zstd, gzip]) {
      const problem = problems.get(key);
      expect(problem?.stage).toBe('decompress');
      expect(problem?.error.cause).toBeInstanceOf(ObjectTooLargeError);
      expect(problem?.error.message).toBe(
        `${key}: decompressed size is over the maxDecompressedBytes limit of 1.0 MiB`,
      );
    }
    expect(stats).toMatchObject({ objects: 4, objectsRead: 2, objectsUnreadable: 2 });
  });

  test('gzip stops at the limit, before the end: a bad checksum at the end is never reached', async () => {
    const root = join(dir, 'gzip-early');
    const key = keyAt('p', at(0), '.json.gz');
    const gzip = Buffer.from(gzipSync(Buffer.alloc(4 * MiB)));
    gzip.writeUInt32LE(gzip.readUInt32LE(gzip.length - 8) ^ 1, gzip.length - 8); // the CRC32
    await writeAtKey(root, key, gzip);
    const late = await readAll({ dir: root }, { maxDecompressedBytes: 8 * MiB });
    expect(late.problems.get(key)?.error.message).toMatch(
      /invalid gzip data: incorrect data check/,
    );
    const early = await readAll({ dir: root }, { maxDecompressedBytes: MiB });
    expect(early.problems.get(key)?.error.cause).toBeInstanceOf(ObjectTooLargeError);
  });

  test('an uncompressed object larger than maxDecompressedBytes, with its size', async () => {
    const root = join(dir, 'plain');
    const key = keyAt('p', at(0), '.json');
    const json = encodeObject(rm1, 'otlp-json', 'none');
    await writeAtKey(root, key, json);
    const { problems } = await readAll(
      { dir: root },
      { maxDecompressedBytes: 100, maxObjectBytes: MiB },
    );
    expect(problems.get(key)?.error.message).toBe(
      `${key}: decompressed size ${formatBytes(json.length)} is over the maxDecompressedBytes limit of 100 B`,
    );
  });

  test.each([
    [
      'OTLP/JSON',
      200_000,
      '.json',
      nestedJsonObject,
      'values nested deeper than 200 levels (an attribute of arrays or key-value lists nested too deep)',
    ],
    [
      'OTLP/JSON',
      100,
      '.json',
      nestedJsonObject,
      'values nested deeper than 200 levels (an attribute of arrays or key-value lists nested too deep)',
    ],
    [
      'protobuf',
      200_000,
      '.binpb',
      nestedProtoObject,
      'invalid OTLP protobuf: messages nested too deep to decode',
    ],
    [
      'protobuf',
      1_000,
      '.binpb',
      nestedProtoObject,
      'values nested deeper than 200 levels (an attribute of arrays or key-value lists nested too deep)',
    ],
  ])('%s with an array attribute nested %i deep', async (_format, depth, ext, make, reason) => {
    const bytes = make(depth);
    const root = join(dir, `deep-${ext}-${bytes.length}`);
    const goodKey = keyAt('p', at(1), '.json.zst');
    const deepKey = keyAt('p', at(0), ext);
    await writeAtKey(root, deepKey, bytes);
    await writeAtKey(root, goodKey, encodeObject(rm1, 'otlp-json', 'zstd'));

    const { keys, problems } = await readAll({ dir: root });

    expect(keys).toEqual([goodKey]);
    expect(problems.get(deepKey)?.stage).toBe('decode');
    expect(problems.get(deepKey)?.error.message).toBe(`${deepKey}: ${reason}`);
  });

  test('an attribute nested as deep as the limit allows is read; one level more is not', async () => {
    const root = join(dir, 'nested-limit');
    // A resource attribute's value is at level 7; each array level adds 3: 64 end at 199.
    const [fits, over] = [keyAt('p', at(0), '.json'), keyAt('p', at(1), '.json')];
    await writeAtKey(root, fits, nestedJsonObject(64));
    await writeAtKey(root, over, nestedJsonObject(65));
    const { read, problems } = await readAll({ dir: root });
    expect([...problems.keys()]).toEqual([over]);
    let value = deepAttribute(read[0]?.request);
    let depth = 0;
    while (Array.isArray(value)) {
      value = value[0] ?? null;
      depth++;
    }
    expect([depth, value]).toEqual([64, 'x']);
  });

  test('a time past the uint64 nanoseconds OTLP allows; the largest uint64 is read', async () => {
    const root = join(dir, 'times');
    const json = encodeObject(rm1, 'otlp-json', 'none');
    const bad = keyAt('p', at(0), '.json');
    const last = keyAt('p', at(1), '.json');
    await writeAtKey(root, bad, withGaugeTime(json, '1000000000000000000000000'));
    await writeAtKey(root, last, withGaugeTime(json, '18446744073709551615'));

    const { keys, problems, read } = await readAll({ dir: root });

    expect(keys).toEqual([last]);
    expect(problems.get(bad)?.error.message).toBe(
      `${bad}: timeUnixNano "1000000000000000000000000" is not a time in nanoseconds since 1970 (an unsigned 64-bit integer)`,
    );
    const gauge = dataPointRows(read[0]?.request ?? {}).find((r) => r.type === 'gauge');
    expect(gauge?.time).toBe('2554-07-21T23:34:33.709551615Z');
  });

  test("a point's times written as JSON numbers (OTLP/JSON allows them) are its row's times", () => {
    const point = (time: unknown) => ({
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                {
                  name: 'g',
                  gauge: {
                    dataPoints: [{ timeUnixNano: time, startTimeUnixNano: time, asInt: '7' }],
                  },
                },
              ],
            },
          ],
        },
      ],
    });
    // 2026-01-05T10:05:00Z, an integer a double holds exactly. Before: '' for both.
    const [row] = dataPointRows(point(1_767_607_500_000_000_000) as OtlpObject);
    expect([row?.time, row?.start]).toEqual([
      '2026-01-05T10:05:00.000000000Z',
      '2026-01-05T10:05:00.000000000Z',
    ]);
  });
});

describe('a bomb of empty values: refused before it is built, within the size limits', () => {
  const key = (signal: string, ext: string) =>
    `p/year=2026/month=03/day=04/hour=05/minute=06/${signal}_01a2463b-2889-70bc-9d34-4132b13f1e00${ext}`;
  // 300,000 empty points: 600 KB of text, a few KB stored (33 million of them ended a process).
  // Under a limit of 1 MiB a read builds at most 65,536 objects (one per 16 bytes).
  const points = 300_000;
  const limit = { maxDecompressedBytes: 1024 * 1024 };
  test('OTLP/JSON: more objects and arrays than a read builds is refused, naming why', () => {
    const json = `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[${Array(points).fill('{}').join(',')}]}}]}]}]}`;
    // Before: decoded, 300,000 objects (and the CLI's rows of them).
    expect(() => decodeStoredObject(key('metrics', '.json'), Buffer.from(json), limit)).toThrow(
      /300009 JSON objects and arrays, more than the 65536 a read builds/,
    );
  });
  test('OTLP protobuf: more messages than a read builds is refused, naming why', () => {
    // ExportMetricsServiceRequest > ResourceMetrics > ScopeMetrics > Metric > Gauge > points:
    // each level field 1 (resource_metrics, scope_metrics), 2 (metrics), 5 (gauge), 1 (data_points).
    const empty = Buffer.from([0x0a, 0x00]); // field 1, length 0: an empty NumberDataPoint
    const wrap = (field: number, body: Buffer) =>
      Buffer.concat([Buffer.from([(field << 3) | 2]), Buffer.from(varint(body.length)), body]);
    const gauge = Buffer.concat(Array(points).fill(empty));
    const proto = wrap(1, wrap(2, wrap(2, wrap(5, gauge))));
    expect(() => decodeStoredObject(key('metrics', '.binpb'), proto, limit)).toThrow(
      /more than 65536 messages, the most a read builds/,
    );
  });
  test('as dense legally (an array of 2,000 nulls, a body of 2,000 empty lists) is read, both formats', () => {
    const [record] = syntheticLogRecords(1, 1);
    const nulls = { ...record, attributes: { a: ['x', ...Array(2_000).fill(null)] } };
    const lists = { ...record, body: Array(2_000).fill([]) };
    for (const r of [nulls, lists] as ReadableLogRecord[]) {
      for (const [ext, bytes] of [
        ['.json', logRecordsToJsonBytes([r])],
        ['.binpb', logRecordsToProto([r])],
      ] as const) {
        // Before (a limit on density): refused as a bomb.
        const { request } = decodeStoredObject(key('logs', ext), bytes);
        expect(JSON.stringify(request).length).toBeGreaterThan(2_000 * 2);
      }
    }
  });
});

describe('fuzzed objects: nothing made up, nothing unbounded', () => {
  const key = (signal: string, ext: string) =>
    `p/year=2026/month=03/day=04/hour=05/minute=06/${signal}_01a2463b-2889-70bc-9d34-4132b13f1e00${ext}`;
  const logsJson = (record: object, resourceAttributes: object[] = []) =>
    Buffer.from(
      JSON.stringify({
        resourceLogs: [
          { resource: { attributes: resourceAttributes }, scopeLogs: [{ logRecords: [record] }] },
        ],
      }),
    );
  test('a field tag past 2^53 is refused, not read with a wrong wire type (its payload as fields)', () => {
    // LogRecord holding an unknown field of tag (2^53 << 3) | 2 and payload 1a 01 41 (severityText "A").
    const bytes = Buffer.from('0a11120f120d828080808080808001031a0141', 'hex');
    // Before: { severityText: "A" }, from bytes that were to be skipped.
    expect(() => decodeStoredObject(key('logs', '.binpb'), bytes)).toThrow(/invalid field tag/);
  });
  test("32-bit fields take a varint's low 32 bits, as Google's protobuf runtime does", () => {
    // A LogRecord whose severity_number (field 2, int32 enum) is -1, written sign-extended.
    const record = Buffer.from('10ffffffffffffffffff01', 'hex');
    const wrap = (field: number, body: Buffer) =>
      Buffer.concat([Buffer.from([(field << 3) | 2]), Buffer.from(varint(body.length)), body]);
    const bytes = wrap(1, wrap(2, wrap(2, record)));
    const ours = decodeStoredObject(key('logs', '.binpb'), bytes).request;
    const google = logsReference.decodeProtobuf(bytes) as OtlpObject;
    // Before: 18446744073709552000.
    const severity = (r: unknown) => JSON.stringify(r).match(/"severityNumber":("?[-\w]+"?)/)?.[1];
    expect(severity(ours)).toBe('-1');
    expect(severity(google)).toBe('-1');
  });
  test("an enum named like an Object member, and a key '__proto__', are what they are", () => {
    const [named] = logRecordRows(
      decodeStoredObject(key('logs', '.json'), logsJson({ severityNumber: 'constructor' })).request,
    );
    // Before: the Object function. A name of no severity number is shown as stored.
    expect(named?.severityNumber).toBe('constructor');
    const proto = logRecordRows(
      decodeStoredObject(
        key('logs', '.json'),
        logsJson(
          {
            body: { stringValue: 'x' },
            attributes: [{ key: '__proto__', value: { stringValue: 'kept' } }],
          },
          [
            {
              key: '__proto__',
              value: {
                kvlistValue: { values: [{ key: 'service.name', value: { stringValue: 'evil' } }] },
              },
            },
          ],
        ),
      ).request,
    )[0];
    // Before: the attribute gone, and a service read through the replaced prototype.
    expect(Object.entries(proto?.attributes ?? {})).toEqual([['__proto__', 'kept']]);
    expect(proto?.service).not.toBe('evil');
  });
  test('a number field spelled as no OTLP/JSON writer spells one is no number', () => {
    const gauge = (asInt: string) =>
      Buffer.from(
        JSON.stringify({
          resourceMetrics: [
            { scopeMetrics: [{ metrics: [{ name: 'g', gauge: { dataPoints: [{ asInt }] } }] }] },
          ],
        }),
      );
    const value = (asInt: string) =>
      dataPointRows(decodeStoredObject(key('metrics', '.json'), gauge(asInt)).request)[0]?.value;
    // Before Number() read them: 16, 3 and 7; then 0. Now the object is refused, naming them;
    // so is "1e3", which no int64 is as text (proto3's JSON mapping: decimal digits).
    for (const asInt of ['0x10', '0b11', '0o7', '1e3']) {
      expect(() => value(asInt)).toThrow(`metric "g": asInt "${asInt}" is not an int64`);
    }
    expect([value('42'), value('-7')]).toEqual([42, -7]);
  });
  test('packed values past four a message allowed are refused: 1 MiB of zero counts under a 1 MiB limit', () => {
    // An ExponentialHistogram point (ResourceMetrics > ScopeMetrics > Metric.exponential_histogram
    // (10) > data_points (1) > positive (8) > bucket_counts (2, packed)): a million zero counts.
    const wrap = (field: number, body: Buffer) =>
      Buffer.concat([Buffer.from([(field << 3) | 2]), Buffer.from(varint(body.length)), body]);
    const counts = wrap(2, Buffer.alloc(1_000_000));
    const bytes = wrap(1, wrap(2, wrap(2, wrap(10, wrap(1, wrap(8, counts))))));
    // Before: a million numbers, twice over, however small the limit (2.9 GB of heap at 64 MiB).
    expect(() =>
      decodeStoredObject(key('metrics', '.binpb'), bytes, { maxDecompressedBytes: 1024 * 1024 }),
    ).toThrow(/more than 262144 values of repeated fields, the most a read builds/);
    // The same at the default limit is read.
    expect(decodeStoredObject(key('metrics', '.binpb'), bytes).request).toBeDefined();
  });
});

describe('stored size: nothing larger than maxObjectBytes is downloaded', () => {
  const s3With = (bodies: Record<string, Uint8Array>) => {
    const s3 = new FakeS3();
    for (const [key, body] of Object.entries(bodies)) s3.put(key, body);
    return s3;
  };
  const big = Buffer.alloc(4 * MiB);
  const small = () => encodeObject(rm1, 'otlp-json', 'gzip');

  test('listed larger: skipped without a GetObject, with the listed size', async () => {
    const [a, b] = [keyAt('p', at(0), '.json.gz'), keyAt('p', at(1), '.json.gz')];
    const s3 = s3With({ [a]: big, [b]: small() });
    const { keys, problems } = await readAll(inBucket(s3), { maxObjectBytes: MiB });
    expect(keys).toEqual([b]);
    expect(s3.getCalls).toEqual([b]);
    expect(problems.get(a)).toMatchObject({ stage: 'fetch' });
    expect(problems.get(a)?.error.message).toBe(
      'stored size 4.0 MiB is over the maxObjectBytes limit of 1.0 MiB',
    );
  });

  test('listed small, but GetObject says larger (replaced since): refused before the body is read', async () => {
    const [a, b] = [keyAt('p', at(0), '.json.gz'), keyAt('p', at(1), '.json.gz')];
    const s3 = s3With({ [a]: big, [b]: small() });
    s3.listedSizes.set(a, 100);
    const { keys, problems } = await readAll(inBucket(s3), { maxObjectBytes: MiB });
    expect(keys).toEqual([b]);
    expect(problems.get(a)?.error.message).toBe(
      'stored size 4.0 MiB is over the maxObjectBytes limit of 1.0 MiB',
    );
    expect(s3.bytesServed.get(a) ?? 0).toBe(0);
  });

  test('no Content-Length and a body longer than the listing said: the download stops at the limit', async () => {
    const [a, b] = [keyAt('p', at(0), '.json.gz'), keyAt('p', at(1), '.json.gz')];
    const s3 = s3With({ [a]: big, [b]: small() });
    s3.listedSizes.set(a, 100);
    s3.sendContentLength = false;
    const { keys, problems } = await readAll(inBucket(s3), { maxObjectBytes: MiB });
    expect(keys).toEqual([b]);
    expect(problems.get(a)?.error.message).toBe(
      'stored size is over the maxObjectBytes limit of 1.0 MiB',
    );
    // Pulled as 64 KiB chunks: the one that crossed the limit, and at most a stream's read-ahead.
    expect(s3.bytesServed.get(a)).toBeLessThanOrEqual(MiB + 17 * 64 * 1024);
  });

  test('from a directory: a file larger than maxObjectBytes is not read', async () => {
    const root = join(dir, 'large-file');
    const key = keyAt('p', at(0), '.json');
    await writeAtKey(root, key, big);
    const { problems } = await readAll({ dir: root }, { maxObjectBytes: MiB });
    expect(problems.get(key)).toMatchObject({ stage: 'fetch' });
    expect(problems.get(key)?.error).toBeInstanceOf(ObjectTooLargeError);
  });

  for (const blocking of [false, true]) {
    test(`from a directory${blocking ? ', read with blocking calls' : ''}: every byte of a file, past the size stat() gave, within the limit`, async () => {
      const root = join(dir, `dir-get-${blocking}`);
      await mkdir(root, { recursive: true });
      const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) % 251));
      await writeFile(join(root, 'whole'), bytes);
      await writeFile(join(root, 'empty'), '');
      const source = dirSource(root, { blocking });
      const signal = new AbortController().signal;
      expect(Buffer.from(await source.get('whole', signal, MiB)).equals(bytes)).toBe(true);
      expect(await source.get('empty', signal, MiB)).toHaveLength(0);
      await expect(source.get('whole', signal, bytes.length - 1)).rejects.toThrow(
        ObjectTooLargeError,
      );
      await expect(source.get('missing', signal, MiB)).rejects.toThrow(/ENOENT/);
      const listed = [];
      for await (const k of source.list('', undefined, signal)) listed.push(k);
      // Each with its file's mtime: the time of its write, as S3's LastModified.
      const mtime = async (name: string) => (await stat(join(root, name))).mtimeMs;
      expect(listed).toEqual([
        { key: 'empty', size: 0, lastModified: await mtime('empty') },
        { key: 'whole', size: bytes.length, lastModified: await mtime('whole') },
      ]);
      // A file stat() says is empty but is not (Linux's /proc): read to its end.
      const proc = dirSource('/proc/self', { blocking });
      const status = await proc.get('status', signal, MiB);
      expect(Buffer.from(status).toString()).toMatch(/^Name:.*\n[\s\S]*VmRSS:/);
      await expect(proc.get('status', signal, 10)).rejects.toThrow(ObjectTooLargeError);
    });
  }

  test('maxObjectBytes defaults to maxDecompressedBytes, which defaults to 64 MiB', async () => {
    const key = keyAt('p', at(0), '.json.gz');
    const s3 = s3With({ [key]: small() });
    s3.listedSizes.set(key, 2 * MiB);
    const { problems } = await readAll(inBucket(s3), { maxDecompressedBytes: MiB });
    expect(problems.get(key)?.error).toMatchObject({ limit: 'maxObjectBytes', max: MiB });
    s3.listedSizes.set(key, 64 * MiB + 1);
    const defaults = await readAll(inBucket(s3));
    expect(defaults.problems.get(key)?.error).toMatchObject({ max: 64 * MiB });
  });
});

describe('the public functions refuse what they cannot show, with a clear error', () => {
  test('anyValue past the nesting limit throws a RangeError instead of overflowing the stack', () => {
    let value: object = { stringValue: 'x' };
    for (let i = 0; i < 100_000; i++) value = { arrayValue: { values: [value] } };
    expect(() => anyValue(value as never)).toThrow(
      new RangeError('attribute value nested deeper than 200 levels'),
    );
  });

  test('nanosToIso past the last Date names the value', () => {
    expect(() => nanosToIso('1000000000000000000000000')).toThrow(
      new RangeError(
        'timestamp 1000000000000000000000000 ns is past the last date JavaScript can show',
      ),
    );
  });

  test('decodeObject errors are ObjectDecodeError with the limit as the cause', async () => {
    const { decodeObject } = await import('../../../src/reader.js');
    const bomb = await zstdBomb(8 * MiB);
    const error = (() => {
      try {
        decodeObject('k.json.zst', bomb, { maxDecompressedBytes: MiB });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ObjectDecodeError);
    expect(error).toMatchObject({ stage: 'decompress', cause: { limit: 'maxDecompressedBytes' } });
  });

  test.each([
    [{ maxObjectBytes: 0 }, 'maxObjectBytes'],
    [{ maxObjectBytes: 1.5 }, 'maxObjectBytes'],
    [{ maxDecompressedBytes: '64MiB' }, 'maxDecompressedBytes'],
    [{ maxDecompressedBytes: -1 }, 'maxDecompressedBytes'],
  ])('%j is rejected naming %s', (limits, option) => {
    const read = () => readMetrics({ bucket: 'b', ...limits } as never);
    expect(read).toThrow(InvalidOptionError);
    expect(read).toThrow(
      new RegExp(`invalid option ${option}: .* \\(expected a whole number of bytes`),
    );
  });
});

/** The `deep` resource attribute of a nestedJsonObject request, as a plain value. */
function deepAttribute(request: OtlpObject | undefined): PlainValue {
  const rm = (request?.resourceMetrics as OtlpObject[] | undefined)?.[0];
  return attributes((rm?.resource as OtlpObject | undefined)?.attributes).deep ?? null;
}
