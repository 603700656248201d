import { readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { uuidv7 } from 'uuidv7';
import { describe, expect, test } from 'vitest';
import { objectKey } from '../../../src/layout/keys.js';
import {
  decodeSpoolFile,
  encodeSpoolFile,
  type SpoolMeta,
} from '../../../src/spool/file-format.js';
import { SpoolLockedError } from '../../../src/spool/lock.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3, tagsIn } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import {
  type AnyExporter,
  exportTagged,
  METRICS,
  SIGNALS,
  type SignalDriver,
  signalSpoolDir,
} from '../../support/signal-driver.js';
import { openSpool, spoolExporterIn, spoolTestDirs } from '../../support/spool-exporter.js';
import { waitFor } from '../../support/wait.js';

const messages = captureDiag();

let dir: string;
spoolTestDirs('otel-s3-spool-test-', (path) => (dir = path));

/** Keys the exporters of this file write (default layout, no prefix), one per name. */
function keyMaker(): (name: string) => string {
  const ids = new Map<string, string>();
  return (name) => {
    if (!ids.has(name)) ids.set(name, uuidv7());
    return objectKey({
      prefix: '',
      filePrefix: '',
      time: new Date(1),
      extension: '.json',
      id: ids.get(name) as string,
    });
  };
}

const meta: SpoolMeta = {
  key: 'p/year=2026/x/metrics_1.json.zst',
  contentType: 'application/zstd',
  points: 3,
  rawBytes: 100,
  sealedAt: 1,
};

/** The exporter of these tests (of metrics, or of `driver`'s signal), on the test's spool directory. */
const exporterWith = spoolExporterIn(() => dir);

