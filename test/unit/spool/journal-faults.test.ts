import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptySpoolStats } from '../../../src/pipeline/stats.js';
import type { OpenBatchJournal } from '../../../src/spool/journal.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { attachedJournal, testJournal } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const logged = captureDiag();

let dir: string;
const journals: OpenBatchJournal[] = [];
beforeEach(() => tempDir('otel-s3-journal-faults-', (path) => (dir = path)));
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close(100);
});

/** What each export of these tests hands the journal with its record. */
const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };

/** A batch sealed with `id`, never settled. */
const sealedBatch = (id = '01890a5d-ac96-774b-bcce-b302099a8057') =>
  ({
    id,
    sealedAt: new Date(1_700_000_000_000),
    attributes: {},
    dataTimeMillis: undefined,
    settled: new Promise(() => {}),
  }) as unknown as SealedBatch;

/** A journal attached on `fs` in the test's spool, closed after the test. */
function journalOn(
  fs: FaultyFileSystem,
  options: Parameters<typeof attachedJournal>[2] = {},
): OpenBatchJournal {
  const journal = attachedJournal(dir, fs, options);
  journals.push(journal);
  return journal;
}

describe('journal write faults', () => {
  // The chain passes the pending bound while its write hangs: it is given up (memory), and the
  // write that then fails at the disk deadline is a disk fault of its own, counted by its code.
  test('a write that fails after its chain was given up is still counted by its code', async () => {
    const stats = emptySpoolStats();
    const fs = new FaultyFileSystem().hangNext('fsync');
    const journal = journalOn(fs, {
      stats,
      maxPendingBytes: 600 * 1024,
      diskTimeoutMillis: 300,
    });
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
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    expect(journal.bytes).toBeGreaterThan(0);
    journal.copyFailed(new Error('cannot encode the copy'));
    expect(stats.journalWriteFailures).toEqual({ copy: 1 });
    expect(journal.bytes).toBe(0);
    journal.append(Buffer.alloc(100, 2), 1, inputs);
    expect(journal.bytes).toBe(0);
    // Nothing of it on disk: no chain for the sealed batch to name.
    expect(journal.sealed(sealedBatch())).toBeUndefined();
    journal.append(Buffer.alloc(100, 3), 1, inputs);
    expect(journal.bytes).toBeGreaterThan(0);
  });
});

describe('a slow deletion', () => {
  // Deleting a chain whose batch is safe takes 3 s (a slow disk, within its deadline): the next
  // open batch's exports are still committed at the next interval, not after the deletion.
  test('does not hold up the group commit of the open batch', async () => {
    const fs = new FaultyFileSystem().hangNext('unlink');
    const journal = journalOn(fs, { syncMillis: 200, diskTimeoutMillis: 10_000 });
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    const first = journal.sealed(sealedBatch()) ?? '';
    expect(first).not.toBe('');
    const firstFsyncs = () =>
      fs.calls.filter((c) => c.op === 'fsync' && c.path.includes(first)).length;
    await waitFor(() => firstFsyncs() > 0, 2_000, 'the first chain committed');
    journal.retire(first);
    await waitFor(() => fs.hanging > 0, 2_000, 'the deletion hangs');
    const release = setTimeout(() => fs.release(), 3_000);
    try {
      const exported = performance.now();
      journal.append(Buffer.alloc(100, 2), 1, inputs);
      const second = fs.calls.length;
      await waitFor(
        () => fs.calls.slice(second).some((c) => c.op === 'fsync' && !c.path.includes(first)),
        5_000,
        'the open batch committed',
      );
      const committed = fs.calls.slice(second).find((c) => c.op === 'fsync')?.at ?? Infinity;
      expect(committed - exported).toBeLessThan(1_500);
    } finally {
      clearTimeout(release);
      fs.release();
    }
    await journal.gone(first);
  });
  // The sealed batch's chain takes its seal in the same group commit as the open batch's new
  // exports; its fsync takes 3 s (within the deadline): the open batch's entries do not wait.
  test("another chain's slow fsync does not hold up the open batch's commit", async () => {
    const fs = new FaultyFileSystem();
    const journal = journalOn(fs, { syncMillis: 200, diskTimeoutMillis: 10_000 });
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    await waitFor(() => fs.calls.some((c) => c.op === 'fsync'), 2_000, 'the first commit');
    const first = journal.sealed(sealedBatch()) ?? '';
    expect(first).not.toBe('');
    fs.only((path) => path.includes(first)).hangNext('fsync');
    const exported = performance.now();
    journal.append(Buffer.alloc(100, 2), 1, inputs);
    const second = fs.calls.length;
    await waitFor(() => fs.hanging > 0, 2_000, "the sealed chain's fsync hangs");
    const release = setTimeout(() => fs.release(), 3_000);
    try {
      await waitFor(
        () => fs.calls.slice(second).some((c) => c.op === 'fsync' && !c.path.includes(first)),
        5_000,
        'the open batch committed',
      );
      const committed =
        fs.calls.slice(second).find((c) => c.op === 'fsync' && !c.path.includes(first))?.at ??
        Infinity;
      expect(committed - exported).toBeLessThan(1_500);
    } finally {
      clearTimeout(release);
      fs.release();
    }
  });
});

