import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatBytes } from '../../../src/base/byte-size.js';
import { ObjectTooLargeError } from '../../../src/reader/read-limits.js';
import { readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { FakeS3 } from '../../support/fake-s3-client.js';
import { withFooter } from '../../support/hostile-parquet.js';
import { collect, keyAt, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';
import { zstdCompress } from '../../support/zstd.js';

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-parts-limits-');
});
afterAll(() => removeDir(dir));

/** A zstd Parquet file of the sample, `padding` bytes after its magic (its offsets moved). */
async function padded(padding: number): Promise<Uint8Array> {
  const builders = new MetricColumnBuilders();
  builders.appendResourceMetrics(await sampleMetrics());
  const file = new Uint8Array(
    await encodeParquet(builders.seal(), {
      compression: 'zstd',
      compressPage: (page: Uint8Array) => zstdCompress(page),
    }),
  );
  const out = new Uint8Array(file.length + padding);
  out.set(file.subarray(0, 4));
  out.set(file.subarray(4), 4 + padding);
  return withFooter(out, (m) => {
    for (const group of m.row_groups) {
      for (const chunk of group.columns) {
        const meta = chunk.meta_data;
        if (meta === undefined) continue;
        meta.data_page_offset += BigInt(padding);
        if (meta.dictionary_page_offset !== undefined)
          meta.dictionary_page_offset += BigInt(padding);
        chunk.file_offset += BigInt(padding);
      }
    }
  });
}

// Past maxDecompressedBytes, read whole or in parts (over 16 MiB), an object is unreadable at
// the 'decompress' stage, and the error names the limit given, not what was left of it.
for (const [name, padding] of [
  ['whole', 0],
  ['in parts', 17 * 1024 * 1024],
] as const) {
  test(`a Parquet object read ${name} over maxDecompressedBytes: stage 'decompress', the limit named`, async () => {
    const root = `${dir}/${name.replace(' ', '-')}`;
    const key = keyAt('p', READER_T0, '.parquet');
    await writeAtKey(root, key, await padded(padding));
    // Read as it is first.
    const read = await collect(readMetrics({ dir: root, prefix: 'p' }));
    expect(read.map((o) => o.key)).toEqual([key]);
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({
      dir: root,
      prefix: 'p',
      maxDecompressedBytes: 1500,
      maxObjectBytes: 64 * 1024 * 1024,
      onError: (p) => problems.push(p),
    });
    expect(await collect(stream)).toEqual([]);
    expect(problems.map((p) => [p.key, p.stage, (p.error as { stage?: string }).stage])).toEqual([
      [key, 'decompress', 'decompress'],
    ]);
    expect(problems[0]?.error.message).toMatch(/over the maxDecompressedBytes limit of 1\.5 KiB$/);
  });
}

