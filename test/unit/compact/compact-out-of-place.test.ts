import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UUID } from 'uuidv7';
import { beforeEach, describe, expect, test } from 'vitest';
import { compactMetrics } from '../../../src/compact/index.js';
import { outputNames } from '../../../src/layout/outputs.js';
import { dataPointRows, readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { batchAt, pointsOf } from '../../support/compaction-data.js';
import { exportToDir, keysIn } from '../../support/compaction-dir.js';
import { withReplaces } from '../../support/hostile-parquet.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR, HOUR_MS } from '../../support/time.js';

/**
 * An output whose list of replaced objects names what no output replaces (itself, an object of
 * another hour or signal) is refused by the reader, which reads what it lists instead. The
 * compactor must not delete on its word: neither the objects it lists, nor itself.
 */
describe('compactMetrics and an output that lists what no output replaces', () => {
  let dir: string;
  beforeEach(() => tempDir('otel-s3-compact-out-of-place-', (path) => (dir = path)));

  const TAIL = '; an output replaces only other objects of its signal and hour';

  test.each(['itself', 'an object of another hour', 'a traces object'])(
    'listing %s: nothing it lists is deleted, it is kept and reported',
    async (what) => {
      const batches = [batchAt('api', HOUR + 5 * 60_000 + 7, 4, 1)];
      await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
      const [input] = await keysIn(dir);
      if (input === undefined) throw new Error('no input written');
      const id = UUID.fromFieldsV7(HOUR + 50 * 60_000, 1, 0, 1).toString();
      const output = outputNames('p', '', 'metrics').render(new Date(HOUR), id);
      const other =
        what === 'itself'
          ? output
          : what === 'a traces object'
            ? input.replace(/metrics_/, 'traces_').replace(/^p\//, 'p/traces/')
            : outputNames('p', '', 'metrics').render(new Date(HOUR + HOUR_MS), id);
      // The input's own file, listing the input (every row of the file) and `other` (none).
      const file = withReplaces(new Uint8Array(await readFile(join(dir, input))), (rows) => ({
        inputs: [
          { key: input, rows },
          { key: other, rows: 0 },
        ],
        superseded: [],
      }));
      await mkdir(dirname(join(dir, output)), { recursive: true });
      await writeFile(join(dir, output), file);

      const report = await compactMetrics({
        dir,
        prefix: 'p',
        settleMillis: 0,
        from: new Date(HOUR),
      });
      const keys = await keysIn(dir);
      // Every point is read once: from the input, or from a new output that replaces it.
      const problems: UnreadableObject[] = [];
      const stream = readMetrics({ dir, prefix: 'p', onError: (p) => problems.push(p) });
      let points = 0;
      for await (const object of stream) points += dataPointRows(object.request).length;
      expect(points).toBe(pointsOf(batches).length);
      expect(problems.map((p) => p.key)).toEqual([output]);
      // The bad output is never deleted, and reported.
      expect(keys).toContain(output);
      const named =
        what === 'itself'
          ? 'itself'
          : what === 'a traces object'
            ? `${other}, a traces object`
            : `${other}, of another hour`;
      expect(report.partitions.flatMap((p) => p.badOutputs)).toEqual([
        { key: output, reason: `its list of the objects it replaces names ${named}${TAIL}` },
      ]);
    },
  );
});
