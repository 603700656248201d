import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { BOOKKEEPING_DIR, INTERNAL_AREA } from '../../../src/layout/outputs.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { batchAt } from '../../support/compaction-data.js';
import { exportToDir, keysIn } from '../../support/compaction-dir.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

describe('otel-s3 compact', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-cli-compact-', (path) => (root = path)));
  const run = (args: string[]) =>
    runCliInProcess(['compact', '--dir', join(root, 'm'), '--prefix', 'p', ...args], { cwd: root });

  test('a line per partition on stdout, the summary on stderr; a second run has nothing to do', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 3, 2),
    ]);
    const first = await run(['--from', new Date(HOUR).toISOString(), '--settle', '0']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d {2}compacted {2}2 objects, .* 18 points -> 1 file, .*; deleted 2\n$/,
    );
    expect(first.stderr).toMatch(/1 partition compacted of 1 settled in .*, 1 file written/);
    const second = await run([
      '--from',
      new Date(HOUR).toISOString(),
      '--settle',
      '0',
      '--format',
      'json',
    ]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ partitions: [], partitionsSelected: 1 });
    // The bookkeeping is in the reader's internal area: never read, never counted.
    expect(BOOKKEEPING_DIR.startsWith(INTERNAL_AREA)).toBe(true);
    expect(
      (await keysIn(join(root, 'm'))).filter((k) => !k.includes(`/${BOOKKEEPING_DIR}/`)),
    ).toHaveLength(1);
  });

  test.each([
    [['--shard', '4/4'], /invalid --shard "4\/4": expected i\/n with 0 <= i < n/],
    [['--shard', 'x'], /invalid --shard "x"/],
    [['--settle', 'soon'], /invalid --settle "soon": expected 0 or a duration/],
    [['--target-file-bytes', '128MB'], /invalid --target-file-bytes "128MB"/],
    [['--target-file-bytes', '1k'], /targetFileBytes/],
    [['--until', 'tomorrow'], /invalid --until "tomorrow"/],
    [['--until', '1d', '--to', '2026-01-01'], /--until and --to both set the end/],
    [['--partitions', 'many'], /invalid --partitions "many"/],
    [['--out-prefix', 'p/lake'], /outPrefix/],
    [['--compression', 'lz4'], /--compression/],
  ])('%j is a usage error (exit 2) that names the flag', async (args, message) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});