// A file read in parts holds its footer with each row group (and yields it as `bytes`): a footer
// over a limit is refused from the file's last bytes (its length), before it is fetched, as the object read
// whole would be (its stored bytes over maxObjectBytes; a Parquet file, uncompressed, over
// maxDecompressedBytes).
describe('a Parquet object read in parts with a footer over a limit', () => {
  const MiB = 1024 * 1024;
  const footerPadding = 2 * MiB;
  let file: Uint8Array;
  let footerBytes: number;
  beforeAll(async () => {
    file = withFooter(await padded(17 * MiB), (m) => {
      m.key_value_metadata = [
        ...(m.key_value_metadata ?? []),
        { key: 'padding', value: 'x'.repeat(footerPadding) },
      ];
    });
    footerBytes = new DataView(file.buffer, file.byteOffset).getUint32(file.length - 8, true);
  });
  const key = keyAt('p', READER_T0, '.parquet');

  async function readFromBucket(limits: {
    maxObjectBytes?: number;
    maxDecompressedBytes?: number;
  }) {
    const s3 = new FakeS3();
    s3.put(key, file);
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({
      bucket: 'b',
      s3Client: s3.asClient(),
      prefix: 'p',
      ...limits,
      onError: (p) => problems.push(p),
    });
    const read = await collect(stream);
    return { read, problems, stats: stream.stats, served: s3.bytesServed.get(key) ?? 0 };
  }

  test("a footer within the file's last 64 KiB costs one request; a larger one, two", async () => {
    const s3 = new FakeS3();
    // The sample padded to 17 MiB: read in parts, its footer of a few KiB in the first tail read.
    s3.put(key, await padded(17 * MiB));
    await collect(readMetrics({ bucket: 'b', s3Client: s3.asClient(), prefix: 'p' }));
    // The tail (with the footer), then the one row group.
    expect(s3.getCalls).toEqual([key, key]);
    const large = new FakeS3();
    large.put(key, file);
    await collect(readMetrics({ bucket: 'b', s3Client: large.asClient(), prefix: 'p' }));
    expect(large.getCalls).toEqual([key, key, key]);
  });

  test('within the limits it is read, by ranges', async () => {
    expect(footerBytes).toBeGreaterThan(footerPadding);
    const { read, problems, served } = await readFromBucket({});
    expect(problems).toEqual([]);
    expect(read.map((o) => [o.key, o.part?.count, o.bytes.length])).toEqual([
      [key, 1, footerBytes + 8],
    ]);
    expect(served).toBeLessThan(file.length - 16 * MiB);
  });

  for (const [limit, limits, stage] of [
    ['maxObjectBytes', { maxObjectBytes: MiB }, 'fetch'],
    ['maxDecompressedBytes', { maxDecompressedBytes: MiB, maxObjectBytes: 64 * MiB }, 'decompress'],
  ] as const) {
    test(`over ${limit}: refused before it is fetched, counted, the limit and its size named`, async () => {
      const { read, problems, stats, served } = await readFromBucket(limits);
      expect(read.map((o) => o.key)).toEqual([]);
      expect(stats.objectsUnreadable).toBe(1);
      expect(problems.map((p) => [p.key, p.stage])).toEqual([[key, stage]]);
      // As an object read whole: over maxObjectBytes the error itself, over
      // maxDecompressedBytes an ObjectDecodeError of stage 'decompress' that wraps it.
      const error = problems[0]?.error;
      const cause = (stage === 'fetch' ? error : error?.cause) as Error | undefined;
      expect(cause).toBeInstanceOf(ObjectTooLargeError);
      expect((error as { stage?: string }).stage).toBe(stage === 'fetch' ? undefined : stage);
      expect(cause?.message).toBe(
        `Parquet footer size ${formatBytes(footerBytes)} is over the ${limit} limit of 1.0 MiB`,
      );
      // Only the file's last bytes read first (64 KiB, the footer's length among them), not the
      // footer of 2 MiB.
      expect(served).toBe(64 * 1024);
    });
  }

  test("over the reader's fixed 16 MiB: refused before it is fetched, as a size limit", async () => {
    // The file's last 8 bytes claim a footer of 16 MiB + 1, which the file (17 MiB) can hold.
    const claimed = 16 * MiB + 1;
    const big = file.slice();
    new DataView(big.buffer).setUint32(big.length - 8, claimed, true);
    const s3 = new FakeS3();
    s3.put(key, big);
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({
      bucket: 'b',
      s3Client: s3.asClient(),
      prefix: 'p',
      onError: (p) => problems.push(p),
    });
    expect(await collect(stream)).toEqual([]);
    expect(stream.stats.objectsUnreadable).toBe(1);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([[key, 'fetch']]);
    const error = problems[0]?.error;
    expect(error).toBeInstanceOf(ObjectTooLargeError);
    expect(error?.message).toBe(
      "Parquet footer size 16.0 MiB is over the reader's fixed limit of 16.0 MiB for a Parquet footer",
    );
    expect(s3.bytesServed.get(key)).toBe(64 * 1024);
  });
});
