import { beforeEach, describe, expect, test } from 'vitest';
import { emptySpoolStats } from '../../../src/pipeline/stats.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { attachedJournal } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const logged = captureDiag();

let dir: string;
beforeEach(() => tempDir('otel-s3-journal-close-', (path) => (dir = path)));

describe('close() while a write of a live chain runs', () => {
  // The open batch's part exists (an earlier group commit made it); shutdown's last commit
  // writes to it and its fsync is slow, past close()'s grace. The file is not closed under the
  // write: the write ends, then closes it; no failure is counted or reported after shutdown.
  test('leaves the file to the write, which closes it when it ends', async () => {
    const stats = emptySpoolStats();
    const fs = new FaultyFileSystem();
    const journal = attachedJournal(dir, fs, { stats, syncMillis: 20 });
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    try {
      await waitFor(() => stats.journalSyncs === 1, 2_000, 'the part made and fsynced');
      fs.hangNext('fsync');
      journal.append(Buffer.alloc(100, 2), 1, inputs);
      await waitFor(() => fs.hanging > 0, 2_000, 'the second fsync hangs');
      logged.length = 0;
      await journal.close(100);
      // The file is still the write's: not closed under it.
      expect(fs.calls.filter((c) => c.op === 'close')).toEqual([]);
    } finally {
      fs.release();
    }
    await waitFor(() => stats.journalSyncs === 2, 2_000, 'the slow fsync done').catch(() => {});
    await waitFor(() => fs.calls.some((c) => c.op === 'close'), 2_000, 'the part closed').catch(
      () => {},
    );
    expect(stats.journalWriteFailures).toEqual({});
    expect(logged).toEqual([]);
    expect(stats.journalSyncs).toBe(2);
    expect(fs.calls.filter((c) => c.op === 'close').map((c) => c.path)).toEqual(fs.created);
  });
});

describe('a write of a live chain that fails after close()', () => {
  // Shutdown's last commit hangs on a fsync past close()'s grace, then its disk deadline ends
  // it (a hung disk). No commit runs after close(): the entries are not written to a fresh file,
  // and the report must not say they are; their memory is not held for a commit that never comes.
  test('is reported as the end of the journal for that batch, and frees the entries', async () => {
    const stats = emptySpoolStats();
    const fs = new FaultyFileSystem();
    const journal = attachedJournal(dir, fs, { stats, syncMillis: 20, diskTimeoutMillis: 300 });
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    try {
      await waitFor(() => stats.journalSyncs === 1, 2_000, 'the part made and fsynced');
      fs.hangNext('fsync');
      journal.append(Buffer.alloc(100, 2), 1, inputs);
      await waitFor(() => fs.hanging > 0, 2_000, 'the second fsync hangs');
      logged.length = 0;
      await journal.close(100);
      await waitFor(
        () => stats.journalWriteFailures.timeout === 1,
        2_000,
        'the fsync past its deadline',
      );
      expect(logged).toHaveLength(1);
      expect(logged[0]?.text).not.toContain('fresh file');
      expect(logged[0]?.text).toContain('shut down');
      expect(journal.bytes).toBe(0);
    } finally {
      fs.release();
    }
  });
});

describe('an unsealed chain kept at shutdown whose last write fails after close()', () => {
  // shutdown() could not seal the open batch; unsealed() kept its chain for the next run, and
  // the exporter said its items stay in the journal. Shutdown's last commit then fails: the
  // entries it held are never written, so those items are lost and must be counted as such.

  /** A journal on a disk that can hang, recording what it counts as unwritten. */
  const unwrittenJournal = () => {
    const stats = emptySpoolStats();
    const fs = new FaultyFileSystem();
    const unwritten: [number, number][] = [];
    const journal = attachedJournal(dir, fs, {
      stats,
      syncMillis: 20,
      diskTimeoutMillis: 300,
      unwritten: (points, rawBytes) => unwritten.push([points, rawBytes]),
    });
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    return { stats, fs, unwritten, journal, inputs };
  };
  test('counts the items of the entries not written as lost', async () => {
    const { stats, fs, unwritten, journal, inputs } = unwrittenJournal();
    journal.append(Buffer.alloc(100, 1), 3, inputs);
    try {
      await waitFor(() => stats.journalSyncs === 1, 2_000, 'the part made and fsynced');
      // Two exports after the first group commit, pending when shutdown comes.
      journal.append(Buffer.alloc(70, 2), 4, inputs);
      journal.append(Buffer.alloc(50, 3), 5, inputs);
      fs.hangNext('fsync');
      expect(journal.unsealed()).toBe(true);
      await journal.close(100);
      await waitFor(
        () => stats.journalWriteFailures.timeout === 1,
        2_000,
        'the fsync past its deadline',
      );
      // The first export is on disk (the next run replays it); the last two are not.
      expect(unwritten).toEqual([[9, 120]]);
      expect(journal.bytes).toBe(0);
    } finally {
      fs.release();
    }
  });

  test('a chain not kept by unsealed() counts nothing here', async () => {
    const { stats, fs, unwritten, journal, inputs } = unwrittenJournal();
    journal.append(Buffer.alloc(100, 1), 3, inputs);
    await waitFor(() => stats.journalSyncs === 1, 2_000, 'the part made and fsynced');
    journal.append(Buffer.alloc(70, 2), 4, inputs);
    try {
      fs.hangNext('fsync');
      await waitFor(() => fs.hanging > 0, 2_000, 'the second fsync hangs');
      await journal.close(100);
      await waitFor(
        () => stats.journalWriteFailures.timeout === 1,
        2_000,
        'the fsync past its deadline',
      );
      expect(unwritten).toEqual([]);
    } finally {
      fs.release();
    }
  });
});
