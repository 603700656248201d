import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Episodes } from '../../../src/base/log.js';
import { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptySpoolStats, emptyStats } from '../../../src/pipeline/stats.js';
import type { BackoffPolicy } from '../../../src/s3/backoff.js';
import { DiskDeadline } from '../../../src/spool/disk-deadline.js';
import { spoolFileBytes } from '../../../src/spool/file-format.js';
import type { OpenBatchJournal } from '../../../src/spool/journal.js';
import { SpoolKeeper } from '../../../src/spool/keeper.js';
import { KeeperReports } from '../../../src/spool/keeper-reports.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { pipelineParts } from '../../support/pipeline-parts.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { openSpool, testJournal } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const logged = captureDiag();

let dir: string;
const keepers: SpoolKeeper[] = [];
beforeEach(() => tempDir('otel-s3-keeper-', (path) => (dir = path)));
afterEach(async () => {
  for (const keeper of keepers.splice(0)) await keeper.close();
});

async function setup(
  s3: ScriptedS3,
  options: {
    limit?: number;
    maxSpoolBytes?: number;
    fs?: FaultyFileSystem;
    loadConcurrency?: number;
    retryEveryMillis?: number;
    backoff?: BackoffPolicy;
    journal?: OpenBatchJournal;
  } = {},
) {
  const stats = emptyStats();
  stats.spool = emptySpoolStats();
  const episodes = new Episodes();
  const limit = options.limit ?? 1 << 20;
  const { budget, uploader, owner } = pipelineParts(s3, {
    stats,
    episodes,
    maxBufferedBytes: limit,
    uploader: {
      concurrency: 1,
      requestTimeoutMillis: 60_000,
      ...(options.backoff && { backoff: options.backoff }),
    },
  });
  const keeperOptions = {
    maxSpoolBytes: options.maxSpoolBytes ?? 1 << 20,
    loadConcurrency: options.loadConcurrency ?? 2,
    retryEveryMillis: options.retryEveryMillis ?? 20,
    // No test here is about the deadline (spool-deadlines is): a loaded machine's fsync may be slow.
    diskTimeoutMillis: 10_000,
    check: () => undefined,
  };
  const reports = new KeeperReports(stats.spool, episodes, { dir, ...keeperOptions });
  const keeper = new SpoolKeeper(await openSpool(dir, options.fs), keeperOptions, {
    budget,
    owner,
    uploader,
    reports,
    journal: options.journal,
  });
  keepers.push(keeper);
  /** A batch with its body made, admitted, not yet queued. */
  const prepared = (name: string, size = 100) => {
    const batch = SealedBatch.seal({
      contents: { records: [Buffer.from(name)] },
      rawBytes: size,
      points: 1,
      attributes: {},
      dataTimeMillis: undefined,
    });
    budget.admit(batch, size, owner);
    batch.startPreparing();
    batch.bodyMade({
      key: `${name}.json`,
      contentType: 'application/json',
      body: Buffer.alloc(size, name),
      sha256: undefined,
      crc32: undefined,
    });
    return batch;
  };
  return { stats, budget, uploader, keeper, prepared, spoolStats: stats.spool };
}

const files = () => readdirSync(join(dir, 'batches'));

