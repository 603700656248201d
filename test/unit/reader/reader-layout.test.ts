import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { resolveConfig } from '../../../src/config/resolve.js';
import {
  InvalidOptionError,
  listMetricObjects,
  metricKeyParser,
  readMetrics,
} from '../../../src/reader.js';
import { FakeS3 } from '../../support/fake-s3-client.js';
import { inTimeZone, renderKey, type WriteLayout } from '../../support/layout-fixtures.js';
import { collect, encodeObject, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { thrown } from '../../support/thrown.js';

const CUSTOM = '{service.name}/%Y/%m/%d/%H/metrics_{uuid}';
const from = new Date('2026-03-04T05:10:00.000Z');
const to = new Date('2026-03-04T05:20:00.000Z');
const at = (iso: string) => new Date(iso);

let dir: string;
let body: Buffer;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-reader-layout-');
  body = encodeObject(await sampleMetrics(), 'otlp-json', 'none');
  return () => removeDir(dir);
});

/** Writes objects at `keys` into a fresh directory laid out like the bucket; returns it. */
async function mirrorOf(name: string, keys: string[]): Promise<string> {
  const root = join(dir, name);
  for (const key of keys) await writeAtKey(root, key, body);
  return root;
}

/** A fake bucket holding objects at `keys`. */
function bucketOf(keys: string[]): FakeS3 {
  const s3 = new FakeS3();
  for (const key of keys) s3.put(key, body);
  return s3;
}

/** The reader's options for the fake bucket `s3` (bucket `b`). */
const source = (s3: FakeS3) => ({ bucket: 'b', s3Client: s3.asClient() });

/** The OTLP/JSON objects of prefix `p` of the fake bucket `s3`, from `from` to `to`. */
const jsonFromTo = (s3: FakeS3) => ({
  ...source(s3),
  prefix: 'p',
  format: 'otlp-json' as const,
  from,
  to,
});

const keysOf = async (stream: AsyncIterable<{ key: string }>) =>
  (await collect(stream)).map((o) => o.key).sort();

describe("partitionTime 'data': keys filed under their oldest data point", () => {
  const layout: WriteLayout = { prefix: 'p' };
  // Partitions 2–3 minutes before the seal time, earlier than from − 1 min (05:09).
  const keys = {
    early: renderKey(layout, at('2026-03-04T05:10:30Z'), '.json', {
      partition: at('2026-03-04T05:07:45Z'),
    }),
    later: renderKey(layout, at('2026-03-04T05:12:00Z'), '.json', {
      partition: at('2026-03-04T05:09:30Z'),
    }),
    sealedBefore: renderKey(layout, at('2026-03-04T05:09:59.999Z'), '.json', {
      partition: at('2026-03-04T05:07:00Z'),
    }),
    old: renderKey(layout, at('2026-03-04T04:00:00Z'), '.json'),
  };
  const inRange = [keys.early, keys.later].sort();

  test('a range that starts after their partition but before their seal time finds them (dir)', async () => {
    const root = await mirrorOf('data', Object.values(keys));
    const read = readMetrics({
      dir: root,
      prefix: 'p',
      format: 'otlp-json',
      from,
      to,
      partitionTime: 'data',
    });
    expect(await keysOf(read)).toEqual(inRange);
    expect(read.stats).toMatchObject({ objects: 2, objectsRead: 2, keysSkipped: 0 });
    // Read as partitionTime 'upload' (the exporter's default), the early one is pruned away:
    // the range of this test reaches past the old one-minute margin of the minute layout.
    const asUpload = listMetricObjects({ dir: root, prefix: 'p', format: 'otlp-json', from, to });
    expect(await keysOf(asUpload)).toEqual([keys.later]);
  });

  test('the listing starts maxBatchAgeMillis + the export interval + 1 min before from (S3)', async () => {
    const s3 = bucketOf(Object.values(keys));
    const read = listMetricObjects({
      ...jsonFromTo(s3),
      partitionTime: 'data',
      maxBatchAgeMillis: 90_000,
      exportIntervalMillis: 30_000,
    });
    expect(await keysOf(read)).toEqual(inRange);
    // The listing starts at the hour's directory (where compaction outputs of that hour are
    // filed); of the keys before minute 07 it keeps only outputs.
    expect(s3.listCalls[0]?.StartAfter).toBe('p/year=2026/month=03/day=04/hour=05');
  });
});

