import { afterAll, beforeAll, expect, test } from 'vitest';
import { readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
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