describe('SpoolKeeper', () => {
  test('persist() makes a batch durable and registers its file', async () => {
    const { keeper, prepared, spoolStats } = await setup(new ScriptedS3());
    const batch = prepared('a');
    await keeper.persist(batch);
    expect(batch.spool?.name).toMatch(/\.batch$/);
    expect(files()).toEqual([batch.spool?.name]);
    expect(spoolStats).toMatchObject({ written: 1, files: 1 });
  });

  test('the file goes when the batch is stored or dropped, and stays when it is left for the next run', async () => {
    const { keeper, prepared, budget } = await setup(new ScriptedS3());
    const [stored, dropped, left] = [prepared('s'), prepared('d'), prepared('l')];
    for (const b of [stored, dropped, left]) await keeper.persist(b);
    const leftName = left.spool?.name;
    budget.settle(stored, 'uploaded');
    budget.drop(dropped, 'rejected');
    budget.settle(left, 'left-in-spool');
    await waitFor(() => files().length === 1, 2_000, 'two files deleted');
    expect(files()).toEqual([leftName]);
  });

  test('a failed write leaves the batch in memory and counted; nothing is registered', async () => {
    const fs = new FaultyFileSystem().failNext('fsync', 'EIO');
    const { keeper, prepared, spoolStats } = await setup(new ScriptedS3(), { fs });
    const batch = prepared('a');
    await keeper.persist(batch);
    expect(batch.spool).toBeUndefined();
    expect(batch.body).toBeDefined();
    expect(spoolStats.writeFailures).toEqual({ EIO: 1 });
    expect(files()).toEqual([]);
  });

  // A write that failed removes what it made; if that removal fails too, the file must be
  // removed later, and never be taken for an earlier run's file meanwhile (a scan run again
  // would upload the batch a second time, or adopt from tmp/ a file whose fsync failed).
  test.each([
    ['syncDirectory', 'batches'],
    ['fsync', 'tmp'],
  ] as const)(
    'a failed write (%s) whose cleanup fails too is cleaned up later, never restored',
    async (op, where) => {
      const fs = new FaultyFileSystem().failNext(op, 'EIO').failNext('unlink', 'EIO');
      const { keeper, prepared, spoolStats } = await setup(new ScriptedS3(), { fs });
      const batch = prepared('a');
      await keeper.persist(batch);
      expect(batch.spool).toBeUndefined();
      expect(spoolStats.writeFailures).toEqual({ EIO: 1 });
      expect(fs.failures.map((f) => f.op)).toEqual([op, 'unlink']);
      expect(readdirSync(join(dir, where))).toHaveLength(1);
      await keeper.restore(); // a scan run again (as after a listing that failed at start)
      expect(spoolStats).toMatchObject({ files: 0, replayed: 0 });
      await waitFor(() => readdirSync(join(dir, where)).length === 0, 2_000, 'the file removed');
      expect(files()).toEqual([]);
      expect(spoolStats.files).toBe(0);
    },
  );

  test('over maxSpoolBytes the oldest files are evicted; one only on disk is lost and counted', async () => {
    // Room for three files of these batches exactly.
    const fileBytes = spoolFileBytes(
      {
        key: '1.json',
        contentType: 'application/json',
        points: 1,
        rawBytes: 200,
        sealedAt: Date.now(),
      },
      200,
    );
    const { keeper, prepared, budget, stats, spoolStats } = await setup(new ScriptedS3(), {
      maxSpoolBytes: 3 * fileBytes,
      // No read-back timer while the test writes: with one every 20 ms, a slow fsync let the
      // first batch be paged in and uploaded before its file was evicted (seen in CI).
      retryEveryMillis: 60_000,
    });
    const first = prepared('1', 200);
    await keeper.persist(first);
    first.queue();
    expect(budget.makeRoom(1 << 20)).toBe(true); // pages the first one out: on disk only now
    expect(first.state).toBe('paged-out');
    const rest = [prepared('2', 200), prepared('3', 200), prepared('4', 200)];
    for (const b of rest) await keeper.persist(b);
    expect(spoolStats.evicted).toBe(1);
    expect(await first.settled).toBe('dropped');
    expect(stats.pointsDroppedByReason).toEqual({ 'spool-full': 1 });
    await waitFor(() => files().length === 3, 2_000, 'three files');
    expect(rest.every((b) => b.spool !== undefined)).toBe(true);
  });

  test('a spool full again after a write fitted is a new episode: heard again', async () => {
    const meta = { key: '1.json', contentType: 'application/json', points: 1, rawBytes: 200 };
    const fileBytes = spoolFileBytes({ ...meta, sealedAt: Date.now() }, 200);
    const { keeper, prepared, budget, spoolStats } = await setup(new ScriptedS3(), {
      maxSpoolBytes: 2 * fileBytes,
      retryEveryMillis: 60_000,
    });
    const full = () => logged.filter((l) => l.text.includes('reached maxSpoolBytes')).length;
    const round = async (names: string[]) => {
      const batches = names.map((n) => prepared(n, 200));
      for (const b of batches) await keeper.persist(b);
      for (const b of batches) if (!b.isSettled) budget.settle(b, 'uploaded');
      await waitFor(() => files().length === 0, 2_000, 'files deleted');
    };
    await round(['1', '2', '3', '4']); // the third and fourth evict: one episode
    expect(full()).toBe(1);
    await round(['5']); // fits: the episode is over
    await round(['6', '7', '8']);
    expect(full()).toBe(2);
    expect(spoolStats.evicted).toBe(3);
  });

  // maxSpoolBytes is a bound: a file that could only be written past it is not written.
  test('with every other file busy (being uploaded), a batch that would pass the bound is not written', async () => {
    const meta = { key: '1.json', contentType: 'application/json', points: 1, rawBytes: 200 };
    const fileBytes = spoolFileBytes({ ...meta, sealedAt: Date.now() }, 200);
    const { keeper, prepared, uploader, spoolStats, budget } = await setup(
      new ScriptedS3().script([{ kind: 'hang' }]),
      { maxSpoolBytes: Math.floor(1.5 * fileBytes), retryEveryMillis: 60_000 },
    );
    const uploading = prepared('1', 200);
    await keeper.persist(uploading);
    uploading.queue();
    uploader.submit(uploading);
    await waitFor(() => uploading.state === 'uploading', 2_000, 'uploading');
    const next = prepared('2', 200);
    await keeper.persist(next);
    expect(next.spool).toBeUndefined(); // not written: uploaded from memory
    expect(next.body).toBeDefined();
    expect(files()).toEqual([uploading.spool?.name]);
    expect(spoolStats).toMatchObject({ evicted: 0, writeFailures: { 'no-room': 1 } });
    expect(logged.filter((l) => l.text.includes('is not written'))).toHaveLength(1);
    budget.drop(uploading, 'shutdown');
    budget.drop(next, 'shutdown');
  });

  // A file that alone passes the bound would evict every other one and still pass it: such a
  // batch is uploaded from memory, and the files on disk stay.
  test('a batch whose file is larger than maxSpoolBytes is not written and evicts nothing', async () => {
    const fileBytes = (size: number) =>
      spoolFileBytes(
        {
          key: '1.json',
          contentType: 'application/json',
          points: 1,
          rawBytes: size,
          sealedAt: Date.now(),
        },
        size,
      );
    const { keeper, prepared, budget, stats, spoolStats } = await setup(new ScriptedS3(), {
      maxSpoolBytes: 3 * fileBytes(200),
      retryEveryMillis: 60_000,
    });
    const small = [prepared('1', 200), prepared('2', 200)];
    for (const b of small) {
      await keeper.persist(b);
      b.queue();
    }
    expect(budget.makeRoom(1 << 20)).toBe(true); // pages them out: on disk only now
    const big = prepared('3', 5 * 200);
    expect(fileBytes(5 * 200)).toBeGreaterThan(3 * fileBytes(200));
    await keeper.persist(big);
    expect(big.spool).toBeUndefined();
    expect(big.body).toBeDefined(); // uploaded from memory
    expect(spoolStats.evicted).toBe(0);
    expect(stats.pointsDroppedByReason).toEqual({});
    expect(small.map((b) => b.state)).toEqual(['paged-out', 'paged-out']);
    expect(spoolStats.writeFailures).toEqual({ 'larger-than-spool': 1 });
    expect(files()).toHaveLength(2);
  });

  // Batches of the journal delete their file after their chain (removeFile waits for it): the
  // bytes evicted must still count at once, or one eviction evicts every file it can.
  test('over maxSpoolBytes only as many files as needed are evicted, for batches a journal held', async () => {
    const meta = (name: string) => ({
      key: `${name}.json`,
      contentType: 'application/json',
      points: 1,
      rawBytes: 200,
      sealedAt: Date.now(),
      journal: [`0190a0a0-0000-7000-8000-00000000000${name}`],
    });
    const fileBytes = spoolFileBytes(meta('1'), 200);
    const journal = testJournal(dir, {
      syncMillis: 60_000,
      maxSpoolBytes: 3 * fileBytes,
      diskTimeoutMillis: 10_000,
    });
    const { keeper, prepared, budget, stats, spoolStats } = await setup(new ScriptedS3(), {
      maxSpoolBytes: 3 * fileBytes,
      retryEveryMillis: 60_000,
      journal,
    });
    const held = (name: string) => {
      const batch = prepared(name, 200);
      batch.journaled(meta(name).journal[0] as string);
      return batch;
    };
    const old = [held('1'), held('2'), held('3')];
    for (const b of old) {
      await keeper.persist(b);
      b.queue();
    }
    expect(budget.makeRoom(1 << 20)).toBe(true); // pages them out: on disk only now
    budget.addOpen({ bytes: 1 << 20 }); // and the room is taken, so none is read back
    expect(old.map((b) => b.state)).toEqual(['paged-out', 'paged-out', 'paged-out']);
    const fourth = held('4');
    await keeper.persist(fourth);
    expect(fourth.spool).toBeDefined();
    expect(spoolStats.evicted).toBe(1);
    expect(stats.pointsDroppedByReason).toEqual({ 'spool-full': 1 });
    expect(old.map((b) => b.state)).toEqual(['settled', 'paged-out', 'paged-out']);
    await waitFor(() => files().length === 3, 2_000, 'three files');
  });

  // A stored batch's file goes after the chains it names; for a chain no longer in memory the
  // journal is listed first. A listing that fails must not leave the file on disk uncounted and
  // never deleted: it is counted while it stays, and both are tried again.
  test('a file whose chain could not be forgotten stays counted and is deleted later', async () => {
    const fs = new FaultyFileSystem()
      .only((path) => path.endsWith(`${sep}journal`))
      .failNext('readdir', 'EIO');
    mkdirSync(join(dir, 'journal'), { recursive: true });
    const journal = testJournal(dir, { syncMillis: 60_000 });
    journal.attach({
      dir: join(dir, 'journal'),
      quarantineDir: join(dir, 'quarantine'),
      fs,
      disk: new DiskDeadline(10_000),
    });
    const { keeper, prepared, budget, spoolStats } = await setup(new ScriptedS3(), {
      fs,
      retryEveryMillis: 300,
      journal,
    });
    try {
      const batch = prepared('a', 200);
      batch.journaled('0190a0a0-0000-7000-8000-000000000001');
      await keeper.persist(batch);
      const fileBytes = batch.spool?.fileBytes;
      expect(spoolStats).toMatchObject({ files: 1, bytes: fileBytes });
      budget.settle(batch, 'uploaded');
      await waitFor(() => fs.failures.length === 1, 2_000, 'the listing of the journal fails');
      await new Promise((resolve) => setImmediate(resolve));
      expect(files()).toHaveLength(1);
      // The next write counts what is on disk: that file, and its own.
      const next = prepared('b', 200);
      await keeper.persist(next);
      expect(files()).toHaveLength(2);
      expect(spoolStats).toMatchObject({
        files: 2,
        bytes: (fileBytes ?? 0) + (next.spool?.fileBytes ?? 0),
      });
      await waitFor(() => files().length === 1, 2_000, 'the file deleted at a retry');
      expect(files()).toEqual([next.spool?.name]);
      expect(spoolStats).toMatchObject({ files: 1, bytes: next.spool?.fileBytes });
    } finally {
      await journal.close(100);
    }
  });

  test('a paged-out batch is read back and uploaded when memory allows', async () => {
    const s3 = new ScriptedS3();
    const { keeper, prepared, budget } = await setup(s3, { limit: 1_000 });
    const batch = prepared('a', 200);
    await keeper.persist(batch);
    batch.queue();
    expect(budget.makeRoom(900)).toBe(true); // pages it out
    expect(batch.state).toBe('paged-out');
    expect(budget.bytes).toBe(0);
    keeper.pump();
    expect(await batch.settled).toBe('uploaded');
    expect(s3.stored.get('a.json')?.length).toBe(200);
  });

  // Exporters of several signals (one S3Exporters) share the memory bound: a batch of one paged
  // out to make room for another's is read back once that one's bytes are gone, not only when a
  // batch of its own is stored or at the next retry round (retry.maxDelayMillis, 30 s by
  // default: longer than a shutdown waits, which then leaves it on disk with S3 healthy).
  test("a paged-out batch is read back when another signal's batch frees the memory", async () => {
    const s3 = new ScriptedS3();
    const { keeper, prepared, budget } = await setup(s3, {
      limit: 1_000,
      retryEveryMillis: 60_000,
    });
    const batch = prepared('a', 200);
    await keeper.persist(batch);
    batch.queue();
    keeper.pump(); // nothing to read back yet
    const other = { outcomes: budget.ownerOf(batch).outcomes, pager: undefined };
    const theirs = SealedBatch.seal({
      contents: { records: [Buffer.from('t')] },
      rawBytes: 900,
      points: 1,
      attributes: {},
      dataTimeMillis: undefined,
    });
    expect(budget.makeRoom(900)).toBe(true); // pages ours out
    budget.admit(theirs, 900, other);
    expect(batch.state).toBe('paged-out');
    keeper.pump(); // no room: it stays on disk
    expect(batch.state).toBe('paged-out');
    budget.settle(theirs, 'uploaded'); // the other signal's upload is done
    await waitFor(() => batch.isSettled, 2_000, 'ours read back and stored');
    expect(await batch.settled).toBe('uploaded');
  });

  // Paged out under memory pressure while it waits out a server's Retry-After: read back, it
  // must still wait, not be retried at once (a throttled server hammered by every page-in).
  test("a paged-out batch read back keeps the server's Retry-After", async () => {
    const s3 = new ScriptedS3().script([
      { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '1' } },
    ]);
    const { keeper, prepared, budget, uploader } = await setup(s3, {
      limit: 1_000,
      retryEveryMillis: 60_000,
    });
    const batch = prepared('a', 200);
    await keeper.persist(batch);
    batch.queue();
    uploader.submit(batch);
    await waitFor(() => batch.state === 'backing-off', 2_000, 'the 503');
    const failedAt = performance.now();
    expect(budget.makeRoom(900)).toBe(true); // pages it out
    expect(batch.state).toBe('paged-out');
    keeper.pump();
    await waitFor(
      () => batch.state !== 'paged-out' && batch.state !== 'paging-in',
      2_000,
      'read back',
    );
    expect(await batch.settled).toBe('uploaded');
    expect(s3.attempts).toHaveLength(2);
    expect(performance.now() - failedAt).toBeGreaterThanOrEqual(900);
  });

  // Retry-After is a floor under the jittered backoff: read back, the batch waits out the rest of
  // the server's time, not the rest of an ordinary backoff that a page-in never kept before.
  test("a batch read back waits out the server's Retry-After, not a longer backoff", async () => {
    const s3 = new ScriptedS3().script([
      { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '1' } },
    ]);
    const { keeper, prepared, budget, uploader } = await setup(s3, {
      limit: 1_000,
      retryEveryMillis: 60_000,
      backoff: { initialDelayMillis: 60_000, maxDelayMillis: 60_000 },
    });
    const batch = prepared('a', 200);
    await keeper.persist(batch);
    batch.queue();
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5); // a 30 s backoff
    uploader.submit(batch);
    await waitFor(() => batch.state === 'backing-off', 2_000, 'the 503');
    random.mockRestore();
    const failedAt = performance.now();
    expect(budget.makeRoom(900)).toBe(true); // pages it out
    keeper.pump();
    await waitFor(() => s3.attempts.length === 2, 3_000, 'the retry');
    expect(await batch.settled).toBe('uploaded');
    expect(performance.now() - failedAt).toBeGreaterThanOrEqual(900);
  });

  // A batch on disk that still waits out a Retry-After is not read back yet: in memory it could
  // not be sent anyway, and it would take the room of the batches behind it that can.
  test('pump() reads back the batches that may be sent before one that still waits', async () => {
    const s3 = new ScriptedS3().script([
      { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '1' } },
    ]);
    const { keeper, prepared, budget, uploader } = await setup(s3, {
      limit: 1_000,
      retryEveryMillis: 60_000,
    });
    const [waiting, ready] = [prepared('w', 200), prepared('r', 200)];
    for (const b of [waiting, ready]) await keeper.persist(b);
    waiting.queue();
    uploader.submit(waiting);
    await waitFor(() => waiting.state === 'backing-off', 2_000, 'the 503');
    const failedAt = performance.now();
    ready.queue();
    expect(budget.makeRoom(1_000)).toBe(true); // pages both out
    expect([waiting.state, ready.state]).toEqual(['paged-out', 'paged-out']);
    // Room for one of them only.
    prepared('f', 1_000 - (ready.spool?.fileBytes ?? 0) - 1);
    keeper.pump();
    expect(await ready.settled).toBe('uploaded');
    expect(performance.now() - failedAt).toBeLessThan(900);
    expect(waiting.state).toBe('paged-out');
    // ... and once its time has come, it is read back and sent, without waiting for the timer.
    await waitFor(() => s3.attempts.length === 3, 3_000, 'the retry');
    expect(performance.now() - failedAt).toBeGreaterThanOrEqual(900);
  });

  test('restore() registers what an earlier run left, oldest first, and uploads it', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const first = await setup(s3);
    const written = [first.prepared('1'), first.prepared('2'), first.prepared('3')];
    for (const b of written) await first.keeper.persist(b);
    await first.keeper.close();
    keepers.length = 0;
    const later = new ScriptedS3();
    // One read at a time, so the upload order is the page-in order.
    const second = await setup(later, { loadConcurrency: 1 });
    await second.keeper.restore();
    await waitFor(() => second.spoolStats.replayed === 3, 2_000, 'all replayed');
    expect(later.attempts.map((a) => a.key)).toEqual(['1.json', '2.json', '3.json']);
  });
});

