import { beforeEach, describe, expect, test } from 'vitest';
import { leaseDirectory } from '../../../src/compact/bookkeeping.js';
import { dirStore } from '../../../src/compact/dir-store.js';
import { acquireLease, type Lease, type LeaseOptions } from '../../../src/compact/lease.js';
import type { FinishedFile } from '../../../src/compact/merge.js';
import { METRICS_ROWS } from '../../../src/compact/metrics-rows.js';
import { publish } from '../../../src/compact/publish.js';
import type { CompactionStore } from '../../../src/compact/store.js';
import { outputNames } from '../../../src/layout/outputs.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { dataPointRows, readMetrics } from '../../../src/reader.js';
import { batchAt, pointsOf } from '../../support/compaction-data.js';
import { exportToDir, keysIn, mergeAllIn } from '../../support/compaction-dir.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

/**
 * Publishing an output is a run's writes to its hour: each must start under the lease. A run
 * that stalls after its PUT, past its lease, may find another compactor has taken the hour over
 * meanwhile, seen the output and deleted the inputs it replaces (its step 3): the stalled run
 * must then not delete the output, even when it cannot read its footer back.
 */
describe('publishing an output under a lease', () => {
  let dir: string;
  let clock: number;
  const signal = new AbortController().signal;
  const lease = (store: CompactionStore, holder: string): LeaseOptions => ({
    store,
    directory: leaseDirectory('p', new Date(HOUR)),
    holder,
    durationMillis: 10_000,
    clockSkewMillis: 1_000,
    now: () => clock,
  });

  beforeEach(() => {
    clock = 1_000_000;
    return tempDir('otel-s3-publish-lease-', (path) => (dir = path));
  });

  test('a run whose lease was taken over while it read its output back does not delete it', async () => {
    const batches = [
      batchAt('api', HOUR + 5 * 60_000, 4, 1),
      batchAt('web', HOUR + 15 * 60_000, 3, 2),
    ];
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
    const inputs = await keysIn(dir);
    const [file] = (await mergeAllIn(dir, resolveKeyLayout('p', {}), METRICS_ROWS, 8 << 20)) as [
      FinishedFile,
    ];
    const store = dirStore(dir, 'p/_otel_s3_compaction/tmp');
    const a = await acquireLease(lease(store, 'a'), signal);
    const held = (a as { lease: Lease }).lease;
    let takenOver = false;
    const stalled: CompactionStore = {
      ...store,
      source: {
        ...store.source,
        list: store.source.list.bind(store.source),
        get: store.source.get.bind(store.source),
        async getRange(key, start, end, s) {
          if (key.endsWith('.compacted.parquet') && !takenOver) {
            takenOver = true;
            // Run a stalls past its lease and the skew allowance; run b takes the hour over,
            // finds the output (a consistent footer) and deletes the inputs it replaces.
            clock += 11_001;
            const b = await acquireLease(lease(store, 'b'), signal);
            expect('lease' in b).toBe(true);
            expect(await store.delete(inputs, signal)).toEqual(new Map());
            // a's read of the footer back then fails (a 503 past the retries).
            throw new Error('SlowDown: 503');
          }
          return store.source.getRange(key, start, end, s);
        },
      },
    };
    const published = publish(file, {
      store: stalled,
      names: outputNames('p', '', 'metrics'),
      table: 'metrics',
      hour: new Date(HOUR),
      limits: resolveReadLimits({}),
      conditional: true,
      deletable: () => true,
      beforeStep: () => held.keep(5_000, signal),
      underLease: (step) => held.during(step, signal),
      mayLand: () => {},
      signal,
    });
    await expect(published).rejects.toThrow(/lost the compaction lease/);
    expect(takenOver).toBe(true);
    // The output is the only copy of the points left: it stays, and the reader finds them all.
    let points = 0;
    for await (const object of readMetrics({
      dir,
      prefix: 'p',
      format: 'parquet',
      partitionTime: 'data',
    })) {
      points += dataPointRows(object.request).length;
    }
    expect(points).toBe(pointsOf(batches).length);
    store.close();
  });
});
