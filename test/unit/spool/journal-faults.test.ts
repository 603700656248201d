import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptySpoolStats } from '../../../src/pipeline/stats.js';
import { DiskDeadline } from '../../../src/spool/disk-deadline.js';
import type { OpenBatchJournal } from '../../../src/spool/journal.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { testJournal } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

captureDiag();

let dir: string;
const journals: OpenBatchJournal[] = [];
beforeEach(() => tempDir('otel-s3-journal-faults-', (path) => (dir = path)));
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close(100);
});

describe('journal write faults', () => {
  // The chain passes the pending bound while its write hangs: it is given up (memory), and the
  // write that then fails at the disk deadline is a disk fault of its own, counted by its code.
  test('a write that fails after its chain was given up is still counted by its code', async () => {
    const stats = emptySpoolStats();
    const journal = testJournal(dir, {
      stats,
      maxPendingBytes: 600 * 1024,
      diskTimeoutMillis: 300,
    });
    journals.push(journal);
    const fs = new FaultyFileSystem().hangNext('fsync');
    mkdirSync(join(dir, 'journal'));
    mkdirSync(join(dir, 'quarantine'));
    journal.attach({
      dir: join(dir, 'journal'),
      quarantineDir: join(dir, 'quarantine'),
      fs,
      disk: new DiskDeadline(300),
    });
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    await waitFor(() => fs.hanging > 0, 2_000, 'the fsync hangs');
    // While it hangs, the open batch's exports pass the bound: the chain is given up.
    for (let i = 0; i < 3; i++) journal.append(Buffer.alloc(300 * 1024, 2), 1, inputs);
    expect(stats.journalWriteFailures).toEqual({ memory: 1 });
    await waitFor(
      () => Object.keys(stats.journalWriteFailures).length > 1,
      2_000,
      'the write counted at its deadline',
    ).catch(() => {});
    fs.release();
    expect(stats.journalWriteFailures).toEqual({ memory: 1, timeout: 1 });
  });
});

describe('a copy that failed', () => {
  // The export stays in the open batch; a chain without it would replay the batch short of it.
  test('gives the open batch up (counted as copy), and the next batch is journaled', () => {
    const stats = emptySpoolStats();
    const journal = testJournal(dir, { stats });
    journals.push(journal);
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    expect(journal.bytes).toBeGreaterThan(0);
    journal.copyFailed(new Error('cannot encode the copy'));
    expect(stats.journalWriteFailures).toEqual({ copy: 1 });
    expect(journal.bytes).toBe(0);
    journal.append(Buffer.alloc(100, 2), 1, inputs);
    expect(journal.bytes).toBe(0);
    const batch = {
      id: '01890a5d-ac96-774b-bcce-b302099a8057',
      sealedAt: new Date(1_700_000_000_000),
      attributes: {},
      dataTimeMillis: undefined,
      settled: new Promise(() => {}),
    } as unknown as SealedBatch;
    // Nothing of it on disk: no chain for the sealed batch to name.
    expect(journal.sealed(batch)).toBeUndefined();
    journal.append(Buffer.alloc(100, 3), 1, inputs);
    expect(journal.bytes).toBeGreaterThan(0);
  });
});
