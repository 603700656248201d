import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { runCliInProcess } from '../../support/cli-child.js';
import { batchAt } from '../../support/compaction-data.js';
import { exportToDir, keysIn } from '../../support/compaction-dir.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

describe('otel-s3 ls and stats after a compaction that kept its OTLP inputs', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-cli-ls-replaced-', (path) => (root = path)));

  test('the totals say how many stored objects an output replaces and the listing leaves out', async () => {
    const m = join(root, 'm');
    await exportToDir(m, { prefix: 'p', format: 'otlp-json' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 3, 2),
    ]);
    const compact = await runCliInProcess(
      [
        'compact',
        '--dir',
        m,
        '--prefix',
        'p',
        '--from',
        new Date(HOUR).toISOString(),
        '--settle',
        '0',
      ],
      { cwd: root },
    );
    expect(compact.code).toBe(0);
    // Both OTLP objects are still stored, beside the output.
    const stored = (await keysIn(m)).filter((k) => !k.includes('/_otel_s3'));
    expect(stored.filter((k) => k.endsWith('.json.zst'))).toHaveLength(2);
    expect(stored.filter((k) => k.endsWith('.compacted.parquet'))).toHaveLength(1);

    const ls = await runCliInProcess(['ls', '--dir', m, '--prefix', 'p'], { cwd: root });
    expect(ls.code).toBe(0);
    expect(ls.stdout.trim().split('\n')).toHaveLength(1);
    expect(ls.stderr).toMatch(
      /1 object, .* in .*; not listed: 2 objects that a compaction output replaces\n/,
    );

    const text = await runCliInProcess(['stats', '--dir', m, '--prefix', 'p'], { cwd: root });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/\nobjects {7}1 \(parquet\+zstd: 1\)\n/);
    expect(text.stdout).toMatch(
      /\nreplaced {6}2 \(not read: a compaction output holds their points\)\n/,
    );
    const json = await runCliInProcess(['stats', '--dir', m, '--prefix', 'p', '--format', 'json'], {
      cwd: root,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ objects: 1, objectsReplaced: 2 });
  });
});
