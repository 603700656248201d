import { beforeEach, describe, expect, test } from 'vitest';
import { dirStore } from '../../../src/compact/dir-store.js';
import type { FinishedFile } from '../../../src/compact/merge.js';
import { METRICS_ROWS } from '../../../src/compact/metrics-rows.js';
import { publish } from '../../../src/compact/publish.js';
import type { CompactionStore } from '../../../src/compact/store.js';
import { outputNames } from '../../../src/layout/outputs.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { batchAt } from '../../support/compaction-data.js';
import { exportToDir, keysIn, mergeAllIn } from '../../support/compaction-dir.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

/**
 * An output whose check fails is deleted; when that delete fails too, the output is still there
 * (and replaces its inputs for the reader): the error says so, and why, not that it was deleted.
 */
describe('an output that fails its check and cannot be deleted', () => {
  let dir: string;
  const signal = new AbortController().signal;

  beforeEach(() => tempDir('otel-s3-publish-check-', (path) => (dir = path)));

  test('is named as left in place, with the reason of its failed delete', async () => {
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 5 * 60_000, 4, 1),
      batchAt('web', HOUR + 15 * 60_000, 3, 2),
    ]);
    const inputs = await keysIn(dir);
    const [file] = (await mergeAllIn(dir, resolveKeyLayout('p', {}), METRICS_ROWS, 8 << 20)) as [
      FinishedFile,
    ];
    const store = dirStore(dir, 'p/_otel_s3_compaction/tmp');
    const faulty: CompactionStore = {
      ...store,
      source: {
        ...store.source,
        list: store.source.list.bind(store.source),
        get: store.source.get.bind(store.source),
        async getRange(key, start, end, s) {
          // The footer's read back fails (a 503 past the retries).
          if (key.endsWith('.compacted.parquet')) throw new Error('SlowDown: 503');
          return store.source.getRange(key, start, end, s);
        },
      },
      async delete(keys, s) {
        const outputs = keys.filter((k) => k.endsWith('.compacted.parquet'));
        const failed = await store.delete(
          keys.filter((k) => !outputs.includes(k)),
          s,
        );
        for (const key of outputs)
          failed.set(key, 'InternalError: We encountered an internal error');
        return failed;
      },
    };
    const published = publish(file, {
      store: faulty,
      names: outputNames('p', '', 'metrics'),
      table: 'metrics',
      hour: new Date(HOUR),
      limits: resolveReadLimits({}),
      conditional: true,
      deletable: () => true,
      beforeStep: async () => {},
      underLease: (step) => step(signal),
      mayLand: () => {},
      signal,
    });
    const error = await published.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    const after = await keysIn(dir);
    const output = after.find((k) => k.endsWith('.compacted.parquet'));
    // The output is there, beside its inputs.
    expect(output).toBeDefined();
    expect(after.filter((k) => k !== output).sort()).toEqual([...inputs].sort());
    expect(error?.message).toBe(
      `output ${output} failed its check (its footer cannot be read back: SlowDown: 503) and could not be deleted (InternalError: We encountered an internal error): it is left where it is, and a later run reads its footer again`,
    );
    store.close();
  });
});
