import { afterAll, beforeAll, expect, test } from 'vitest';
import { readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { EXPECTED_SCHEMA } from '../../../src/signals/metrics/parquet/schema.js';
import { pagelessFile, withFooter } from '../../support/hostile-parquet.js';
import { collect, keyAt, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-empty-parts-');
});
afterAll(() => removeDir(dir));

/** A Parquet file of the metrics schema with no row groups, `padding` bytes before its footer. */
function noRowGroups(padding: number): Uint8Array {
  const file = withFooter(pagelessFile(EXPECTED_SCHEMA.schema, EXPECTED_SCHEMA.version, 0), (m) => {
    m.row_groups = [];
    m.num_rows = 0n;
  });
  const out = new Uint8Array(file.length + padding);
  out.set(file.subarray(0, 4));
  out.set(file.subarray(4), 4 + padding);
  return out;
}

// Every listed object is read, unreadable or replaced: a file of no row groups, read whole (a
// small one) or in parts (over 16 MiB), is read, as an empty request or as no part.
for (const [name, padding] of [
  ['whole', 0],
  ['in parts', 17 * 1024 * 1024],
] as const) {
  test(`a Parquet file of no row groups, read ${name}, is counted read`, async () => {
    const root = `${dir}/${name.replace(' ', '-')}`;
    await writeAtKey(root, keyAt('p', READER_T0, '.parquet'), noRowGroups(padding));
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({ dir: root, prefix: 'p', onError: (p) => problems.push(p) });
    await collect(stream);
    expect(problems.map((p) => p.error.message)).toEqual([]);
    const { objects, objectsRead, objectsUnreadable, objectsReplaced } = stream.stats;
    expect({ objects, counted: objectsRead + objectsUnreadable + objectsReplaced }).toEqual({
      objects: 1,
      counted: 1,
    });
  });
}
