import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { describe, expect, test } from 'vitest';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { describeStalls, loopStallsWhile } from '../../support/loop-stall.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { spoolExporter, spoolTestDirs } from '../../support/spool-exporter.js';
import { waitFor } from '../../support/wait.js';

/**
 * Every spool operation has a deadline (spoolTimeoutMillis): besides writes and reads (see
 * spool-hardening), listing the spool, reading and setting aside its files at start, deleting
 * a stored batch's file and moving a corrupt one to quarantine. Past it the operation is
 * abandoned, the disk counts as stalled, uploads go on from memory, and what was not done is
 * done when the disk answers again.
 */
const messages = captureDiag();
const DEADLINE = 200;

let dir: string;
const { exporters, disks } = spoolTestDirs('otel-s3-deadlines-', (path) => (dir = path));

const exporterOn = (
  fs: FaultyFileSystem,
  s3: ScriptedS3,
  options: Partial<S3MetricExporterOptions> = {},
) => {
  disks.push(fs);
  const exporter = spoolExporter(s3, dir, {
    spoolFileSystem: fs,
    spoolTimeoutMillis: DEADLINE,
    flushTimeoutMillis: 2_000,
    ...options,
  });
  exporters.push(exporter);
  return exporter;
};
const tagsOf = (...tags: number[]) => tags.flatMap((t) => Array(5).fill(t) as number[]);
const batchFiles = () => readdirSync(join(dir, 'batches'));

