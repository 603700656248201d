import { UUID } from 'uuidv7';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { outputNames } from '../../../src/layout/outputs.js';
import { readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { withReplaces } from '../../support/hostile-parquet.js';
import {
  collect,
  encodeObject,
  keyAt,
  sampleMetrics,
  sampleParquet,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';

/**
 * A compaction output whose footer disagrees with itself (its file holds fewer rows than the
 * inputs it lists held) holds not every item of those inputs: the compactor trusts it to delete
 * nothing (src/compact/plan.ts consistent()). A reader that skipped its inputs would lose the
 * rest without a word, counted as "replaced".
 */

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-inconsistent-output-');
});
afterAll(() => removeDir(dir));

async function outputFile(inputKey: string, claimedRows: (rows: number) => number) {
  let rows = 0;
  const out = withReplaces(await sampleParquet(), (fileRows) => {
    rows = fileRows;
    return { inputs: [{ key: inputKey, rows: claimedRows(rows) }], superseded: [] };
  });
  return { out, rows };
}

async function readWith(name: string, claimedRows: (rows: number) => number) {
  const root = `${dir}/${name}`;
  const inputKey = keyAt('p', READER_T0, '.json');
  await writeAtKey(root, inputKey, encodeObject(await sampleMetrics(), 'otlp-json', 'none'));
  const hour = new Date(Math.floor(READER_T0.getTime() / 3_600_000) * 3_600_000);
  const id = UUID.fromFieldsV7(READER_T0.getTime() + 1000, 1, 0, 1).toString();
  const outputKey = outputNames('p', '', 'metrics').render(hour, id);
  const { out, rows } = await outputFile(inputKey, claimedRows);
  expect(rows).toBeGreaterThan(0);
  await writeAtKey(root, outputKey, out);
  const problems: UnreadableObject[] = [];
  const stream = readMetrics({ dir: root, prefix: 'p', onError: (p) => problems.push(p) });
  const read = await collect(stream);
  return { inputKey, outputKey, read, problems, stats: stream.stats, rows };
}

test('an output whose rows are its inputs’ replaces them', async () => {
  const { outputKey, read, problems, stats } = await readWith('consistent', (rows) => rows);
  expect(problems).toEqual([]);
  expect(read.map((o) => o.key)).toEqual([outputKey]);
  expect(stats.objectsReplaced).toBe(1);
});

test('an output holding fewer rows than its inputs held replaces none: they are read', async () => {
  const { inputKey, outputKey, read, problems, stats, rows } = await readWith(
    'short',
    (rows) => rows + 5,
  );
  // The input is read; the output, read beside it, would count its points twice.
  expect(read.map((o) => o.key)).toEqual([inputKey]);
  expect(stats.objectsReplaced).toBe(0);
  expect(problems.map((p) => [p.key, p.stage])).toEqual([[outputKey, 'fetch']]);
  expect(problems[0]?.error.message).toBe(
    `its footer says it holds ${rows} rows, and the 1 object it replaces held ${rows + 5}: the objects it replaces were read instead`,
  );
});
