import { cp, mkdir, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { MemoryBudget } from '../../../src/pipeline/budget.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { spoolExporter } from '../../support/spool-exporter.js';
import { tempDirs } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

/**
 * What a restart finds on disk counts against maxBufferedBytes like everything else: a crash
 * that left more than the bound (journal chains, spool files) must not make the next run hold
 * more than it, and what it cannot hold stays on disk or is dropped and counted.
 */
describe('what a restart restores stays within maxBufferedBytes', () => {
  const newDir = tempDirs();
  const running: S3MetricExporter[] = [];
  afterEach(async () => {
    for (const e of running.splice(0)) await e.shutdown();
  });

  const POINTS = 20;
  const start = (s3: ScriptedS3, dir: string, options: Partial<S3MetricExporterOptions> = {}) => {
    const e = spoolExporter(s3, dir, {
      format: 'otlp-json',
      maxBatchAgeMillis: 600_000,
      journalSyncMillis: 20,
      ...options,
    });
    running.push(e);
    return e;
  };
  const notLock = (src: string) => basename(src) !== 'owner.lock' && !src.includes('/owner.lock/');

  /** The most any budget held after any admit or resize while `run` runs. */
  async function peakOf(run: () => Promise<void>): Promise<{ peak: number; over: boolean }> {
    const proto = MemoryBudget.prototype;
    const { admit, resize } = proto;
    let peak = 0;
    let over = false;
    const note = (budget: MemoryBudget) => {
      peak = Math.max(peak, budget.bytes);
      if (budget.bytes > budget.limit) over = true;
    };
    proto.admit = function (this: MemoryBudget, ...args: Parameters<typeof admit>) {
      admit.apply(this, args);
      note(this);
    };
    proto.resize = function (this: MemoryBudget, ...args: Parameters<typeof resize>) {
      resize.apply(this, args);
      note(this);
    };
    try {
      await run();
    } finally {
      proto.admit = admit;
      proto.resize = resize;
    }
    return { peak, over };
  }

  /**
   * A spool directory with `chains` journal chains, each an open batch of three exports that a
   * kill -9 left (one earlier run each, their journals merged), and the bytes one of them held.
   */
  async function crashedJournals(chains: number): Promise<{ dir: string; held: number }> {
    const dir = await newDir('otel-s3-restore-budget-');
    let held = 0;
    for (let i = 0; i < chains; i++) {
      const run = await newDir('otel-s3-restore-budget-run-');
      const e = start(new ScriptedS3(), run);
      await waitFor(() => e.stats().spool?.state === 'active', 5_000, 'the spool adopted');
      for (let t = 1; t <= 3; t++)
        expect((await exportSynthetic(e, POINTS, 10 * i + t)).code).toBe(0);
      await waitFor(() => (e.stats().spool?.journalSyncs ?? 0) > 0, 2_000, 'a group commit');
      await new Promise((r) => setTimeout(r, 60));
      held = Math.max(held, e.stats().bufferedBytes);
      if (i === 0) await cp(run, dir, { recursive: true, filter: notLock });
      else
        for (const name of await readdir(join(run, 'journal')))
          await cp(join(run, 'journal', name), join(dir, 'journal', name));
    }
    await mkdir(join(dir, 'batches'), { recursive: true });
    return { dir, held };
  }

  /**
   * Six chains replayed into room for about two and a half: `s3` hangs or fails. Returns the
   * exporter, its directory and the points dropped for room.
   */
  async function replayedWithin(
    s3: ScriptedS3,
  ): Promise<{ after: S3MetricExporter; dir: string; dropped: number }> {
    const CHAINS = 6;
    const { dir, held } = await crashedJournals(CHAINS);
    expect((await readdir(join(dir, 'journal'))).length).toBeGreaterThanOrEqual(CHAINS);
    const bound = Math.ceil(2.5 * held);
    let after!: S3MetricExporter;
    const { over } = await peakOf(async () => {
      after = start(s3, dir, {
        maxBufferedBytes: bound,
        maxBatchBytes: bound,
        requestTimeoutMillis: 60_000,
      });
      await waitFor(
        () => (after.stats().spool?.journalReplayed ?? 0) === CHAINS,
        5_000,
        'the replay',
      );
      await new Promise((r) => setTimeout(r, 200));
    });
    const stats = after.stats();
    // Before: all six rebuilt in memory and admitted as they came, about 2.4 times the bound.
    expect(over).toBe(false);
    expect(stats.bufferedBytes).toBeLessThanOrEqual(bound);
    expect(stats.peakBufferedBytes).toBeLessThanOrEqual(bound);
    // Nothing lost quietly: each batch is on disk (a spool file) or counted dropped.
    const files = (await readdir(join(dir, 'batches'))).length;
    const dropped = stats.pointsDroppedByReason['buffer-full'] ?? 0;
    expect(files * 3 * POINTS + dropped).toBe(CHAINS * 3 * POINTS);
    return { after, dir, dropped };
  }

  /** Every point the crashed runs exported (see crashedJournals): tags 10 * i + t, once each. */
  const everyTag = [0, 1, 2, 3, 4, 5]
    .flatMap((i) => [1, 2, 3].flatMap((t) => Array<number>(POINTS).fill(10 * i + t)))
    .sort((a, b) => a - b);

  test('journal chains replayed after a crash while S3 fails: the bound holds, batches paged out to disk, none dropped', async () => {
    const failing = new ScriptedS3().script([], {
      kind: 'status',
      status: 500,
      name: 'InternalError',
    });
    expect((await replayedWithin(failing)).dropped).toBe(0);
  });

  test('journal chains replayed after a crash while uploads hang: the bound holds, what cannot fit waits on disk, none dropped', async () => {
    const hanging = new ScriptedS3().script([], { kind: 'hang' });
    // Two uploads in flight fill the bound and cannot be paged out: the rest, durable in the
    // journal, are held paged out (their spool files) instead of dropped.
    // Before: 4 batches (240 points) dropped, counted buffer-full.
    const { after, dir, dropped } = await replayedWithin(hanging);
    expect(dropped).toBe(0);
    // Uploads work again: what waited on disk is read back and stored, every point once.
    hanging.script([], { kind: 'ok' });
    hanging.release();
    await waitFor(() => after.stats().pendingBatches === 0, 10_000, 'every batch stored');
    expect(hanging.storedTags()).toEqual(everyTag);
    expect(after.stats().pointsDroppedByReason['buffer-full'] ?? 0).toBe(0);
    await waitFor(
      async () => (await readdir(join(dir, 'batches'))).length === 0,
      5_000,
      'spool files deleted',
    );
  });
});
