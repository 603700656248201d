import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { uuidv7 } from 'uuidv7';
import { beforeEach, describe, expect, test } from 'vitest';
import { objectKey, type S3MetricExporterOptions } from '../../../src/index.js';
import { emptySpoolStats } from '../../../src/pipeline/stats.js';
import { DiskDeadline } from '../../../src/spool/disk-deadline.js';
import {
  decodeSpoolFile,
  encodeSpoolFile,
  type SpoolMeta,
} from '../../../src/spool/file-format.js';
import { nodeFileSystem } from '../../../src/spool/file-system.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { describeStalls, loopStallsWhile } from '../../support/loop-stall.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import {
  type AnyExporter,
  exportTagged,
  METRICS,
  SIGNALS,
  type SignalDriver,
  signalSpoolDir,
} from '../../support/signal-driver.js';
import { openSpool, spoolExporterIn, testJournal } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const messages = captureDiag();

let dir: string;
beforeEach(() => tempDir('otel-s3-spool-hard-', (path) => (dir = path)));

/** The exporter of these tests (of metrics, or of `driver`'s signal), on the test's spool directory. */
const exporterWith = spoolExporterIn(() => dir, { flushTimeoutMillis: 2_000 });

/** Exports tags from..to, each sealed into a batch of its own, waiting until `ready()` each time. */
async function exportEach(
  driver: SignalDriver,
  exporter: AnyExporter,
  from: number,
  to: number,
  ready: (tag: number) => boolean,
): Promise<void> {
  for (let tag = from; tag <= to; tag++) {
    expect((await exportTagged(driver, exporter, 5, tag)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => ready(tag), 5_000, `batch ${tag}`);
  }
}

const tagsOf = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i).flatMap(
    (t) => Array(5).fill(t) as number[],
  );
const batchFiles = (driver: SignalDriver = METRICS) =>
  readdirSync(join(signalSpoolDir(dir, driver), 'batches')).filter((n) => n.endsWith('.batch'));
const tagOfBody = (body: Buffer) =>
  Number(/"key":"tag","value":\{"intValue":(\d+)\}/.exec(body.toString())?.[1]);

describe('write-ahead', () => {
  test('each batch is written, fsynced, renamed and its directory fsynced, in that order, before its first PutObject', async () => {
    const fs = new FaultyFileSystem();
    const s3 = new ScriptedS3();
    const seen: { key: string; onDisk: boolean; callsSoFar: number }[] = [];
    s3.onAttempt = (attempt) => {
      const onDisk = batchFiles().some(
        (n) => decodeSpoolFile(readFileSync(join(dir, 'batches', n))).meta.key === attempt.key,
      );
      seen.push({ key: attempt.key, onDisk, callsSoFar: fs.calls.length });
    };
    const exporter = exporterWith(s3, { spoolFileSystem: fs });
    await exportEach(METRICS, exporter, 1, 3, (tag) => exporter.stats().batchesUploaded === tag);
    await exporter.shutdown();
    expect(seen).toHaveLength(3);
    for (const attempt of seen) {
      expect(attempt.onDisk, `${attempt.key} on disk when sent`).toBe(true);
      // The calls of this batch's file, up to the moment its upload was sent.
      const calls = fs.calls.slice(0, attempt.callsSoFar);
      const created = calls.filter((c) => c.op === 'create').at(-1)?.path as string;
      const name = created.slice(created.lastIndexOf('/') + 1).replace(/\.tmp$/, '');
      const ours = calls
        .filter((c) => c.path === created || c.to?.endsWith(name) === true)
        .map((c) => c.op);
      expect(ours).toEqual(['create', 'write', 'fsync', 'close', 'rename', 'syncDirectory']);
    }
    expect(s3.storedTags()).toEqual(tagsOf(1, 3));
  });
});