describe('SpoolKeeper: a complete file left in tmp/ that cannot be read at first', () => {
  // A crash between a write's fsync and its rename leaves a whole file in tmp/. If the first
  // read of it fails (EIO, EMFILE, the deadline), it is counted as a read to try again, and it
  // must be tried again where it is: in tmp/, not looked for in batches/.
  for (const op of ['readFile', 'rename'] as const) {
    test(`a ${op} that fails once is tried again, and the batch is uploaded in this run`, async () => {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const first = await setup(s3);
      const batch = first.prepared('t');
      await first.keeper.persist(batch);
      await first.keeper.close();
      keepers.length = 0;
      const name = batch.spool?.name as string;
      renameSync(join(dir, 'batches', name), join(dir, 'tmp', `${name}.tmp`));
      const fs = new FaultyFileSystem().only((path) => path.includes('/tmp/')).failNext(op, 'EIO');
      const later = new ScriptedS3();
      const second = await setup(later, { fs });
      await second.keeper.restore();
      expect(second.spoolStats.readFailures).toEqual({ EIO: 1 });
      await waitFor(() => second.spoolStats.replayed === 1, 2_000, 'the adopted file uploaded');
      expect(later.attempts.map((a) => a.key)).toEqual(['t.json']);
      await waitFor(() => files().length === 0, 2_000, 'its file deleted once stored');
      expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    });
  }
});