describe("partitionTimeZone 'local': keys in the process's zone", () => {
  test('objects in the range are found, keys outside it are not (Asia/Kolkata, UTC+5:30)', async () => {
    await inTimeZone('Asia/Kolkata', async () => {
      const layout: WriteLayout = { prefix: 'p', timeZone: 'local' };
      const key = (iso: string) => renderKey(layout, at(iso), '.json.gz');
      const inside = [
        key('2026-03-04T05:10:00.000Z'),
        key('2026-03-04T05:15:00.000Z'),
        key('2026-03-04T05:19:59.999Z'),
      ];
      const outside = [
        key('2026-03-04T00:10:00.000Z'),
        key('2026-03-04T05:09:59.999Z'),
        key('2026-03-04T05:20:00.000Z'),
        key('2026-03-04T10:00:00.000Z'),
      ];
      expect(inside[0]).toContain('/hour=10/minute=40/'); // 05:10 UTC is 10:40 in Kolkata
      const s3 = bucketOf([...inside, ...outside]);
      const read = listMetricObjects({ ...jsonFromTo(s3), partitionTimeZone: 'local' });
      expect(await keysOf(read)).toEqual(inside.sort());
      expect(read.stats.keysSkipped).toBe(0);
      // First the UTC hour where compaction outputs of the range would be (they are filed in UTC
      // hours), then from the local partition of from − 1 min − 1 h (DST can repeat an hour):
      // 09:39 IST.
      expect(s3.listCalls.map((c) => c.StartAfter)).toEqual([
        'p/year=2026/month=03/day=04/hour=05',
        'p/year=2026/month=03/day=04/hour=09/minute=39',
      ]);
    });
  });
});