for (const driver of SIGNALS) {
  describe(`${driver.signal}: a hung disk`, () => {
    test('uploads go on from memory, the event loop stays free, shutdown is bounded, and the late file is never trusted', async () => {
      const fs = new FaultyFileSystem();
      const s3 = new ScriptedS3();
      const exporter = exporterWith(s3, { spoolFileSystem: fs, spoolTimeoutMillis: 200 }, driver);
      // Opening the spool runs under the same 200 ms deadline: on a busy machine it can overrun
      // it, and batches sealed before the next try are kept in memory without a write to count.
      await waitFor(() => exporter.stats().spool?.state === 'active', 5_000, 'the spool active');
      // A warm-up batch, spooled and uploaded normally: the first batch's one-time work (loading
      // and compiling modules) can stall the loop for hundreds of ms on a busy machine, which is
      // not what this test measures.
      await exportEach(
        driver,
        exporter,
        0,
        0,
        () => exporter.stats().batchesUploaded === 1 && batchFiles(driver).length === 0,
      );
      expect(exporter.stats().spool?.writeFailures).toEqual({});
      const callsBeforeHang = fs.calls.length;
      fs.hangNext('fsync');
      const loop = await loopStallsWhile(() =>
        exportEach(driver, exporter, 1, 6, (tag) => exporter.stats().batchesUploaded === tag + 1),
      );
      console.log(`[measure] hung fsync: event loop ${describeStalls(loop)}`);
      // The loop held by work on it: this thread's CPU time between two turns of a 5 ms timer.
      // The delay a clock sees also counts the time the thread is descheduled on a busy machine.
      expect(loop.maxHeldMillis, describeStalls(loop)).toBeLessThan(200);
      const stats = exporter.stats();
      expect(s3.storedTags()).toEqual(tagsOf(0, 6));
      expect(stats.pointsDropped).toBe(0);
      // One write abandoned at its deadline, the later ones not even tried while it hangs.
      expect(stats.spool?.writeFailures.timeout).toBe(1);
      expect(stats.spool?.writeFailures.stalled).toBe(5);
      expect(fs.hanging).toBe(1);
      expect(
        messages.filter((m) => /abandoned \(the disk may be hung\)/.test(m.text)),
      ).toHaveLength(1);
      const started = performance.now();
      await exporter.shutdown();
      expect(performance.now() - started).toBeLessThan(2_000 + 1_500);
      // The hung write finishes after all: its file is removed, never adopted as a batch.
      fs.release();
      await waitFor(
        () =>
          fs.calls
            .slice(callsBeforeHang)
            .some((c) => c.op === 'unlink' && c.path.includes('/batches/')),
        5_000,
        'the late file renamed into place, then removed',
      );
      await waitFor(
        () =>
          batchFiles(driver).length === 0 &&
          readdirSync(join(signalSpoolDir(dir, driver), 'tmp')).length === 0,
        5_000,
        'nothing left',
      );
    });

    test('with S3 down as well, shutdown still returns within its deadline', async () => {
      const fs = new FaultyFileSystem().hangNext('write', 10);
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const exporter = exporterWith(
        s3,
        {
          spoolFileSystem: fs,
          spoolTimeoutMillis: 200,
          flushTimeoutMillis: 300,
        },
        driver,
      );
      await exportEach(driver, exporter, 1, 2, () => s3.attempts.length > 0);
      const started = performance.now();
      await exporter.shutdown();
      expect(performance.now() - started).toBeLessThan(300 + 1_500);
      expect(exporter.stats().pointsDroppedByReason.shutdown).toBeGreaterThan(0);
      fs.release();
    });

    test('a disk that hangs as shutdown begins, at the default spoolTimeoutMillis: shutdown keeps its deadline', async () => {
      const fs = new FaultyFileSystem();
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const flushTimeoutMillis = 300;
      const exporter = exporterWith(
        s3,
        { spoolFileSystem: fs, flushTimeoutMillis, maxBatchAgeMillis: 60_000 },
        driver,
      );
      await waitFor(() => exporter.stats().spool?.state === 'active', 5_000, 'the spool active');
      // In the open batch and its journal's memory only, when the disk stops answering.
      expect((await exportTagged(driver, exporter, 5, 1)).code).toBe(ExportResultCode.SUCCESS);
      fs.hangNext('create', 100).hangNext('write', 100).hangNext('fsync', 100);
      const started = performance.now();
      await exporter.shutdown();
      const millis = performance.now() - started;
      fs.release();
      expect(millis).toBeLessThan(flushTimeoutMillis + 1_500);
    });
  });
}

