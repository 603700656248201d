import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { lines, runCliInProcess } from '../../support/cli-child.js';
import { withFooter } from '../../support/hostile-parquet.js';
import { keyAt, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

let root: string;
let key: string;
let rowGroups: number;

/** Past 16 MiB a Parquet file is read a row group at a time: this one has several. */
const PADDING = 17 * 1024 * 1024;

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-cat-parts-');
  const builders = new MetricColumnBuilders();
  builders.append(await sampleMetrics('svc'), newTally(false));
  const file = new Uint8Array(
    await encodeParquet(builders.seal(), { compression: 'none', rowGroupRows: 4 }),
  );
  // The same file with PADDING bytes after its magic, its offsets moved.
  const out = new Uint8Array(file.length + PADDING);
  out.set(file.subarray(0, 4));
  out.set(file.subarray(4), 4 + PADDING);
  const padded = withFooter(out, (m) => {
    for (const group of m.row_groups) {
      for (const chunk of group.columns) {
        const meta = chunk.meta_data;
        if (meta === undefined) continue;
        meta.data_page_offset += BigInt(PADDING);
        if (meta.dictionary_page_offset !== undefined) {
          meta.dictionary_page_offset += BigInt(PADDING);
        }
        chunk.file_offset += BigInt(PADDING);
      }
    }
  });
  // Counted by hyparquet from the footer, not by the reader under test.
  rowGroups = parquetMetadata(padded.slice().buffer).row_groups.length;
  key = keyAt('p', CLI_T0, '.parquet');
  await writeAtKey(root, key, padded);
});
afterAll(() => removeDir(root));

test('cat --with-key: a Parquet file read in parts is a line per row group, each naming its part', async () => {
  expect(rowGroups).toBeGreaterThan(1);
  const { code, stdout } = await runCliInProcess(
    ['cat', '--with-key', '--dir', '.', '--prefix', 'p'],
    { cwd: root },
  );
  expect(code).toBe(0);
  const parsed = lines(stdout).map((l) => JSON.parse(l) as { key: string; part?: unknown });
  expect(parsed.map((l) => [l.key, l.part])).toEqual(
    Array.from({ length: rowGroups }, (_, index) => [key, { index, count: rowGroups }]),
  );
});