/** An earlier run that leaves batches tagged 1..n in the spool (S3 never answers it). */
async function leaveBatches(n: number): Promise<void> {
  const s3 = new ScriptedS3().script([], { kind: 'hang' });
  const first = spoolExporter(s3, dir, { flushTimeoutMillis: 100 });
  await waitFor(() => first.stats().spool?.state === 'active', 5_000, 'the first run');
  for (let tag = 1; tag <= n; tag++) {
    expect((await exportSynthetic(first, 5, tag)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => first.stats().spool?.written === tag, 5_000, `batch ${tag}`);
  }
  await first.shutdown();
}

/**
 * An earlier run leaves 3 batches; the next starts on a disk whose next `op` hangs, and is
 * waited on until `abandoned` (its spool stats) holds, within the deadline and 2 s.
 */
async function restartOnHungDisk(
  op: 'readdir' | 'readFile',
  abandoned: (spool: ReturnType<S3MetricExporter['stats']>['spool']) => boolean,
  what: string,
) {
  await leaveBatches(3);
  const fs = new FaultyFileSystem().hangNext(op);
  const s3 = new ScriptedS3();
  const exporter = exporterOn(fs, s3);
  await waitFor(() => abandoned(exporter.stats().spool), DEADLINE + 2_000, what);
  return { fs, s3, exporter };
}

/** Exports tags, each in a batch of its own, waiting until each is stored. */
async function exportStored(exporter: S3MetricExporter, ...tags: number[]): Promise<void> {
  for (const tag of tags) {
    const before = exporter.stats().batchesUploaded;
    expect((await exportSynthetic(exporter, 5, tag)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => exporter.stats().batchesUploaded === before + 1, 5_000, `tag ${tag}`);
  }
}

describe('at start, reading what an earlier run left', () => {
  test('a listing that hangs is abandoned at the deadline and runs again when the disk answers; uploads go on meanwhile', async () => {
    const { fs, s3, exporter } = await restartOnHungDisk(
      'readdir',
      (spool) => spool?.readFailures.timeout === 1,
      'the listing abandoned',
    );
    expect(messages.filter((m) => /could not be listed/.test(m.text))).toHaveLength(1);
    // The disk is stalled: new batches go to S3 from memory, without a write (not even tried).
    await exportStored(exporter, 4);
    expect(exporter.stats().spool?.writeFailures).toEqual({ stalled: 1 });
    fs.release();
    await waitFor(() => exporter.stats().spool?.replayed === 3, 5_000, 'the scan again');
    expect(s3.storedTags()).toEqual(tagsOf(1, 2, 3, 4));
    await waitFor(() => batchFiles().length === 0, 5_000, 'the replayed files deleted');
  });

  test('a file read that hangs is abandoned, the files after it wait, and all are read again later', async () => {
    const { fs, s3, exporter } = await restartOnHungDisk(
      'readFile',
      (spool) => spool?.readFailures.stalled === 2,
      'the scan past the hung read',
    );
    expect(exporter.stats().spool?.readFailures).toEqual({ timeout: 1, stalled: 2 });
    expect(exporter.stats().spool?.quarantined).toBe(0);
    fs.release();
    await waitFor(() => exporter.stats().spool?.replayed === 3, 5_000, 'read again');
    expect(s3.storedTags()).toEqual(tagsOf(1, 2, 3));
  });

  test('moving a corrupt file to quarantine: a hung rename is abandoned, the file is never used, and it is moved when the disk answers', async () => {
    await leaveBatches(3);
    const [, middle] = batchFiles().sort();
    const path = join(dir, 'batches', middle as string);
    const bytes = readFileSync(path);
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x01;
    writeFileSync(path, bytes);
    const fs = new FaultyFileSystem().hangNext('rename');
    const s3 = new ScriptedS3();
    const exporter = exporterOn(fs, s3);
    await waitFor(
      () => (exporter.stats().spool?.readFailures.stalled ?? 0) >= 1,
      DEADLINE + 2_000,
      'the scan past the hung rename',
    );
    expect(exporter.stats().spool?.quarantined).toBe(1);
    expect(readdirSync(join(dir, 'quarantine'))).toEqual([]);
    fs.release();
    await waitFor(() => exporter.stats().spool?.replayed === 2, 5_000, 'the other two');
    await waitFor(
      () => readdirSync(join(dir, 'quarantine')).length === 1,
      5_000,
      'moved to quarantine',
    );
    expect(readdirSync(join(dir, 'quarantine'))).toEqual([middle]);
    expect(exporter.stats().spool?.quarantined).toBe(1);
    expect(s3.storedTags()).toEqual(tagsOf(1, 3));
    // A replayed file is deleted after its upload is acknowledged, not before replayed counts it.
    await waitFor(() => batchFiles().length === 0, 5_000, 'the replayed files deleted');
  });
});

describe('while running', () => {
  test("deleting a stored batch's file: a hung unlink is abandoned, uploads go on with the event loop free, and the file goes when the disk answers", async () => {
    const fs = new FaultyFileSystem().hangNext('unlink');
    const s3 = new ScriptedS3();
    const exporter = exporterOn(fs, s3);
    await waitFor(() => exporter.stats().spool?.state === 'active', 5_000, 'the spool');
    const loop = await loopStallsWhile(async () => {
      await exportStored(exporter, 1);
      await waitFor(
        () => messages.some((m) => /could not be deleted/.test(m.text)),
        DEADLINE + 2_000,
        'the deletion abandoned',
      );
      expect(messages.filter((m) => /could not be deleted/.test(m.text))[0]?.text).toMatch(
        /did not answer within 200 ms/,
      );
      await exportStored(exporter, 2, 3);
    });
    // The loop held by work on it, not the time this thread is descheduled on a busy machine.
    expect(loop.maxHeldMillis, describeStalls(loop)).toBeLessThan(200);
    expect(exporter.stats().spool?.writeFailures).toEqual({ stalled: 2 });
    expect(batchFiles()).toHaveLength(1);
    fs.release();
    await waitFor(() => batchFiles().length === 0, 5_000, 'the file deleted');
    await exportStored(exporter, 4);
    expect(exporter.stats().spool?.written).toBe(2);
    await waitFor(() => batchFiles().length === 0, 5_000, 'the next file deleted');
    expect(s3.storedTags()).toEqual(tagsOf(1, 2, 3, 4));
    expect(exporter.stats().spool).toMatchObject({ files: 0, bytes: 0 });
  });
});