describe('spool files are data, not commands', () => {
  const body = Buffer.from('{"resourceMetrics":[]}\n');
  const goodKey = () =>
    objectKey({ prefix: 'p', filePrefix: '', time: new Date(), extension: '.json', id: uuidv7() });
  const meta = (over: Partial<Record<keyof SpoolMeta, unknown>>): SpoolMeta =>
    ({
      key: goodKey(),
      contentType: 'application/json',
      points: 1,
      rawBytes: body.length,
      sealedAt: Date.now(),
      ...over,
    }) as SpoolMeta;

  test('a key outside the prefix or layout, a foreign content type, or odd numbers are quarantined and counted, never uploaded', async () => {
    await rm(dir, { recursive: true, force: true });
    const spool = await openSpool(dir);
    const good = meta({});
    const files: [string, SpoolMeta][] = [
      ['good', good],
      ['escape', meta({ key: '../../other-tenant/secret.json' })],
      ['other prefix', meta({ key: goodKey().replace(/^p\//, 'q/') })],
      ['other layout', meta({ key: 'p/anything/metrics.json' })],
      ['unknown extension', meta({ key: goodKey().replace('.json', '.exe') })],
      [
        'header injection',
        meta({ contentType: 'application/json\r\nX-Amz-Grant-Full-Control: id=evil' }),
      ],
      ['text points', meta({ points: 'many' })],
      ['negative bytes', meta({ rawBytes: -5 })],
    ];
    for (const [, m] of files)
      await writeFile(
        join(dir, 'batches', `${uuidv7()}.batch`),
        Buffer.concat(encodeSpoolFile(m, body)),
      );
    await spool.close();
    const s3 = new ScriptedS3();
    const exporter = exporterWith(s3, { prefix: 'p' });
    await waitFor(
      () => exporter.stats().spool?.quarantined === files.length - 1,
      5_000,
      'the scan',
    );
    await exporter.forceFlush();
    expect([...s3.stored.keys()]).toEqual([good.key]);
    expect(readdirSync(join(dir, 'quarantine'))).toHaveLength(files.length - 1);
    expect(exporter.stats().spool?.replayed).toBe(1);
    expect(exporter.stats().pointsUploaded).toBe(1);
    await exporter.shutdown();
  });

  test('a batch file that fails its checks at start is a batch dropped: its items when its numbers are sane, the batch alone otherwise', async () => {
    await rm(dir, { recursive: true, force: true });
    const spool = await openSpool(dir);
    const batches = join(dir, 'batches');
    const put = (path: string, bytes: Buffer) => writeFile(path, bytes);
    // Checked and sane: 7 + 11 items, 100 + 200 bytes, lost with their files.
    await put(
      join(batches, `${uuidv7()}.batch`),
      Buffer.concat(
        encodeSpoolFile(
          meta({ key: goodKey().replace(/^p\//, 'q/'), points: 7, rawBytes: 100 }),
          body,
        ),
      ),
    );
    await put(
      join(batches, `${uuidv7()}.batch`),
      Buffer.concat(
        encodeSpoolFile(meta({ contentType: 'text/html', points: 11, rawBytes: 200 }), body),
      ),
    );
    // A batch whose numbers are not counts: the batch, no items.
    await put(
      join(batches, `${uuidv7()}.batch`),
      Buffer.concat(encodeSpoolFile(meta({ points: 'many', rawBytes: 300 }), body)),
    );
    // A spool file that fails its checksum: the batch, its items unknown.
    const damaged = Buffer.concat(encodeSpoolFile(meta({ points: 13, rawBytes: 400 }), body));
    damaged[damaged.length - 2] = (damaged[damaged.length - 2] as number) ^ 0x40;
    await put(join(batches, `${uuidv7()}.batch`), damaged);
    // Not a spool file at all, and a write a crash cut short in tmp/: no batch the spool lost.
    await put(join(batches, `${uuidv7()}.batch`), Buffer.from('not a spool file at all'));
    const torn = Buffer.concat(encodeSpoolFile(meta({ points: 17, rawBytes: 500 }), body));
    await put(join(dir, 'tmp', `${uuidv7()}.batch.tmp`), torn.subarray(0, torn.length - 5));
    await spool.close();
    messages.length = 0;
    const exporter = exporterWith(new ScriptedS3(), { prefix: 'p' });
    try {
      await waitFor(() => exporter.stats().spool?.quarantined === 6, 5_000, 'the scan');
      expect(exporter.stats()).toMatchObject({
        batchesDropped: 4,
        pointsDropped: 18,
        pointsDroppedByReason: { 'spool-corrupt': 18 },
        rawBytesDropped: 300,
      });
      const told = messages.map((m) => m.text).join('\n');
      expect(told).toContain(
        "its batch is lost (7 items, counted in stats().pointsDroppedByReason['spool-corrupt'])",
      );
      expect(told.match(/its batch is lost, its items unknown/g)).toHaveLength(2);
    } finally {
      await exporter.shutdown();
    }
  });

  test('a batch file that fails its checks while the journal still holds its chain: the replay takes the batch, not a drop', async () => {
    await rm(dir, { recursive: true, force: true });
    const spool = await openSpool(dir);
    const stats = emptySpoolStats();
    const journal = testJournal(dir, { stats });
    journal.attach({
      dir: join(dir, 'journal'),
      quarantineDir: join(dir, 'quarantine'),
      fs: nodeFileSystem,
      disk: new DiskDeadline(5_000),
    });
    journal.append(Buffer.from('{"resourceMetrics":[]}'), 3, {
      attributes: {},
      group: '',
      dataTimeMillis: undefined,
    });
    await waitFor(() => stats.journalSyncs > 0, 2_000, 'a group commit');
    await journal.close(100);
    const [part] = readdirSync(join(dir, 'journal'));
    const chain = (part as string).split('.')[0] as string;
    const key = goodKey().replace(/^p\//, 'q/');
    await writeFile(
      join(dir, 'batches', `${uuidv7()}.batch`),
      Buffer.concat(encodeSpoolFile(meta({ key, points: 3, journal: [chain] }), body)),
    );
    await spool.close();
    messages.length = 0;
    const exporter = exporterWith(new ScriptedS3(), { prefix: 'p', format: 'otlp-json' });
    try {
      await waitFor(() => exporter.stats().spool?.journalReplayed === 1, 5_000, 'the replay');
      expect(exporter.stats()).toMatchObject({
        batchesDropped: 0,
        pointsDropped: 0,
        spool: { quarantined: 1 },
      });
      expect(messages).toContainEqual({
        level: 'error',
        text: expect.stringMatching(/is unusable \(its key .*; the journal still holds its batch$/),
      });
    } finally {
      await exporter.shutdown();
    }
  });
});

describe('reading back', () => {
  /** A first exporter that leaves `n` batches (tags 1..n) in the spool. */
  async function leaveBatches(n: number, options: Partial<S3MetricExporterOptions> = {}) {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const first = exporterWith(s3, { flushTimeoutMillis: 100, ...options });
    await exportEach(METRICS, first, 1, n, (tag) => first.stats().spool?.written === tag);
    await first.shutdown();
    expect(first.stats().spool?.leftAtShutdown).toBe(n);
  }

  test('a read error that may pass (EIO, EMFILE) is retried later, not taken for corruption', async () => {
    await leaveBatches(3);
    const fs = new FaultyFileSystem().failNext('readFile', 'EMFILE', 2);
    const s3 = new ScriptedS3();
    const second = exporterWith(s3, { spoolFileSystem: fs });
    await waitFor(() => second.stats().spool?.replayed === 3, 5_000, 'all three replayed');
    const stats = second.stats();
    expect(stats.spool?.quarantined).toBe(0);
    expect(stats.spool?.readFailures).toEqual({ EMFILE: 2 });
    expect(s3.storedTags()).toEqual(tagsOf(1, 3));
    expect(readdirSync(join(dir, 'quarantine'))).toEqual([]);
    await second.shutdown();
  });

  test('the same when reading a batch back into memory: it waits on disk and is read again', async () => {
    await leaveBatches(3);
    // The scan reads each file once; the page-in reads after it fail twice.
    const fs = new FaultyFileSystem().failNext('readFile', 'EIO', 2, 3);
    const s3 = new ScriptedS3();
    const second = exporterWith(s3, { spoolFileSystem: fs });
    await waitFor(() => second.stats().spool?.replayed === 3, 5_000, 'all three replayed');
    expect(second.stats().spool?.quarantined).toBe(0);
    expect(second.stats().spool?.readFailures).toEqual({ EIO: 2 });
    expect(s3.storedTags()).toEqual(tagsOf(1, 3));
    await second.shutdown();
  });

  test('a file larger than maxBufferedBytes is left on disk and does not hold up the files behind it', async () => {
    await leaveBatches(3, { maxBatchBytes: 2048, maxBufferedBytes: 1024 * 1024 });
    // Make the oldest file too large for the next exporter's bound.
    const [oldest] = batchFiles().sort();
    const path = join(dir, 'batches', oldest as string);
    const { meta } = decodeSpoolFile(readFileSync(path));
    await writeFile(path, Buffer.concat(encodeSpoolFile(meta, Buffer.alloc(40 * 1024, 0x20))));
    const s3 = new ScriptedS3();
    const second = exporterWith(s3, { maxBatchBytes: 2048, maxBufferedBytes: 16 * 1024 });
    await waitFor(() => second.stats().spool?.replayed === 2, 5_000, 'the two others replayed');
    expect(s3.storedTags()).toEqual(tagsOf(2, 3));
    expect(second.stats().spool?.oversized).toBe(1);
    expect(existsSync(path)).toBe(true);
    expect(messages.some((m) => /larger than maxBufferedBytes/.test(m.text))).toBe(true);
    await second.shutdown();
  });

  test('batches left by an earlier run and new ones keep one oldest-first order: eviction takes the oldest, whichever run wrote it', async () => {
    await leaveBatches(4);
    const restoredSizes = (await readdir(join(dir, 'batches'))).length;
    expect(restoredSizes).toBe(4);
    // The scan is slow: the new run's first batches are written while it reads.
    const fs = new FaultyFileSystem().hangNext('readdir', 1);
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const oneFile = (await stat(join(dir, 'batches', batchFiles()[0] as string))).size;
    const second = exporterWith(s3, {
      spoolFileSystem: fs,
      maxBatchBytes: 2048,
      maxSpoolBytes: Math.floor(oneFile * 6.5),
      uploadConcurrency: 1,
      requestTimeoutMillis: 60_000,
      flushTimeoutMillis: 200, // S3 never answers: shutdown() waits this long, then stops
    });
    await exportEach(METRICS, second, 5, 6, (tag) => second.stats().spool?.written === tag - 4);
    fs.release(); // the scan goes on and registers the four older files
    await waitFor(() => second.stats().pendingBatches === 6, 5_000, 'the restore');
    // Two more new batches overflow the bound: the two oldest files go (restored tags 1 and 2).
    await exportEach(METRICS, second, 7, 8, (tag) => second.stats().spool?.written === tag - 4);
    const onDisk = batchFiles().map((n) =>
      tagOfBody(decodeSpoolFile(readFileSync(join(dir, 'batches', n))).body),
    );
    expect(onDisk.sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8]);
    const bytesOnDisk = batchFiles().reduce(
      (n, f) => n + readFileSync(join(dir, 'batches', f)).length,
      0,
    );
    expect(bytesOnDisk).toBeLessThanOrEqual(Math.floor(oneFile * 6.5));
    await second.shutdown();
  });
});
