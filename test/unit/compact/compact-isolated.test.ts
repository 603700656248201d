import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { compactIsolated } from '../../../src/compact/isolated.js';
import type { SignalName } from '../../../src/layout/formats.js';
import { batchAt, duckdbPointTexts, pointsOf, sorted } from '../../support/compaction-data.js';
import { exportSpansToDir, exportToDir } from '../../support/compaction-dir.js';
import { TWO_SMALL_BATCHES } from '../../support/flat-batches.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

/**
 * The worker from TypeScript sources: a worker thread does not inherit the test's loader on every
 * runtime, so this file registers tsx in the thread, then runs src/compact/compact-worker.ts.
 */
const WORKER = new URL('../../support/children/compact-worker-tsx.mjs', import.meta.url);

/** The CLI's compaction in a worker thread with a bounded heap (src/compact/isolated.ts). */
describe('compactIsolated', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-isolated-', (path) => (root = path)));
  /** Compacts `dir` in the worker: its report or its error, and each event type once. */
  const run = async (dir: string, which: SignalName | SignalName[] = 'metrics') => {
    const events: string[] = [];
    const running = compactIsolated(
      { dir, prefix: 'p', from: new Date(HOUR), settleMillis: 0 },
      (event) => {
        if (!events.includes(event.type)) events.push(event.type);
      },
      new AbortController().signal,
      WORKER,
      which,
    );
    if (running === undefined) throw new Error('compactIsolated did not start a worker');
    try {
      return { report: await running, events };
    } catch (error) {
      const e = error as { name?: string; reason?: string; constructor: { name: string } };
      return { error: { name: e.name, class: e.constructor.name, reason: e.reason }, events };
    }
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

  test('compacts the signal it is told: the spans of traces/', async () => {
    const dir = join(root, 's');
    const recorded = await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const { report } = await run(dir, 'traces');
    expect(
      report?.partitions.map((p) => [p.partition.slice(0, 12), p.status, p.read.points]),
    ).toEqual([['traces/year=', 'compacted', recorded.length]]);
  });

  test('compacts several signals in turn in one worker, their reports joined', async () => {
    const dir = join(root, 'both');
    const batches = [batchAt('api', HOUR + 60_000, 4, 1), batchAt('web', HOUR + 20 * 60_000, 4, 2)];
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
    const recorded = await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const { report } = await run(dir, ['metrics', 'traces', 'logs']);
    const signalOf = (partition: string) =>
      partition.startsWith('traces/') ? 'traces' : 'metrics';
    expect(report?.partitions.map((p) => [signalOf(p.partition), p.status, p.read.points])).toEqual(
      [
        ['metrics', 'compacted', pointsOf(batches).length],
        ['traces', 'compacted', recorded.length],
      ],
    );
    expect(report?.partitionsSelected).toBe(2);
  });

  test("the worker's access error comes back as a ReadAccessError, with its reason", async () => {
    const { error } = await run(join(root, 'nowhere'));
    expect(error).toMatchObject({ class: 'ReadAccessError', reason: 'no-such-directory' });
  });
});
