import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { beforeEach, describe, expect, test } from 'vitest';
import { Episodes } from '../../../src/base/log.js';
import { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptySpoolStats, emptyStats } from '../../../src/pipeline/stats.js';
import { DiskDeadline } from '../../../src/spool/disk-deadline.js';
import { decodeSpoolFile } from '../../../src/spool/file-format.js';
import { nodeFileSystem } from '../../../src/spool/file-system.js';
import { SpoolKeeper } from '../../../src/spool/keeper.js';
import { KeeperReports } from '../../../src/spool/keeper-reports.js';
import { LOCK_TIMING } from '../../../src/spool/lock.js';
import { Spool } from '../../../src/spool/spool.js';
import { captureDiag } from '../../support/diag-capture.js';
import { pipelineParts } from '../../support/pipeline-parts.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportTagged, METRICS, TRACES } from '../../support/signal-driver.js';
import { spoolExporter } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const messages = captureDiag();

let dir: string;
beforeEach(() => tempDir('otel-s3-spool-signal-', (path) => (dir = path)));

const batchFiles = (spool: string) =>
  readdirSync(join(spool, 'batches')).filter((n) => n.endsWith('.batch'));

describe("another signal's spool files", () => {
  test("a metrics file in the span exporter's spool is left alone: not uploaded, not quarantined, not counted dropped, reported once", async () => {
    // The metric exporter given spoolDir/traces: the very directory the span exporter of
    // spoolDir uses (another process, or a later run, with the two directories mixed up).
    const shared = join(dir, 'traces');
    const hung = new ScriptedS3().script([], { kind: 'hang' });
    const metrics = spoolExporter(hung, shared, { flushTimeoutMillis: 100 });
    expect((await exportTagged(METRICS, metrics, 5, 1)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => metrics.stats().spool?.written === 1, 5_000, 'the metrics batch on disk');
    await metrics.shutdown();
    expect(metrics.stats().spool?.leftAtShutdown).toBe(1);
    const left = batchFiles(shared);
    expect(left).toHaveLength(1);
    const file = readFileSync(join(shared, 'batches', left[0] as string));
    expect(decodeSpoolFile(file).meta.signal).toBe('metrics');

    messages.length = 0;
    const s3 = new ScriptedS3();
    const spans = spoolExporter(s3, dir, {}, TRACES);
    try {
      await waitFor(() => spans.stats().spool?.state === 'active', 5_000, 'the spool adopted');
      await waitFor(
        () => messages.some((m) => m.text.includes(left[0] as string)),
        5_000,
        'the file reported',
      );
      const stats = spans.stats();
      expect(stats.spool?.quarantined).toBe(0);
      expect(stats.spool?.foreign).toBe(1);
      expect(stats.batchesDropped).toBe(0);
      expect(stats.pointsDropped).toBe(0);
      expect(stats.spool?.files).toBe(0);
      expect(stats.spool?.bytes).toBe(0);
      expect(s3.attempts).toHaveLength(0);
      expect(batchFiles(shared)).toEqual(left);
      expect(readdirSync(join(shared, 'quarantine'))).toEqual([]);
      const told = messages.filter((m) => m.text.includes(left[0] as string));
      expect(told).toHaveLength(1);
      expect(told[0]?.text).toContain('holds metrics, not traces');
    } finally {
      await spans.shutdown();
    }
  });
});

describe('the signal in the metadata', () => {
  // The room a write makes must be the size of the file it writes: maxSpoolBytes is one byte
  // short of three files (their size measured on disk), so the third write evicts the first.
  test('is in the room a write makes: the spool stays within maxSpoolBytes', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const stats = emptyStats();
    stats.spool = emptySpoolStats();
    const episodes = new Episodes();
    const { budget, uploader, owner } = pipelineParts(s3, {
      stats,
      episodes,
      maxBufferedBytes: 1 << 20,
      uploader: { concurrency: 1, requestTimeoutMillis: 60_000 },
    });
    const opened = await Spool.open(
      dir,
      nodeFileSystem,
      new DiskDeadline(10_000),
      LOCK_TIMING,
      'metrics',
    );
    if (opened.kind !== 'open') throw new Error('spool held');
    const prepared = (name: string) => {
      const batch = SealedBatch.seal({
        contents: { records: [Buffer.from(name)] },
        rawBytes: 100,
        points: 1,
        attributes: {},
        dataTimeMillis: undefined,
      });
      budget.admit(batch, 100, owner);
      batch.startPreparing();
      batch.bodyMade({
        key: `${name}.json`,
        contentType: 'application/json',
        body: Buffer.alloc(100, name),
        sha256: undefined,
        crc32: undefined,
      });
      return batch;
    };
    const sizes = () => batchFiles(dir).map((n) => statSync(join(dir, 'batches', n)).size);
    // The size of one file, as written.
    const options = {
      maxSpoolBytes: 1 << 20,
      loadConcurrency: 1,
      retryEveryMillis: 20,
      diskTimeoutMillis: 10_000,
      check: () => undefined,
    };
    const measuring = new SpoolKeeper(opened.spool, options, {
      budget,
      owner,
      uploader,
      reports: new KeeperReports(stats.spool, episodes, { dir, ...options }),
    });
    const a = prepared('a');
    await measuring.persist(a);
    const [fileBytes] = sizes();
    await measuring.close();

    const maxSpoolBytes = 3 * (fileBytes as number) - 1;
    const reopened = await Spool.open(
      dir,
      nodeFileSystem,
      new DiskDeadline(10_000),
      LOCK_TIMING,
      'metrics',
    );
    if (reopened.kind !== 'open') throw new Error('spool held');
    const bounded = { ...options, maxSpoolBytes };
    const keeper = new SpoolKeeper(reopened.spool, bounded, {
      budget,
      owner,
      uploader,
      reports: new KeeperReports(stats.spool, episodes, { dir, ...bounded }),
    });
    try {
      await keeper.restore();
      for (const name of ['b', 'c']) await keeper.persist(prepared(name));
      expect(sizes()).toEqual([fileBytes, fileBytes]);
      expect(stats.spool.bytes).toBeLessThanOrEqual(maxSpoolBytes);
      expect(stats.spool.evicted).toBe(1);
    } finally {
      await keeper.close();
    }
  });
});
