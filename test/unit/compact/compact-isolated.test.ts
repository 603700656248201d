import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { spawnTs } from '../../support/child.js';
import {
  type Batch,
  batchAt,
  duckdbPointTexts,
  pointText,
  sorted,
} from '../../support/compaction-data.js';
import { exportToDir } from '../../support/compaction-dir.js';

const HOUR_MS = 3_600_000;
const HOUR = Math.floor((Date.now() - 2 * 86_400_000) / HOUR_MS) * HOUR_MS;
const pointsOf = (batches: Batch[]) => sorted(batches.flatMap((b) => b.points.map(pointText)));

/** The CLI's compaction in a worker thread with a bounded heap (src/compact/isolated.ts). */
describe('compactIsolated', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'otel-s3-isolated-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const run = async (dir: string) => {
    const child = spawnTs('test/support/children/compact-isolated.ts', {
      DIR: dir,
      PREFIX: 'p',
      FROM: new Date(HOUR).toISOString(),
    });
    const result = await child.waitForJson<{ report?: unknown; error?: unknown }>(
      (v) => v.report !== undefined || v.error !== undefined,
      60_000,
    );
    await child.exited;
    return {
      ...result,
      events: child.lines.flatMap((l) => (l.includes('"event"') ? [JSON.parse(l).event] : [])),
    };
  };

  test('compacts in the worker, relaying its progress and its report', async () => {
    const batches = [batchAt('api', HOUR + 60_000, 4, 1), batchAt('web', HOUR + 20 * 60_000, 4, 2)];
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, batches);
    const { report, events } = await run(join(root, 'm'));
    expect(events).toEqual(['planned', 'partition-started', 'input-read', 'partition-done']);
    expect(report).toMatchObject({
      partitions: [{ status: 'compacted', read: { points: pointsOf(batches).length } }],
    });
    expect(sorted(await duckdbPointTexts(join(root, 'm')))).toEqual(pointsOf(batches));
  });

  test("the worker's access error comes back as a ReadAccessError, with its reason", async () => {
    const { error } = await run(join(root, 'nowhere'));
    expect(error).toMatchObject({ class: 'ReadAccessError', reason: 'no-such-directory' });
  });
});
