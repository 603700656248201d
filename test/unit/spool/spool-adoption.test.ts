import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { describe, expect, test, vi } from 'vitest';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { decodeSpoolFile } from '../../../src/spool/file-format.js';
import { LOCK_TIMING, SpoolLockedError, type SpoolOwner } from '../../../src/spool/lock.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { spoolExporter, spoolTestDirs } from '../../support/spool-exporter.js';
import { backdateLock, lockDirOf, lockOwnerOf } from '../../support/spool-lock.js';
import { sleep, waitFor } from '../../support/wait.js';

vi.mock('../../../src/spool/lock.js', async (original) =>
  (await import('../../support/spool-lock.js')).shortLockRetry(original),
);

const messages = captureDiag();

let dir: string;
const { exporters, disks } = spoolTestDirs('otel-s3-adopt-', (path) => (dir = path));

const exporterWith = (s3: ScriptedS3, options: Partial<S3MetricExporterOptions> = {}) => {
  const exporter = spoolExporter(s3, dir, { flushTimeoutMillis: 2_000, ...options });
  exporters.push(exporter);
  return exporter;
};
const hungDisk = () => {
  const fs = new FaultyFileSystem();
  disks.push(fs);
  return fs;
};
const stateOf = (exporter: S3MetricExporter) => exporter.stats().spool?.state;
const tagsOf = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i).flatMap(
    (t) => Array(5).fill(t) as number[],
  );
const lockDir = () => lockDirOf(dir);
const ownerOf = () => lockOwnerOf(dir);
const backdate = (millis: number) => backdateLock(dir, millis);

/**
 * The lock a process of another pid namespace on this host holds (the container before a
 * restart, pid 1 there): nothing here can tell whether it still runs.
 */
function lockOfAnotherPidNamespace(): SpoolOwner {
  const owner: SpoolOwner = {
    pid: 1,
    host: hostname(),
    bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    pidNamespace: `${readlinkSync('/proc/self/ns/pid')}-of-another-container`,
    token: 'the-container-before-the-restart',
    since: new Date().toISOString(),
  };
  mkdirSync(lockDir(), { recursive: true });
  writeFileSync(join(lockDir(), 'owner.json'), JSON.stringify(owner));
  return owner;
}