describe('a custom key template', () => {
  const layout: WriteLayout = { prefix: 'p', keyTemplate: CUSTOM };
  const key = (iso: string, service: string) =>
    renderKey(layout, at(iso), '.json', { attributes: { 'service.name': service } });
  const keys = {
    apiInside: key('2026-03-04T05:11:00Z', 'api'),
    webInside: key('2026-03-04T05:19:00Z', 'web'),
    apiBefore: key('2026-03-04T05:09:00Z', 'api'),
    webAfter: key('2026-03-04T05:20:00Z', 'web'),
  };
  const defaultLayout = renderKey({ prefix: 'p' }, at('2026-03-04T05:12:00Z'), '.json');

  test('readMetrics reads it, with the attribute values; other keys are skipped and counted', async () => {
    const root = await mirrorOf('custom', [...Object.values(keys), defaultLayout]);
    const read = readMetrics({ dir: root, prefix: 'p', keyTemplate: CUSTOM, from, to });
    const objects = await collect(read);
    expect(objects.map((o) => [o.key, o.attributes['service.name']])).toEqual([
      [keys.apiInside, 'api'],
      [keys.webInside, 'web'],
    ]);
    expect(read.stats).toMatchObject({ objects: 2, objectsRead: 2, keysSkipped: 1 });
    // The default layout reads the other key, and skips these (listed: no range prunes them).
    const asDefault = listMetricObjects({ dir: root, prefix: 'p' });
    expect(await keysOf(asDefault)).toEqual([defaultLayout]);
    expect(asDefault.stats.keysSkipped).toBe(4);
  });

  test('starting with an attribute, it cannot be bounded: everything under the prefix is listed', async () => {
    const s3 = bucketOf(Object.values(keys));
    const read = listMetricObjects({
      ...source(s3),
      prefix: 'p',
      keyTemplate: CUSTOM,
      from,
      to,
    });
    expect(await keysOf(read)).toEqual([keys.apiInside, keys.webInside].sort());
    // The compaction outputs' hours first (they are filed elsewhere: what they replace must be
    // known before those objects are met), then everything under the prefix.
    expect(s3.listCalls.map((c) => c.StartAfter)).toEqual([
      'p/year=2026/month=03/day=04/hour=05',
      undefined,
    ]);
  });

  test('leading time tokens bound the listing at their partitions', async () => {
    const leading = { prefix: 'p', keyTemplate: '%Y/%m/%d/{service.name}/metrics_{uuid}' };
    const inside = renderKey(leading, at('2026-03-04T05:11:00Z'), '.json');
    const s3 = bucketOf([
      renderKey(leading, at('2026-03-03T05:11:00Z'), '.json'),
      inside,
      renderKey(leading, at('2026-03-05T00:00:00Z'), '.json'),
    ]);
    const read = listMetricObjects({ ...source(s3), ...leading, from, to });
    expect(await keysOf(read)).toEqual([inside]);
    expect(s3.listCalls.map((c) => c.StartAfter)).toEqual([
      'p/year=2026/month=03/day=04/hour=05',
      'p/2026/03/04',
    ]);
  });

  test('otherPrefixes names a deeper prefix whose keys are in the layout', async () => {
    const deeper = renderKey(
      { ...layout, prefix: 'p/eu/prod' },
      at('2026-03-04T05:11:00Z'),
      '.json',
      {
        attributes: { 'service.name': 'api' },
      },
    );
    const root = await mirrorOf('deeper', [deeper, 'p/notes.txt']);
    const read = listMetricObjects({ dir: root, prefix: 'p', keyTemplate: CUSTOM });
    expect(await collect(read)).toEqual([]);
    expect(read.stats).toMatchObject({ keysSkipped: 2, otherPrefixes: ['p/eu/prod'] });
  });
});

describe("layout options are checked with the exporter's rules and messages", () => {
  const message = (fn: () => unknown): string => thrown(fn, InvalidOptionError).message;

  test.each<[string, unknown]>([
    ['keyTemplate', 'year=%Y/metrics'],
    ['keyTemplate', '%Q/{uuid}'],
    ['filePrefix', 'a/b'],
    ['partitionTimeZone', 'Asia/Kolkata'],
    ['partitionTime', 'seal'],
    ['maxBatchAgeMillis', 0],
  ])('%s %j', (option, value) => {
    const exporter = message(() => resolveConfig({ bucket: 'b', [option]: value }));
    expect(message(() => readMetrics({ dir: '.', [option]: value }))).toBe(exporter);
    expect(message(() => listMetricObjects({ bucket: 'b', [option]: value }))).toBe(exporter);
    expect(message(() => metricKeyParser({ [option]: value }))).toBe(exporter);
  });

  test('exportIntervalMillis is checked as maxBatchAgeMillis is', () => {
    expect(message(() => readMetrics({ dir: '.', exportIntervalMillis: 1.5 }))).toBe(
      'otel-s3-exporter: invalid option exportIntervalMillis: 1.5 (expected an integer of milliseconds from 1 to 2147483647)',
    );
  });

  test('bucket and endpoint are checked by the shared rules', () => {
    expect(message(() => readMetrics({ bucket: 'b', endpoint: 'localhost:9000' }))).toBe(
      message(() => resolveConfig({ bucket: 'b', endpoint: 'localhost:9000' })),
    );
    expect(message(() => readMetrics({ bucket: 'a b' }))).toBe(
      'otel-s3-exporter: invalid option bucket: "a b" (expected a bucket name without "/" or spaces)',
    );
  });
});