/** Exports items tagged from..from+n-1, each sealed into its own batch (maxBatchAgeMillis is tiny). */
async function exportEach(
  exporter: AnyExporter,
  n: number,
  from = 1,
  driver: SignalDriver = METRICS,
): Promise<void> {
  for (let tag = from; tag < from + n; tag++) {
    expect((await exportTagged(driver, exporter, 5, tag)).code).toBe(ExportResultCode.SUCCESS);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** Where `driver`'s signal keeps its spool under the test's spoolDir (docs/durability.md). */
const spoolDirOf = (driver: SignalDriver) => signalSpoolDir(dir, driver);

const tagsOf = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i).flatMap(
    (t) => Array(5).fill(t) as number[],
  );

const spoolFiles = async (driver: SignalDriver = METRICS) =>
  (await readdir(join(spoolDirOf(driver), 'batches'))).filter((n) => n.endsWith('.batch'));

describe('spool file format', () => {
  test('round-trips metadata and body', () => {
    const body = Buffer.from('hello spool');
    const file = Buffer.concat(encodeSpoolFile(meta, body));
    const decoded = decodeSpoolFile(file);
    expect(decoded.meta).toEqual(meta);
    expect(decoded.body.equals(body)).toBe(true);
  });

  test('a truncated file is detected as torn', () => {
    const file = Buffer.concat(encodeSpoolFile(meta, Buffer.from('hello spool')));
    expect(() => decodeSpoolFile(file.subarray(0, file.length - 1))).toThrow(/torn write/);
    expect(() => decodeSpoolFile(file.subarray(0, 10))).toThrow(/truncated header/);
  });

  test('a flipped bit anywhere is detected', () => {
    const file = Buffer.concat(encodeSpoolFile(meta, Buffer.from('hello spool')));
    for (let at = 0; at < file.length; at++) {
      const copy = Buffer.from(file);
      copy[at] = (copy[at] as number) ^ 0x10;
      expect(() => decodeSpoolFile(copy), `bit flip at byte ${at}`).toThrow();
    }
  });
});

for (const driver of SIGNALS) {
  describe(`${driver.signal}: an exporter with a spool`, () => {
    test('every sealed batch is on disk before its first upload and deleted once S3 acknowledged it', async () => {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const exporter = exporterWith(s3, {}, driver);
      await exportEach(exporter, 4, 1, driver);
      await waitFor(
        () => exporter.stats().spool?.written === 4 && s3.attempts.length > 0,
        5_000,
        'four batches written and an upload attempted',
      );
      expect((await spoolFiles(driver)).length).toBe(exporter.stats().batchesSealed);
      expect(exporter.stats().spool?.written).toBe(exporter.stats().batchesSealed);
      s3.script([], { kind: 'ok' });
      await exporter.forceFlush();
      await waitFor(
        async () => (await spoolFiles(driver)).length === 0 && exporter.stats().spool?.files === 0,
        5_000,
        'the files deleted',
      );
      await exporter.shutdown();
    });

    test('what shutdown leaves on disk is uploaded by the next exporter under the same keys, exactly once', async () => {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const first = exporterWith(s3, { flushTimeoutMillis: 200 }, driver);
      await exportEach(first, 5, 1, driver);
      await waitFor(
        () => first.stats().spool?.written === first.stats().batchesSealed,
        5_000,
        'every batch on disk',
      );
      await first.shutdown();
      const firstStats = first.stats();
      expect(firstStats.pointsDropped).toBe(0);
      expect(firstStats.spool?.leftAtShutdown).toBe(firstStats.batchesSealed);
      const spooledKeys = new Set(
        await Promise.all(
          (await spoolFiles(driver)).map(
            async (n) =>
              decodeSpoolFile(await readFile(join(spoolDirOf(driver), 'batches', n))).meta.key,
          ),
        ),
      );
      expect(spooledKeys.size).toBe(firstStats.batchesSealed);
      expect(messages.some((m) => /stay in the spool for the next run/.test(m.text))).toBe(true);

      s3.script([], { kind: 'ok' });
      const second = exporterWith(s3, {}, driver);
      await waitFor(
        () => second.stats().spool?.replayed === firstStats.batchesSealed,
        5_000,
        'the spool replayed',
      );
      await second.forceFlush();
      expect(s3.storedTags()).toEqual(tagsOf(1, 5));
      expect(new Set(s3.stored.keys())).toEqual(spooledKeys);
      expect(second.stats().spool?.replayed).toBe(firstStats.batchesSealed);
      await waitFor(
        async () => (await spoolFiles(driver)).length === 0,
        5_000,
        'the files deleted',
      );
      await second.shutdown();
    });
  });
}

describe('S3MetricExporter with a spool', () => {
  test('stats() is a copy: changing it changes nothing inside the exporter', async () => {
    const exporter = exporterWith(new ScriptedS3());
    const first = exporter.stats();
    first.pointsDroppedByReason['buffer-full'] = 99;
    for (const counts of [
      first.spool?.writeFailures,
      first.spool?.readFailures,
      first.uploadFailures,
    ])
      if (counts !== undefined) (counts as Record<string, number>).EIO = 7;
    const second = exporter.stats();
    expect(second.pointsDroppedByReason).toEqual({});
    expect(second.uploadFailures).toEqual({});
    expect(second.spool?.writeFailures).toEqual({});
    expect(second.spool?.readFailures).toEqual({});
    await exporter.shutdown();
  });

  test('a second exporter on the same spool directory gets a clear error; after shutdown the directory is free', async () => {
    const s3 = new ScriptedS3();
    const first = exporterWith(s3);
    expect(() => exporterWith(s3)).toThrow(SpoolLockedError);
    expect(() => exporterWith(s3)).toThrow(
      new RegExp(
        `spoolDir ${dir} is already used by another exporter of this process \\(pid ${process.pid}\\)`,
      ),
    );
    await first.shutdown();
    const again = exporterWith(s3);
    await again.shutdown();
  });

  // A SIGKILL before a write's fsync returned leaves a complete file in tmp/ that may live only in
  // the page cache: a power loss after the restart adopted it (and deleted its journal chain)
  // would lose it, unless the adoption makes it durable first.
  test('a complete file adopted from tmp/ is fsynced before it is renamed, and the rename made durable', async () => {
    await (await openSpool(dir)).close();
    const tmpPath = join(dir, 'tmp', 'a-complete.batch.tmp');
    const adopted = join(dir, 'batches', 'a-complete.batch');
    await writeFile(
      tmpPath,
      Buffer.concat(encodeSpoolFile(meta, Buffer.from('{"resourceMetrics":[]}\n'))),
    );
    const fs = new FaultyFileSystem();
    const spool = await openSpool(dir, fs);
    const events: string[] = [];
    await spool.scan(
      () => undefined,
      (e) => events.push(e.kind),
    );
    expect(events).toEqual(['entry']);
    const calls = fs.calls.map((c) => `${c.op} ${c.path}`);
    const fsynced = calls.indexOf(`fsync ${tmpPath}`);
    const renamed = calls.indexOf(`rename ${tmpPath}`);
    const dirSynced = calls.lastIndexOf(`syncDirectory ${join(dir, 'batches')}`);
    expect(fsynced, calls.join('\n')).toBeGreaterThanOrEqual(0);
    expect(fsynced).toBeLessThan(renamed);
    expect(dirSynced).toBeGreaterThan(renamed);
    expect(fs.calls[renamed]?.to).toBe(adopted);
    await spool.close();
  });

  test('torn and bit-flipped files are quarantined and counted, never uploaded; complete files left in tmp/ are adopted', async () => {
    const spool = await openSpool(dir);
    const key = keyMaker();
    const good = await spool.write(
      { ...meta, key: key('good') },
      Buffer.from('{"resourceMetrics":[]}\n'),
    );
    const torn = await spool.write(
      { ...meta, key: key('torn') },
      Buffer.from('{"resourceMetrics":[]}\n'),
    );
    const flipped = await spool.write(
      { ...meta, key: key('flipped') },
      Buffer.from('{"resourceMetrics":[]}\n'),
    );
    await spool.close();
    await truncate(join(dir, 'batches', torn.name), torn.fileBytes - 3);
    const bytes = await readFile(join(dir, 'batches', flipped.name));
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x01;
    await writeFile(join(dir, 'batches', flipped.name), bytes);
    // A crash between fsync and rename leaves a complete file in tmp/; a crash mid-write a partial one.
    await writeFile(
      join(dir, 'tmp', 'a-complete.batch.tmp'),
      Buffer.concat(
        encodeSpoolFile({ ...meta, key: key('adopted') }, Buffer.from('{"resourceMetrics":[]}\n')),
      ),
    );
    await writeFile(join(dir, 'tmp', 'b-partial.batch.tmp'), Buffer.from('OS3B\x01'));

    const s3 = new ScriptedS3();
    const exporter = exporterWith(s3);
    await waitFor(() => exporter.stats().spool?.quarantined === 3, 5_000, 'the scan');
    // Files of an earlier run are uploaded in the background as the scan adopts them (forceFlush
    // waits for this run's batches only): wait for both, then nothing else may have come.
    await waitFor(() => s3.stored.size >= 2, 5_000, 'the two good files uploaded');
    await exporter.forceFlush();
    expect([...s3.stored.keys()].sort()).toEqual([key('adopted'), key('good')].sort());
    expect(exporter.stats().spool?.quarantined).toBe(3);
    expect((await readdir(join(dir, 'quarantine'))).sort()).toEqual(
      ['b-partial.batch.tmp', flipped.name, torn.name].sort(),
    );
    expect(
      messages.filter((m) => m.level === 'error' && /moved to .*quarantine/.test(m.text)),
    ).toHaveLength(3);
    expect(good.name).not.toBe(torn.name);
    await exporter.shutdown();
  });

  for (const [op, code] of [
    ['write', 'EIO'],
    ['write', 'ENOSPC'],
    ['fsync', 'EIO'],
    ['fsync', 'ENOSPC'],
    ['syncDirectory', 'EIO'],
  ] as const) {
    test(`${code} on ${op}: the batch stays in memory, a fresh file is used later, nothing is lost`, async () => {
      // Faults in the spool's batch files; the journal's files keep working.
      const fs = new FaultyFileSystem()
        .only((path) => !path.includes('/journal'))
        .failNext(op, code, 2);
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const exporter = exporterWith(s3, { spoolFileSystem: fs });
      await exportEach(exporter, 4);
      await waitFor(
        () => (exporter.stats().spool?.written ?? 0) + 2 === exporter.stats().batchesSealed,
        5_000,
        'every batch written or failed',
      );
      const stats = exporter.stats();
      expect(stats.spool?.writeFailures).toEqual({ [code]: 2 });
      expect(stats.spool?.written).toBe(stats.batchesSealed - 2);
      // The files whose write, fsync or directory fsync failed are gone and never reused.
      const names = await spoolFiles();
      expect(fs.failures).toHaveLength(2);
      for (const failure of fs.failures) {
        // For a directory fsync, the file is the one just renamed into the directory.
        const file = failure.op === 'syncDirectory' ? failure.file : failure.path;
        expect(file, 'the failed file is known').toMatch(/\.batch(\.tmp)?$/);
        const name = (file as string)
          .slice((file as string).lastIndexOf('/') + 1)
          .replace(/\.tmp$/, '');
        expect(names).not.toContain(name);
        const created = `${join(dir, 'tmp', name)}.tmp`;
        expect(fs.created.filter((c) => c === created)).toHaveLength(1);
      }
      // Nothing half-made is left behind, and what is on disk is exactly what was written.
      expect(await readdir(join(dir, 'tmp'))).toEqual([]);
      expect(names).toHaveLength(stats.spool?.written ?? -1);
      expect(messages.filter((m) => m.level === 'error' && m.text.includes(code))).toHaveLength(1);
      s3.script([], { kind: 'ok' });
      await exporter.forceFlush();
      expect(s3.storedTags()).toEqual(tagsOf(1, 4));
      expect(exporter.stats().pointsDropped).toBe(0);
      await exporter.shutdown();
    });
  }

  test('memory pressure pages batches out to disk instead of dropping them; they are uploaded later', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const maxBufferedBytes = 8 * 1024;
    const exporter = exporterWith(s3, {
      maxBatchBytes: 2 * 1024,
      maxBufferedBytes,
      uploadConcurrency: 1,
      requestTimeoutMillis: 200,
      flushTimeoutMillis: 5_000,
    });
    let peak = 0;
    for (let tag = 1; tag <= 40; tag++) {
      expect((await exportSynthetic(exporter, 5, tag)).code).toBe(ExportResultCode.SUCCESS);
      peak = Math.max(peak, exporter.stats().bufferedBytes);
      // Paced like a periodic reader: each batch is compressed and on disk before the next
      // export; what does not fit is then paged out, not dropped.
      await waitFor(() => exporter.stats().spool?.written === tag, 5_000, `batch ${tag} on disk`);
    }
    expect(peak).toBeLessThanOrEqual(maxBufferedBytes);
    expect(exporter.stats().pointsDropped).toBe(0);
    expect((await spoolFiles()).length).toBeGreaterThan(10);
    s3.script([], { kind: 'ok' });
    await exporter.forceFlush();
    await exporter.shutdown();
    const stats = exporter.stats();
    expect(stats.pointsDropped).toBe(0);
    expect(stats.spool?.leftAtShutdown).toBe(0);
    expect(s3.storedTags()).toEqual(tagsOf(1, 40));
  });

  test('the spool bound holds under a long outage: oldest files evicted, counted', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const maxSpoolBytes = 16 * 1024;
    const exporter = exporterWith(s3, {
      maxBatchBytes: 2 * 1024,
      maxBufferedBytes: 4 * 1024,
      maxSpoolBytes,
      uploadConcurrency: 1,
      requestTimeoutMillis: 60_000,
    });
    /** The real bytes on disk, and the tag of each file's batch. */
    const disk = async () => {
      const files = await spoolFiles();
      const bodies = await Promise.all(
        files.map(
          async (n) => await readFile(join(dir, 'batches', n)).catch(() => Buffer.alloc(0)),
        ),
      );
      return {
        bytes: bodies.reduce((n, b) => n + b.length, 0),
        tags: bodies.flatMap((b) =>
          b.length === 0 ? [] : tagsIn('x.json', decodeSpoolFile(b).body),
        ),
      };
    };
    let peakSpool = 0;
    for (let tag = 1; tag <= 80; tag++) {
      await exportSynthetic(exporter, 5, tag);
      await waitFor(() => exporter.stats().spool?.written === tag, 5_000, `batch ${tag} on disk`);
      peakSpool = Math.max(peakSpool, (await disk()).bytes);
    }
    const stats = exporter.stats();
    expect(peakSpool).toBeLessThanOrEqual(maxSpoolBytes);
    // The oldest went: on disk are the batch in flight (tag 1, never evicted mid-upload) and the
    // newest ones, every one of them up to 80.
    const kept = [...new Set((await disk()).tags)].sort((a, b) => a - b);
    expect(kept[0]).toBe(1);
    const newest = kept.slice(1);
    expect(newest.at(-1)).toBe(80);
    expect(newest).toEqual(
      Array.from({ length: newest.length }, (_, i) => (newest[0] as number) + i),
    );
    expect(stats.spool?.evicted).toBeGreaterThan(0);
    expect(stats.pointsDroppedByReason['spool-full']).toBeGreaterThan(0);
    expect(messages.filter((m) => /reached maxSpoolBytes/.test(m.text))).toHaveLength(1);
    const onDisk = (await spoolFiles()).length;
    expect(onDisk).toBe(stats.spool?.files);
    await exporter.shutdown();
  });
});