/** An earlier run that leaves batches tagged from..to in the spool (S3 never answers it). */
async function leaveBatches(from: number, to: number): Promise<void> {
  const s3 = new ScriptedS3().script([], { kind: 'hang' });
  const first = spoolExporter(s3, dir, { flushTimeoutMillis: 100 });
  await waitFor(() => stateOf(first) === 'active', 5_000, 'the first run has its spool');
  for (let tag = from; tag <= to; tag++) {
    expect((await exportSynthetic(first, 5, tag)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => first.stats().spool?.written === tag - from + 1, 5_000, `batch ${tag}`);
  }
  await first.shutdown();
  expect(first.stats().spool?.leftAtShutdown).toBe(to - from + 1);
}

const tagsOnDisk = () =>
  readdirSync(join(dir, 'batches')).map((n) =>
    Number(
      /"key":"tag","value":\{"intValue":(\d+)\}/.exec(
        decodeSpoolFile(readFileSync(join(dir, 'batches', n))).body.toString(),
      )?.[1],
    ),
  );

describe('a spool whose lock another process holds', () => {
  test('an owner that cannot be checked (the container before a restart): the exporter starts, uploads from memory, says so once, then adopts the spool when the lock is stale, replays it and writes ahead what is pending', async () => {
    await leaveBatches(1, 3);
    const before = lockOfAnotherPidNamespace();
    const s3 = new ScriptedS3();
    const exporter = exporterWith(s3); // no SpoolLockedError
    await waitFor(() => stateOf(exporter) === 'waiting-for-lock', 5_000, 'waiting');
    const waiting = messages.filter((m) => /spoolDir .* is locked by pid 1 on /.test(m.text));
    expect(waiting).toHaveLength(1);
    expect(waiting[0]?.level).toBe('warn');
    expect(waiting[0]?.text).toMatch(/cannot be checked from here/);
    expect(waiting[0]?.text).toMatch(/not been refreshed for 10 s/);

    // While it waits, exports are stored from memory, without a write-ahead copy.
    expect((await exportSynthetic(exporter, 5, 4)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => exporter.stats().batchesUploaded === 1, 5_000, 'tag 4 stored');
    expect(exporter.stats().spool).toMatchObject({ state: 'waiting-for-lock', written: 0 });
    // One more, which S3 does not take yet: it is still pending when the spool is adopted.
    s3.script([], { kind: 'hang' });
    expect((await exportSynthetic(exporter, 5, 5)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => s3.attempts.length >= 2, 5_000, 'tag 5 tried');

    // Several tries later the lock is still the other owner's.
    await sleep(LOCK_TIMING.retryMillis * 2.5);
    expect(ownerOf().token).toBe(before.token);
    expect(stateOf(exporter)).toBe('waiting-for-lock');
    // Its owner stops refreshing it (the predecessor is dead): stale, so taken at the next try.
    backdate(LOCK_TIMING.staleMillis + 1_000);
    const staleAt = performance.now();
    await waitFor(() => stateOf(exporter) === 'active', LOCK_TIMING.retryMillis + 2_000, 'adopted');
    expect(performance.now() - staleAt).toBeLessThan(LOCK_TIMING.retryMillis + 2_000);
    expect(ownerOf().pid).toBe(process.pid);
    // The pending batch gets its write-ahead copy, beside the three the earlier run left.
    await waitFor(() => exporter.stats().spool?.written === 1, 5_000, 'tag 5 written ahead');
    expect(tagsOnDisk().sort()).toEqual([1, 2, 3, 5]);

    s3.script([], { kind: 'ok' });
    await waitFor(
      () => exporter.stats().spool?.replayed === 3 && exporter.stats().pendingBatches === 0,
      10_000,
      'replayed',
    );
    expect(s3.storedTags()).toEqual(tagsOf(1, 5));
    // A replayed file is deleted after its upload is acknowledged, not before replayed counts it.
    await waitFor(
      () => readdirSync(join(dir, 'batches')).length === 0,
      5_000,
      'the replayed files deleted',
    );
    expect(messages.filter((m) => /is locked by pid 1/.test(m.text))).toHaveLength(1);
    expect(messages.some((m) => /spool .* is ours after \d+\.\d s/.test(m.text))).toBe(true);
  });

  test('an exporter runs on the real lock intervals: a lock not refreshed for 8.5 s is left to its owner, one not refreshed for 11 s is taken', async () => {
    // The integration tests give their child processes shorter intervals (LOCK_TIMING_OPTION);
    // an exporter made from options alone, as in production, waits 10 s (this file: tries every 50 ms).
    const before = lockOfAnotherPidNamespace();
    const exporter = exporterWith(new ScriptedS3());
    await waitFor(() => stateOf(exporter) === 'waiting-for-lock', 5_000, 'waiting');
    backdate(8_500);
    await sleep(LOCK_TIMING.retryMillis * 5);
    expect(ownerOf().token).toBe(before.token);
    expect(stateOf(exporter)).toBe('waiting-for-lock');
    backdate(11_000);
    await waitFor(() => stateOf(exporter) === 'active', 2_000, 'adopted');
    expect(ownerOf().pid).toBe(process.pid);
  });

  test('shutdown while waiting stops the tries: a lock that goes stale later is not taken', async () => {
    const before = lockOfAnotherPidNamespace();
    const exporter = exporterWith(new ScriptedS3());
    await waitFor(() => stateOf(exporter) === 'waiting-for-lock', 5_000, 'waiting');
    const started = performance.now();
    await exporter.shutdown();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(stateOf(exporter)).toBe('closed');
    backdate(LOCK_TIMING.staleMillis + 1_000);
    await sleep(LOCK_TIMING.retryMillis * 2);
    expect(ownerOf().token).toBe(before.token);
  });
});

describe('a spool directory that cannot be opened', () => {
  test('the constructor returns, uploads go on from memory, it is reported once with the reason, and the directory is tried again until it works', async () => {
    const blocker = join(dir, 'not-a-directory');
    writeFileSync(blocker, '');
    const s3 = new ScriptedS3();
    const exporter = spoolExporter(s3, join(blocker, 'spool'), { flushTimeoutMillis: 2_000 });
    exporters.push(exporter);
    await waitFor(() => stateOf(exporter) === 'unavailable', 5_000, 'unavailable');
    expect((await exportSynthetic(exporter, 5, 1)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => exporter.stats().batchesUploaded === 1, 5_000, 'stored from memory');
    await sleep(LOCK_TIMING.retryMillis * 1.5);
    const reports = messages.filter((m) => /cannot be opened/.test(m.text));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.level).toBe('error');
    expect(reports[0]?.text).toMatch(/ENOTDIR/);
    // Fixed (a volume mounted late, a permission granted): the next try takes it.
    await rm(blocker);
    await waitFor(() => stateOf(exporter) === 'active', LOCK_TIMING.retryMillis + 2_000, 'adopted');
    expect((await exportSynthetic(exporter, 5, 2)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => exporter.stats().batchesUploaded === 2, 5_000, 'tag 2 stored');
    expect(exporter.stats().spool?.written).toBe(1);
    expect(s3.storedTags()).toEqual(tagsOf(1, 2));
  });
});

describe('a disk that does not answer when the exporter starts', () => {
  test('costs the spool, not the service: the constructor returns, uploads go on from memory, and the spool is adopted when the disk answers', async () => {
    const fs = hungDisk().hangNext('mkdir');
    const s3 = new ScriptedS3();
    // The deadline covers tag 2's write on the real disk too: 200 ms was overrun under load.
    const exporter = exporterWith(s3, { spoolFileSystem: fs, spoolTimeoutMillis: 1_000 });
    expect(stateOf(exporter)).toBe('opening');
    expect((await exportSynthetic(exporter, 5, 1)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => exporter.stats().batchesUploaded === 1, 5_000, 'stored from memory');
    expect(stateOf(exporter)).toBe('unavailable');
    expect(exporter.stats().spool?.written).toBe(0);
    const reports = messages.filter((m) => /cannot be opened/.test(m.text));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.level).toBe('error');
    expect(reports[0]?.text).toMatch(/did not answer within 1000 ms/);

    fs.release();
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'adopted when the disk answers');
    expect((await exportSynthetic(exporter, 5, 2)).code).toBe(ExportResultCode.SUCCESS);
    await waitFor(() => exporter.stats().batchesUploaded === 2, 5_000, 'tag 2 stored');
    expect(exporter.stats().spool?.written).toBe(1);
    expect(s3.storedTags()).toEqual(tagsOf(1, 2));
  });

  test('shutdown does not wait for it; the directory stays claimed until the hung try returns, and a lock it takes then is released', async () => {
    const fs = hungDisk().hangNext('mkdir');
    const exporter = exporterWith(new ScriptedS3(), {
      spoolFileSystem: fs,
      spoolTimeoutMillis: 200,
    });
    const started = performance.now();
    await exporter.shutdown();
    // It waits 1 s for the try, which a hung disk holds longer.
    expect(performance.now() - started).toBeLessThan(1_000 + 1_000);
    // The try still hangs: this process must not start a second owner on the directory.
    expect(() => exporterWith(new ScriptedS3())).toThrow(SpoolLockedError);
    fs.release();
    let next: S3MetricExporter | undefined;
    let lockLeft = true;
    await waitFor(
      () => {
        try {
          next = exporterWith(new ScriptedS3());
          // The late try took the lock and released it before the claim (next has not begun
          // its own try: that starts on a later turn of the event loop).
          lockLeft = existsSync(lockDir());
          return true;
        } catch (error) {
          if (error instanceof SpoolLockedError) return false;
          throw error;
        }
      },
      5_000,
      'the claim released',
    );
    expect(lockLeft).toBe(false);
    // batches/, tmp/, quarantine/ and journal/: the late try ran to its end.
    expect(fs.calls.filter((c) => c.op === 'mkdir')).toHaveLength(4);
    await waitFor(() => next !== undefined && stateOf(next) === 'active', 5_000, 'the next owner');
    expect(ownerOf().pid).toBe(process.pid);
    await next?.shutdown();
    expect(existsSync(lockDir())).toBe(false);
  });
});