describe('a chain retired while its write is in flight', () => {
  // Its batch is stored while the group commit still makes its part: the deletion waits for
  // that write, or the part made after it would be left behind, and a restart would replay a
  // batch already stored.
  test('is deleted whole, the part the write made included', async () => {
    const fs = new FaultyFileSystem().hangNext('create');
    const journal = journalOn(fs, { syncMillis: 20 });
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    const name = journal.sealed(sealedBatch()) ?? '';
    expect(name).not.toBe('');
    await waitFor(() => fs.hanging > 0, 2_000, 'the part being made');
    journal.retire(name);
    await new Promise((r) => setTimeout(r, 50));
    fs.release();
    await journal.gone(name);
    await waitFor(
      () => fs.calls.some((c) => c.op === 'fsync'),
      2_000,
      'the write that was in flight',
    );
    expect(readdirSync(join(dir, 'journal'))).toEqual([]);
  });
});

describe('a replay at start racing a spool file deletion', () => {
  /** Three sealed chains an earlier run left, in name order. */
  async function earlierChains(): Promise<string[]> {
    const earlier = attachedJournal(dir, new FaultyFileSystem());
    const names: string[] = [];
    for (const id of [
      '01890a5d-ac96-774b-bcce-b302099a8051',
      '01890a5d-ac96-774b-bcce-b302099a8052',
      '01890a5d-ac96-774b-bcce-b302099a8053',
    ]) {
      earlier.append(Buffer.alloc(100, 1), 1, inputs);
      names.push(earlier.sealed(sealedBatch(id)) ?? '');
    }
    await earlier.close(2_000);
    expect(readdirSync(join(dir, 'journal')).sort()).toEqual(
      names.map((name) => `${name}.0.journal`).sort(),
    );
    return names.sort();
  }

  // The restored batch of a spool file that names the last chain is stored while the replay
  // hands over the middle chain's batch; the keeper then deletes the file once its chains are
  // gone (forget). The replay, reaching that chain, must not take it over from forget().
  test('forget() of a chain the replay reaches later resolves once it is deleted', async () => {
    const [referenced, replayed, last] = await earlierChains();
    // The first deletion (the first chain's, which a spool file names) is slow.
    const fs = new FaultyFileSystem().hangNext('unlink');
    const journal = journalOn(fs, { syncMillis: 50 });
    let handed!: () => void;
    const handing = new Promise<void>((resolve) => {
      handed = resolve;
    });
    const batches: SealedBatch[] = [];
    const replay = journal.replay(
      new Set([referenced as string, last as string]),
      async (batch) => {
        batches.push(batch);
        await handing;
      },
    );
    try {
      await waitFor(() => batches.length > 0, 2_000, 'the middle chain handed over');
      expect(batches[0]?.journal).toBe(replayed);
      const readdirs = fs.calls.filter((c) => c.op === 'readdir').length;
      let forgotten = false;
      void journal.forget([last as string]).then(() => {
        forgotten = true;
      });
      await waitFor(
        () => fs.calls.filter((c) => c.op === 'readdir').length > readdirs,
        2_000,
        'forget() listed the journal',
      );
      await new Promise((r) => setTimeout(r, 20));
      handed();
      await replay;
      fs.release();
      await waitFor(() => forgotten, 2_000, 'forget() resolved').catch(() => {});
      expect(forgotten).toBe(true);
      expect(readdirSync(join(dir, 'journal'))).toEqual([`${replayed}.0.journal`]);
    } finally {
      handed();
      fs.release();
    }
  });
});

describe('a write that ends after close()', () => {
  // Shutdown's grace ends while the last group commit still makes the open batch's part (its
  // fsync slow): close() has closed the files it knew of; the part that write made is closed
  // by it, not left open for the life of the process.
  test('closes the part it made', async () => {
    const fs = new FaultyFileSystem().hangNext('fsync');
    // Closed by the test itself, not after it.
    const journal = attachedJournal(dir, fs, { syncMillis: 20 });
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    try {
      await waitFor(() => fs.hanging > 0, 2_000, 'the fsync hangs');
      await journal.close(100);
    } finally {
      fs.release();
    }
    expect(fs.created).toHaveLength(1);
    await waitFor(() => fs.calls.some((c) => c.op === 'close'), 2_000, 'the part closed').catch(
      () => {},
    );
    expect(fs.calls.filter((c) => c.op === 'close').map((c) => c.path)).toEqual(fs.created);
  });
});

describe('a deletion the disk refuses', () => {
  // The chain of a batch that is safe cannot be deleted (EACCES, every time): it is tried again
  // at each group commit, and the failure is reported, not retried in silence.
  test('is reported', async () => {
    const fs = new FaultyFileSystem().failNext('unlink', 'EACCES', 1_000);
    const journal = journalOn(fs, { syncMillis: 20 });
    journal.append(Buffer.alloc(100, 1), 1, inputs);
    const name = journal.sealed(sealedBatch()) ?? '';
    await waitFor(() => fs.calls.some((c) => c.op === 'fsync'), 2_000, 'the chain committed');
    logged.length = 0;
    journal.retire(name);
    await waitFor(() => fs.failures.length > 1, 2_000, 'the deletion tried again');
    expect(readdirSync(join(dir, 'journal'))).toEqual([`${name}.0.journal`]);
    expect(logged).toEqual([
      {
        level: 'warn',
        text: expect.stringMatching(
          new RegExp(`journal chain ${name}.*could not be deleted.*EACCES`),
        ),
      },
    ]);
  });
});
