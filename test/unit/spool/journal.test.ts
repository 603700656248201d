import { cpSync } from 'node:fs';
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { type AnyExporter, exportTagged, SIGNALS } from '../../support/signal-driver.js';
import { spoolExporter } from '../../support/spool-exporter.js';
import { tempDirs } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';
import { builtInZstd } from '../../support/zstd.js';

/**
 * The open batch's journal, crashed in-process: a copy of the spool directory taken while the
 * exporter runs (without its lock) is what a kill -9 at that moment would leave on disk. An
 * exporter started on the copy replays it; what the test exported is the expected content.
 */
describe('the journal of the open batch', () => {
  const newDir = tempDirs();
  const running: AnyExporter[] = [];
  afterEach(async () => {
    for (const e of running.splice(0)) await e.shutdown();
  });

  const POINTS = 3;
  const slow: Partial<S3MetricExporterOptions> = {
    // A batch that would stay open for ten minutes: only the journal holds it.
    maxBatchAgeMillis: 600_000,
    journalSyncMillis: 50,
  };

  const start = (s3: ScriptedS3, dir: string, options: Partial<S3MetricExporterOptions> = {}) => {
    const e = spoolExporter(s3, dir, { ...slow, ...options });
    running.push(e);
    return e;
  };

  /** What a kill -9 now would leave: the spool's files, without the lock of the live process. */
  async function crashCopy(dir: string): Promise<string> {
    const copy = await newDir('otel-s3-journal-crash-');
    await cp(dir, copy, { recursive: true, filter: notLock });
    return copy;
  }
  const notLock = (src: string) => basename(src) !== 'owner.lock' && !src.includes('/owner.lock/');

  const active = (e: AnyExporter) =>
    waitFor(() => e.stats().spool?.state === 'active', 5_000, 'the spool adopted');
  const journalFiles = async (dir: string) => (await readdir(join(dir, 'journal'))).sort();
  const exportTags = async (e: S3MetricExporter, tags: number[]) => {
    for (const tag of tags) expect((await exportSynthetic(e, POINTS, tag)).code).toBe(0);
  };
  const times = (tags: number[]) => tags.flatMap((t) => Array<number>(POINTS).fill(t));

  /**
   * An exporter started on a new directory with `tags` exported into its open batch, made
   * durable by a group commit, and `crashed`: a crash copy of the directory taken then.
   */
  async function journaledThenCrashed(
    tags: number[],
    options: Partial<S3MetricExporterOptions> = {},
    s3 = new ScriptedS3(),
  ) {
    const dir = await newDir('otel-s3-journal-');
    const before = start(s3, dir, options);
    await active(before);
    await exportTags(before, tags);
    await waitFor(() => (before.stats().spool?.journalSyncs ?? 0) > 0, 2_000, 'a group commit');
    await new Promise((r) => setTimeout(r, 120));
    return { dir, before, crashed: await crashCopy(dir) };
  }

  for (const format of ['otlp-json', 'otlp-proto', 'parquet'] as const) {
    test(`${format}: a crash loses no export older than one sync interval, and a restart stores each once`, async () => {
      // One group commit later, the five exports are durable.
      const { dir, crashed } = await journaledThenCrashed([1, 2, 3, 4, 5], { format });
      expect(await journalFiles(dir)).toHaveLength(1);

      const s3 = new ScriptedS3();
      const after = start(s3, crashed, { format });
      await waitFor(() => after.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
      await after.forceFlush();
      expect(s3.storedTags()).toEqual(times([1, 2, 3, 4, 5]));
      // Parquet's journal keeps OTLP/protobuf records: the replayed batch is stored as those.
      const [key] = [...s3.stored.keys()];
      expect(key).toMatch(format === 'otlp-json' ? /\.json$/ : /\.binpb$/);
      await waitFor(async () => (await journalFiles(crashed)).length === 0, 2_000, 'chain deleted');
      // The spool file goes after its chain.
      await waitFor(
        async () => (await readdir(join(crashed, 'batches'))).length === 0,
        2_000,
        'spool file deleted',
      );
    });
  }

  // A deploy that changes the format: the chain keeps the kind of record it was written in, and
  // is stored as those records (the run's compression where its records are framed and
  // compressed; Parquet's run stores them as they are), as a spool file of another format is.
  const switches = [
    ['otlp-json', 'otlp-proto', /\.json\.gz$/, 'application/gzip'],
    ['otlp-json', 'parquet', /\.json$/, 'application/json'],
    ['otlp-proto', 'otlp-json', /\.binpb\.gz$/, 'application/gzip'],
    ['parquet', 'otlp-json', /\.binpb\.gz$/, 'application/gzip'],
  ] as const;
  for (const [was, now, name, contentType] of switches) {
    test(`${was}, restarted as ${now}: the chain is replayed in the records it holds`, async () => {
      const { crashed } = await journaledThenCrashed([1, 2, 3], {
        format: was,
        compression: 'gzip',
      });

      const s3 = new ScriptedS3();
      const after = start(s3, crashed, { format: now, compression: 'gzip' });
      await waitFor(() => after.stats().spool?.journalReplayed !== undefined, 5_000, 'adopted');
      await waitFor(() => s3.stored.size === 1, 5_000, 'the replayed batch stored');
      // Before: moved to quarantine ("holds otlp-json records, not otlp-proto"), nothing stored.
      expect(after.stats().spool?.quarantined).toBe(0);
      expect(after.stats().spool?.journalReplayed).toBe(1);
      expect(
        s3.attempts.filter((a) => a.outcome === 'ok').map((a) => [a.key, a.contentType]),
      ).toEqual([[expect.stringMatching(name), contentType]]);
      expect(s3.storedTags()).toEqual(times([1, 2, 3]));
      await waitFor(async () => (await journalFiles(crashed)).length === 0, 2_000, 'chain deleted');
    });
  }

  // A spool file left by a run of another format (S3 unreachable, then a deploy that changes the
  // format): each format has its own default key layout, and the file's key is the old one's.
  const fileSwitches = [
    ['otlp-json', 'parquet', /\/minute=\d\d\/metrics_[^/]+\.json\.gz$/],
    ['parquet', 'otlp-json', /\/hour=\d\d\/metrics_[^/]+\.parquet$/],
  ] as const;
  for (const [was, now, name] of fileSwitches) {
    test(`a spool file of ${was}, restarted as ${now} with the default key layouts: uploaded as it was written`, async () => {
      const hanging = new ScriptedS3().script([], { kind: 'hang' });
      const { dir, before } = await journaledThenCrashed(
        [1, 2, 3],
        { format: was, compression: 'gzip', requestTimeoutMillis: 60_000, flushTimeoutMillis: 50 },
        hanging,
      );
      await before.forceFlush(); // seals; the upload hangs
      await waitFor(() => before.stats().spool?.written === 1, 2_000, 'the spool file');
      await waitFor(async () => (await journalFiles(dir)).length === 0, 2_000, 'chain deleted');
      const crashed = await crashCopy(dir);
      expect(await readdir(join(crashed, 'batches'))).toHaveLength(1);

      const s3 = new ScriptedS3();
      const after = start(s3, crashed, { format: now, compression: 'gzip' });
      await active(after);
      // The spool's files are loaded and uploaded in the background, not by forceFlush().
      await waitFor(() => s3.stored.size === 1, 5_000, 'the spool file stored');
      // Before: quarantined ("its key ... is not one this exporter writes"), nothing stored.
      expect(after.stats().spool?.quarantined).toBe(0);
      expect(after.stats().pointsDropped).toBe(0);
      expect([...s3.stored.keys()]).toEqual([expect.stringMatching(name)]);
      // The object the earlier run tried to store, byte for byte, under its key.
      const [tried] = hanging.attempts;
      expect([...s3.stored]).toEqual([[tried?.key, tried?.body]]);
    });
  }

  test('a directory among the spool files is quarantined, and the journal is replayed all the same', async () => {
    const { crashed } = await journaledThenCrashed([1, 2], { format: 'otlp-json' });
    await mkdir(join(crashed, 'batches', 'not-a-batch'));
    const s3 = new ScriptedS3();
    const after = start(s3, crashed, { format: 'otlp-json' });
    // Before: read as a file that may become readable (EISDIR), again and again; the spool never
    // counted as scanned, so the journal was never replayed.
    await waitFor(() => after.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
    await after.forceFlush();
    expect(s3.storedTags()).toEqual(times([1, 2]));
    expect(after.stats().spool?.readFailures).toEqual({});
    expect(await readdir(join(crashed, 'quarantine'))).toEqual([
      expect.stringContaining('not-a-batch'),
    ]);
  });

  test.runIf(builtInZstd)(
    "zstd on node:zlib: a chain replayed while the new run's open batch takes exports is stored compressed, under the key it would have had",
    async () => {
      const zstd = { format: 'otlp-json', compression: 'zstd' } as const;
      const { crashed } = await journaledThenCrashed([1, 2], zstd);

      const s3 = new ScriptedS3();
      const after = start(s3, crashed, zstd);
      // Exported before the spool is adopted: the open batch's zstd frame is open at the replay.
      await exportTags(after, [3]);
      await waitFor(() => after.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
      await waitFor(() => s3.stored.size === 1, 5_000, 'the replayed batch stored');
      // Before: "a zstd frame is still open", and the batch went out uncompressed, as `.json`.
      expect([...s3.stored.keys()]).toEqual([expect.stringMatching(/\.json\.zst$/)]);
      await after.forceFlush();
      expect([...s3.storedTags()].sort((a, b) => a - b)).toEqual(times([1, 2, 3]));
    },
  );

  // A replayed batch whose spool file cannot be written goes to S3 from memory: stored, it is
  // a batch restored from an earlier run and stored, as one whose spool file was written.
  test('a replayed batch stored from memory (its spool file not written) is counted in replayed', async () => {
    const { crashed } = await journaledThenCrashed([1, 2]);

    const s3 = new ScriptedS3();
    const noSpoolFiles = new FaultyFileSystem()
      .only((path) => path.startsWith(join(crashed, 'tmp')))
      .failNext('create', 'EIO', 1_000);
    const after = start(s3, crashed, { spoolFileSystem: noSpoolFiles });
    await waitFor(() => after.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
    await waitFor(() => s3.storedTags().length === 2 * POINTS, 5_000, 'the batch stored');
    await waitFor(() => after.stats().batchesUploaded >= 1, 2_000, 'its upload counted');
    const spool = after.stats().spool;
    expect(spool?.written).toBe(0);
    expect(spool?.replayed).toBe(1);
  });

  /**
   * An exporter on a new directory whose uploads hang, with exports 1 to 3 in its journal (a
   * crash copy of the directory taken then, `whileOpen`), then sealed and written to the spool.
   */
  async function journaledThenSpooled() {
    const hanging = new ScriptedS3().script([], { kind: 'hang' });
    const { dir, before, crashed } = await journaledThenCrashed(
      [1, 2, 3],
      { requestTimeoutMillis: 60_000, flushTimeoutMillis: 50 },
      hanging,
    );
    await before.forceFlush(); // seals; the upload hangs
    await waitFor(() => before.stats().spool?.written === 1, 2_000, 'the spool file');
    return { dir, before, whileOpen: crashed };
  }

  // The crash came after a spool file was durable and before the chain it names was deleted.
  // At the restart another spool file cannot be read, so the journal waits for the next start;
  // the file's batch is stored and its file deleted meanwhile: its chain must go first, or the
  // next start replays it (unsealed: under a new key) and stores the same exports twice.
  test('a chain a restored file names goes before the file, also when the replay waits for the next start', async () => {
    const { dir, whileOpen } = await journaledThenSpooled();
    const crashed = await crashCopy(dir);
    for (const name of await journalFiles(whileOpen))
      await cp(join(whileOpen, 'journal', name), join(crashed, 'journal', name));
    expect(await journalFiles(crashed)).toHaveLength(1);
    const [file] = await readdir(join(crashed, 'batches'));
    // A second file, which the first restart cannot read.
    await cp(join(crashed, 'batches', file as string), join(crashed, 'batches', 'z.batch'));

    const s3 = new ScriptedS3();
    const unreadable = new FaultyFileSystem()
      .only((path) => path.endsWith('z.batch'))
      .failNext('readFile', 'EIO', 1_000);
    const first = start(s3, crashed, { spoolFileSystem: unreadable });
    await waitFor(() => s3.storedTags().length >= 3 * POINTS, 5_000, 'the file stored');
    await first.shutdown();
    running.splice(running.indexOf(first), 1);
    expect(await journalFiles(crashed)).toEqual([]);
    await rm(join(crashed, 'batches', 'z.batch'));

    const second = start(s3, crashed);
    await active(second);
    await new Promise((r) => setTimeout(r, 300));
    await second.forceFlush();
    expect(s3.storedTags()).toEqual(times([1, 2, 3]));
  });

  test('a batch sealed and written to the spool before the crash is replayed from its file only', async () => {
    // Uploads hang: the sealed batch stays in the spool, its chain must not replay it again.
    const { dir, before, whileOpen } = await journaledThenSpooled();
    await exportTags(before, [4]);
    await new Promise((r) => setTimeout(r, 150));
    const crashed = await crashCopy(dir);
    // The crash came after the spool file was durable and before the chain of its open batch
    // was deleted: both are on disk.
    for (const name of await journalFiles(whileOpen))
      await cp(join(whileOpen, 'journal', name), join(crashed, 'journal', name));
    expect(await journalFiles(crashed)).toHaveLength(2);

    const s3 = new ScriptedS3();
    const after = start(s3, crashed);
    await waitFor(() => after.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
    await after.forceFlush();
    await waitFor(() => s3.storedTags().length >= 4 * POINTS, 2_000, 'both batches stored');
    await new Promise((r) => setTimeout(r, 100));
    expect(s3.storedTags()).toEqual(times([1, 2, 3, 4]));
    // One PUT per batch: the spool file's, and the open batch's from the journal.
    expect(s3.attempts.map((a) => a.outcome)).toEqual(['ok', 'ok']);
    await waitFor(async () => (await journalFiles(crashed)).length === 0, 2_000, 'chains deleted');
  });

  test('a replay that dies before its upload is acknowledged is replayed under the same key', async () => {
    const { crashed } = await journaledThenCrashed([1, 2]);

    // The first replay's PUT lands but its answer never comes; it dies then. Its spool file never
    // becomes durable (rename fails): the journal's chain, with the seal it wrote, is what is left.
    const s3 = new ScriptedS3().script([{ kind: 'store-then-hang' }]);
    const first = start(s3, crashed, {
      requestTimeoutMillis: 60_000,
      spoolFileSystem: new FaultyFileSystem().failNext('rename', 'EIO', 1_000),
    });
    await waitFor(() => s3.attempts.length === 1, 5_000, 'the replayed PUT');
    const crashedAgain = await crashCopy(crashed);

    expect(first.stats().spool?.written).toBe(0);
    const second = start(s3, crashedAgain);
    await waitFor(() => second.stats().spool?.journalReplayed === 1, 5_000, 'the second replay');
    await second.forceFlush();
    expect(s3.attempts).toHaveLength(2);
    expect(s3.attempts[1]?.key).toBe(s3.attempts[0]?.key);
    expect(s3.attempts[1]?.outcome).toBe('exists');
    expect(s3.storedTags()).toEqual(times([1, 2]));
    expect(first.stats().spool?.journalReplayed).toBe(1);
  });

  // A batch whose spool file never becomes durable is uploaded from memory. Its chain holds its
  // records: before its first PUT, the chain must hold its seal too (the restart then replays it
  // under the same key), or be gone (nothing to replay); never records without a seal, which a
  // restart would store again under a new key.
  const unspooled = [
    {
      name: 'its seal is made durable first, and a restart replays it under the same key',
      disk: () => new FaultyFileSystem().failNext('rename', 'EIO', 1_000),
      replayed: 1,
    },
    {
      name: 'if the journal cannot take its seal, its chain is deleted first',
      // Journal writes fail after the first group commit and the spool file's write.
      disk: () =>
        new FaultyFileSystem()
          .failNext('rename', 'EIO', 1_000)
          .failNext('write', 'ENOSPC', 1_000, 2),
      replayed: 0,
    },
  ];
  for (const { name, disk, replayed } of unspooled)
    test(`a batch uploaded without a spool file: ${name}`, async () => {
      const dir = await newDir('otel-s3-journal-');
      const crashed = await newDir('otel-s3-journal-crash-');
      // Its PUT lands but no answer comes before the crash.
      const s3 = new ScriptedS3().script([{ kind: 'store-then-hang' }]);
      // The crash: what is on disk when the PUT arrives (copied before anything else runs).
      s3.onAttempt = () => {
        if (s3.attempts.length === 1) cpSync(dir, crashed, { recursive: true, filter: notLock });
      };
      const before = start(s3, dir, {
        journalSyncMillis: 500,
        requestTimeoutMillis: 60_000,
        flushTimeoutMillis: 50,
        spoolFileSystem: disk(),
      });
      await active(before);
      await exportTags(before, [1, 2]);
      // The records are durable in the chain; the seal would be at the next group commit.
      await waitFor(() => (before.stats().spool?.journalSyncs ?? 0) > 0, 2_000, 'a group commit');
      void before.forceFlush();
      await waitFor(() => s3.attempts.length === 1, 2_000, 'the first PUT');
      expect(before.stats().spool?.written).toBe(0);

      const after = start(s3, crashed);
      await active(after);
      await new Promise((r) => setTimeout(r, 100));
      await after.forceFlush();
      // Once each: a second PUT goes under the first one's key, and the server refuses it.
      expect(s3.storedTags()).toEqual(times([1, 2]));
      expect(after.stats().spool?.journalReplayed).toBe(replayed);
      expect(s3.attempts.map((a) => a.key)).toEqual(
        Array<string | undefined>(1 + replayed).fill(s3.attempts[0]?.key),
      );
      if (replayed === 1) expect(s3.attempts[1]?.outcome).toBe('exists');
    });

  test('a shutdown that gives up a batch whole in its chain (its spool file failed) counts it kept, not dropped, and the next run stores it once', async () => {
    const dir = await newDir('otel-s3-journal-');
    // S3 down through the first run; the spool file never becomes durable (rename fails).
    const down = new ScriptedS3().script([], { kind: 'status', status: 503, name: 'SlowDown' });
    const first = start(down, dir, {
      flushTimeoutMillis: 300,
      spoolFileSystem: new FaultyFileSystem().failNext('rename', 'EIO', 1_000),
    });
    await active(first);
    await exportTags(first, [1, 2]);
    await waitFor(() => (first.stats().spool?.journalSyncs ?? 0) > 0, 2_000, 'a group commit');
    await first.shutdown();
    const stats = first.stats();
    expect(stats.spool?.written).toBe(0);
    // Before: counted dropped ('shutdown') although the next run stores it.
    expect(stats.pointsDroppedByReason).toEqual({});
    expect(stats.pointsDropped).toBe(0);
    // Left on disk (in its chain) for the next run, as a batch with a spool file is.
    expect(stats.spool?.leftAtShutdown).toBe(1);
    expect(await journalFiles(dir)).not.toEqual([]);

    const s3 = new ScriptedS3();
    const after = start(s3, dir);
    await waitFor(() => after.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
    await after.forceFlush();
    expect(s3.storedTags()).toEqual(times([1, 2]));
  });

  test('exports larger than the journal holds between commits, on a disk that keeps up: said once, and not as a disk fault', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(String(w));
    process.on('warning', onWarning);
    try {
      const dir = await newDir('otel-s3-journal-');
      // The journal holds at most max(2 × maxBatchBytes, maxBufferedBytes / 4) = 512 KiB for
      // an open batch between two group commits; each large export here is more.
      const e = start(new ScriptedS3(), dir, {
        maxBatchAgeMillis: 600_000,
        maxBatchBytes: 256 * 1024,
        maxBufferedBytes: 2 * 1024 * 1024,
      });
      await active(e);
      for (let tag = 1; tag <= 4; tag++) {
        // A small export, journaled and committed; then a large one into the same open batch.
        const syncs = e.stats().spool?.journalSyncs ?? 0;
        expect((await exportSynthetic(e, 10, tag)).code).toBe(0);
        await waitFor(() => (e.stats().spool?.journalSyncs ?? 0) > syncs, 2_000, 'a group commit');
        expect((await exportSynthetic(e, 6_000, tag)).code).toBe(0);
        await e.forceFlush(); // the batch is sealed and stored: the next one has a chain again
      }
      expect(e.stats().spool?.journalWriteFailures.memory ?? 0).toBeGreaterThanOrEqual(2);
      await new Promise((r) => setImmediate(r));
      const said = warnings.filter((w) => w.includes('group commit'));
      // Before: said again after every commit, as "waited for the disk".
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/a disk slower than the exports, or exports that large/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  for (const format of ['otlp-json', 'parquet'] as const) {
    test(`${format}: an orderly shutdown leaves no chain behind, and the next run replays nothing`, async () => {
      const dir = await newDir('otel-s3-journal-');
      const s3 = new ScriptedS3();
      // A deadline that a loaded machine cannot miss: an orderly shutdown is what is checked,
      // not the deadline (past it, the chain is rightly kept for the next run).
      const first = start(s3, dir, { format, flushTimeoutMillis: 20_000 });
      await active(first);
      await exportTags(first, [1, 2, 3]);
      await waitFor(() => (first.stats().spool?.journalSyncs ?? 0) > 0, 2_000, 'a group commit');
      await first.shutdown();
      expect(await journalFiles(dir)).toEqual([]);
      const keys = [...s3.stored.keys()];
      expect(keys).toHaveLength(1);
      if (format === 'parquet') expect(keys[0]).toMatch(/\.parquet$/);
      else expect(s3.storedTags()).toEqual(times([1, 2, 3]));

      const next = start(s3, dir, { format });
      await active(next);
      await new Promise((r) => setTimeout(r, 200));
      await next.shutdown();
      expect(next.stats().spool?.journalReplayed).toBe(0);
      expect(s3.attempts).toHaveLength(1);
    });
  }

  test('journalSyncMillis 0: no journal', async () => {
    const dir = await newDir('otel-s3-journal-');
    const e = start(new ScriptedS3(), dir, { journalSyncMillis: 0 });
    await active(e);
    await exportTags(e, [1]);
    await new Promise((r) => setTimeout(r, 120));
    expect(await journalFiles(dir)).toEqual([]);
    expect(e.stats().spool?.journalSyncs).toBe(0);
  });
  for (const driver of SIGNALS) {
    for (const format of ['otlp-json', 'parquet'] as const) {
      test(`${driver.signal}, ${format}: the journal's copy is counted by the memory bound, and in bufferedBytes`, async () => {
        const dir = await newDir('otel-s3-journal-');
        const limit = 2 * 1024 * 1024;
        const e = spoolExporter(
          new ScriptedS3(),
          dir,
          { ...slow, format, maxBufferedBytes: limit, maxBatchBytes: limit },
          driver,
        );
        running.push(e);
        await active(e);
        // Exports of 3,000 items: a few fill the open batch and its journal up to the bound.
        for (let tag = 1; tag <= 8; tag++) {
          await exportTagged(driver, e, 3000, tag);
          const s = e.stats();
          // Before: the journal's copy was taken past the bound, and bufferedBytes left it out.
          expect(s.peakBufferedBytes).toBeLessThanOrEqual(limit);
          // The first export's bytes, the journal's copy with them, are all that is held.
          if (tag === 1) expect(s.bufferedBytes).toBe(s.peakBufferedBytes);
        }
      });
    }
  }
});
