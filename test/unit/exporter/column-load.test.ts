/**
 * Parquet's column builders load on first use (a dynamic import). forceFlush() and shutdown()
 * wait for them only within their deadline: a load that never ends cannot hold either past
 * flushTimeoutMillis, and a load that fails cannot stop shutdown() half-way.
 */

import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { diag } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { configure } from '../../../src/config/environment.js';
import type { S3MetricExporterOptions } from '../../../src/config/options.js';
import { createSharedParts, type SharedParts } from '../../../src/exporter/shared-parts.js';
import { SignalExporter } from '../../../src/exporter/signal-exporter.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import type { SignalExport } from '../../../src/signals/signal.js';
import {
  captureDiag,
  type ProcessWarning,
  recordProcessWarnings,
} from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { syntheticMetrics } from '../../support/service.js';
import { spoolExporter } from '../../support/spool-exporter.js';
import { lockDirOf } from '../../support/spool-lock.js';
import { tempDirs } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const logged = captureDiag();

const FLUSH_MILLIS = 300;

/**
 * A Parquet exporter of metrics whose column builders load with `load` (and `options`), shut
 * down when the test finishes; `left()`: its group was left.
 */
function exporterLoading(
  load: SignalExport<ResourceMetrics>['loadColumns'],
  flushTimeoutMillis = FLUSH_MILLIS,
  options: Partial<S3MetricExporterOptions> = {},
) {
  const s3 = new ScriptedS3();
  const config = configure({
    bucket: 'unit',
    s3Client: s3.client,
    format: 'parquet',
    flushTimeoutMillis,
    ...options,
  });
  const shared = createSharedParts(config);
  let leaves = 0;
  const join = shared.join.bind(shared);
  const watched: SharedParts = {
    ...shared,
    join: () => {
      const leave = join();
      return () => {
        leaves++;
        leave();
      };
    },
  };
  const exporter = new SignalExporter(config, { ...metricsExport, loadColumns: load }, watched);
  // Shut down however the test ends (again: a no-op): its timers must not run into later files.
  onTestFinished(() => exporter.shutdown());
  return { exporter, left: () => leaves };
}

/** A Parquet exporter of metrics journaled in `dir` whose column builders load with `load`. */
function journaledExporterLoading(load: SignalExport<ResourceMetrics>['loadColumns'], dir: string) {
  const config = configure({
    bucket: 'unit',
    s3Client: new ScriptedS3().client,
    format: 'parquet',
    flushTimeoutMillis: FLUSH_MILLIS,
    spoolDir: dir,
    journalSyncMillis: 20,
  });
  return new SignalExporter(config, { ...metricsExport, loadColumns: load });
}

/** How long `work` took, in milliseconds, or 'pending' if it had not ended after `limit`. */
async function timed(work: Promise<unknown>, limit: number): Promise<number | 'pending'> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), limit);
    }),
  ]);
  clearTimeout(timer);
  return ended ? performance.now() - start : 'pending';
}

describe('column builders that never load', () => {
  const never = () => new Promise<never>(() => {});

  test('forceFlush() resolves at its deadline and says what is left', async () => {
    const { exporter } = exporterLoading(never);
    exporter.export(syntheticMetrics(5, 1), () => {});
    const took = await timed(exporter.forceFlush(), 5 * FLUSH_MILLIS);
    expect(took).not.toBe('pending');
    expect(logged).toContainEqual({
      level: 'error',
      text: 'otel-s3-exporter: metrics exporter: forceFlush() could not seal the open batch within flushTimeoutMillis (300 ms): the Parquet column builders have not loaded; the exports waiting for them are not stored',
    });
    await exporter.shutdown();
  });

  test('shutdown() resolves at its deadline, having left its group', async () => {
    const { exporter, left } = exporterLoading(never);
    exporter.export(syntheticMetrics(5, 1), () => {});
    const took = await timed(exporter.shutdown(), 5 * FLUSH_MILLIS);
    expect(took).not.toBe('pending');
    expect(left()).toBe(1);
    expect(logged).toContainEqual({
      level: 'error',
      text: expect.stringMatching(
        /^otel-s3-exporter: metrics exporter: shutdown\(\) could not seal the open batch within flushTimeoutMillis \(300 ms\): the Parquet column builders have not loaded; the exports waiting for them are answered FAILED, dropping \d+ data points \(counted in stats\(\)\.pointsDroppedByReason\.shutdown\)$/,
      ),
    });
  });

  test('shutdown() answers the exports waiting for them FAILED and counts their points dropped', async () => {
    const { exporter } = exporterLoading(never);
    const metrics = syntheticMetrics(5, 1);
    // Counted from the export itself: every data point of every metric.
    const points = metrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .reduce((n, m) => n + m.dataPoints.length, 0);
    const answers: number[] = [];
    exporter.export(metrics, (r) => answers.push(r.code));
    exporter.export(metrics, (r) => answers.push(r.code));
    await exporter.shutdown();
    // The answers come on the turn the shutdown gives up, before it resolves.
    expect(answers).toEqual([ExportResultCode.FAILED, ExportResultCode.FAILED]);
    expect(exporter.stats()).toMatchObject({
      exportsAccepted: 0,
      exportsRejected: 2,
      pointsDropped: 2 * points,
      pointsDroppedByReason: { shutdown: 2 * points },
    });
    expect(points).toBeGreaterThan(0);
    expect(logged.map((l) => l.text)).toContainEqual(
      expect.stringContaining(`dropping ${2 * points} data points`),
    );
  });
});

describe('column builders that fail to load', () => {
  const failing = () => Promise.reject(new Error('Cannot find module column-builders.js'));

  test('an export answers FAILED, naming the error; shutdown() resolves and leaves its group', async () => {
    const { exporter, left } = exporterLoading(failing);
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      exporter.export(syntheticMetrics(5, 1), resolve),
    );
    expect(result.error?.message).toMatch(/Cannot find module column-builders\.js/);
    await expect(exporter.shutdown()).resolves.toBeUndefined();
    expect(left()).toBe(1);
    expect(exporter.stats()).toMatchObject({ exportsRejected: 1, exportsAccepted: 0 });
  });

  test('with no export at all: no unhandled rejection, and shutdown() resolves', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const { exporter, left } = exporterLoading(failing);
    let shutdown: Promise<void> | undefined;
    try {
      // Node reports an unhandled rejection once the microtasks of a macrotask are done.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
      shutdown = exporter.shutdown();
      await expect(shutdown).resolves.toBeUndefined();
      expect(left()).toBe(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await (shutdown ?? exporter.shutdown()).catch(() => {});
    }
  });
});

describe('columns that fail to seal', () => {
  /** Builders whose seal throws: the first `failures` seals (all of them if undefined). */
  const unsealable = (failures?: number) => async () => () => {
    const builders = new MetricColumnBuilders();
    const seal = builders.seal.bind(builders);
    let seals = 0;
    builders.seal = () => {
      if (failures === undefined || ++seals <= failures)
        throw new Error('the columns could not be sealed');
      return seal();
    };
    return builders;
  };
  // Counted from the export itself: every data point of every metric.
  const pointsOf = (metrics: ReturnType<typeof syntheticMetrics>) =>
    metrics.scopeMetrics.flatMap((s) => s.metrics).reduce((n, m) => n + m.dataPoints.length, 0);

  test('shutdown() says so, resolves and leaves its group', async () => {
    const { exporter, left } = exporterLoading(unsealable());
    await new Promise((resolve) => exporter.export(syntheticMetrics(5, 1), resolve));
    await expect(exporter.shutdown()).resolves.toBeUndefined();
    expect(left()).toBe(1);
    expect(logged).toContainEqual({
      level: 'error',
      text: expect.stringMatching(
        /^otel-s3-exporter: metrics exporter: shutdown\(\) could not seal the open batch \(the columns could not be sealed\): dropping \d+ data points/,
      ),
    });
  });

  test("shutdown() counts the open batch's points dropped and holds none of its bytes", async () => {
    const { exporter } = exporterLoading(unsealable());
    const metrics = syntheticMetrics(5, 1);
    const points = pointsOf(metrics);
    expect(points).toBeGreaterThan(0);
    await new Promise((resolve) => exporter.export(metrics, resolve));
    expect(exporter.stats().bufferedBytes).toBeGreaterThan(0);
    await exporter.shutdown();
    expect(exporter.stats()).toMatchObject({
      exportsAccepted: 1,
      pointsUploaded: 0,
      pointsDropped: points,
      pointsDroppedByReason: { 'internal-error': points },
      bufferedBytes: 0,
    });
    expect(logged.map((l) => l.text)).toContainEqual(
      expect.stringContaining(`dropping ${points} data points`),
    );
  });

  test('forceFlush() says the open batch is not stored; it is kept, and stored later', async () => {
    // The second flush makes a Parquet body (in a worker thread on Node 20, slow to start on a
    // loaded machine) and uploads it: a deadline no such machine misses.
    const { exporter } = exporterLoading(unsealable(1), 10_000);
    const metrics = syntheticMetrics(5, 1);
    const points = pointsOf(metrics);
    try {
      await new Promise((resolve) => exporter.export(metrics, resolve));
      await expect(exporter.forceFlush()).resolves.toBeUndefined();
      expect(logged).toContainEqual({
        level: 'error',
        text: 'otel-s3-exporter: metrics exporter: forceFlush() could not seal the open batch (the columns could not be sealed): it is not stored; it is sealed again at the next flush or at its age (maxBatchAgeMillis)',
      });
      expect(exporter.stats()).toMatchObject({ pointsUploaded: 0, pointsDropped: 0 });
      await exporter.forceFlush();
      expect(exporter.stats()).toMatchObject({ pointsUploaded: points, pointsDropped: 0 });
      expect(logged.map((l) => l.text)).toContainEqual(
        'otel-s3-exporter: metrics exporter: forceFlush() stored everything again',
      );
    } finally {
      await exporter.shutdown();
    }
  });

  test('a seal that throws at forceFlush() counts in the closing line of the streak', async () => {
    // A batch is full at its first export (maxBatchBytes 1): its seal by size throws, then the
    // flush's; the next flush's works.
    let seals = 0;
    const load = async () => () => {
      const builders = new MetricColumnBuilders();
      const seal = builders.seal.bind(builders);
      builders.seal = () => {
        if (++seals <= 2) throw new Error('the columns could not be sealed');
        return seal();
      };
      return builders;
    };
    const { exporter } = exporterLoading(load, 10_000, { maxBatchBytes: 1 });
    try {
      await new Promise((resolve) => exporter.export(syntheticMetrics(5, 1), resolve));
      await exporter.forceFlush();
      const failed = seals;
      expect(failed).toBe(2);
      await exporter.forceFlush();
      expect(logged.map((l) => l.text)).toContainEqual(
        `otel-s3-exporter: metrics exporter: sealed the open batch again, after ${failed} failed seals`,
      );
    } finally {
      await exporter.shutdown();
    }
  });

  test('shutdown() reports the drop without a logger', async () => {
    diag.disable();
    const warnings: ProcessWarning[] = [];
    recordProcessWarnings(warnings);
    const { exporter } = exporterLoading(unsealable());
    try {
      await new Promise((resolve) => exporter.export(syntheticMetrics(5, 1), resolve));
      await exporter.shutdown();
      expect(warnings).toContainEqual({
        code: 'OTEL_S3_DATA_DROPPED',
        text: expect.stringContaining('shutdown() could not seal the open batch'),
      });
    } finally {
      vi.restoreAllMocks();
      await exporter.shutdown();
    }
  });

  const newDir = tempDirs();

  test('shutdown() with a journal leaves the points to the next run, which stores them', async () => {
    const dir = await newDir('otel-s3-unsealable-');
    const exporter = journaledExporterLoading(unsealable(), dir);
    // Shut down however the test ends: its spool's timers must not run into later files.
    onTestFinished(() => exporter.shutdown());
    const metrics = syntheticMetrics(5, 1);
    const points = pointsOf(metrics);
    await waitFor(() => exporter.stats().spool?.state === 'active', 5_000, 'the spool adopted');
    await new Promise((resolve) => exporter.export(metrics, resolve));
    await exporter.shutdown();
    // Nothing stays counted: the chain's entries are on disk, and no seal entry is written.
    expect(exporter.stats()).toMatchObject({ pointsDropped: 0, bufferedBytes: 0 });
    expect(logged).toContainEqual({
      level: 'warn',
      text: `otel-s3-exporter: metrics exporter: shutdown() could not seal the open batch (the columns could not be sealed): its ${points} data points stay in the journal, for the next run to store`,
    });
    const s3 = new ScriptedS3();
    const next = spoolExporter(s3, dir, { format: 'parquet' });
    try {
      await waitFor(() => next.stats().pointsUploaded === points, 15_000, 'the replay stored');
    } finally {
      await next.shutdown();
    }
  });

  test('shutdown() with a journal whose last write fails counts the points it said stay', async () => {
    const dir = await newDir('otel-s3-unsealable-');
    // The journal's part cannot be made: shutdown's last commit, its first, fails.
    const fs = new FaultyFileSystem()
      .only((path) => path.endsWith('.journal'))
      .failNext('create', 'EIO');
    const config = configure({
      bucket: 'unit',
      s3Client: new ScriptedS3().client,
      format: 'parquet',
      flushTimeoutMillis: FLUSH_MILLIS,
      spoolDir: dir,
      spoolFileSystem: fs,
      journalSyncMillis: 60_000,
    });
    const exporter = new SignalExporter(config, { ...metricsExport, loadColumns: unsealable() });
    // Shut down however the test ends: its spool's timers must not run into later files.
    onTestFinished(() => exporter.shutdown());
    const metrics = syntheticMetrics(5, 1);
    const points = pointsOf(metrics);
    await waitFor(() => exporter.stats().spool?.state === 'active', 5_000, 'the spool adopted');
    await new Promise((resolve) => exporter.export(metrics, resolve));
    await exporter.shutdown();
    expect(exporter.stats()).toMatchObject({
      pointsDropped: points,
      pointsDroppedByReason: { 'internal-error': points },
      bufferedBytes: 0,
    });
    expect(logged.map((l) => l.text)).toContainEqual(
      expect.stringContaining(
        `shutdown()'s last journal write failed: ${points} data points of the open batch that could not be sealed are not in the journal after all, and are dropped`,
      ),
    );
  });

  test('shutdown() with a journal on a spool another process holds counts the points dropped', async () => {
    const dir = await newDir('otel-s3-unsealable-');
    // The lock of a process of another pid namespace on this host: never stale in this test.
    mkdirSync(lockDirOf(dir), { recursive: true });
    writeFileSync(
      join(lockDirOf(dir), 'owner.json'),
      JSON.stringify({
        pid: 1,
        host: hostname(),
        bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
        pidNamespace: `${readlinkSync('/proc/self/ns/pid')}-of-another-container`,
        token: 'another-process',
        since: new Date().toISOString(),
      }),
    );
    const exporter = journaledExporterLoading(unsealable(), dir);
    // Shut down however the test ends: its spool's timers must not run into later files.
    onTestFinished(() => exporter.shutdown());
    const metrics = syntheticMetrics(5, 1);
    const points = pointsOf(metrics);
    await waitFor(
      () => exporter.stats().spool?.state === 'waiting-for-lock',
      5_000,
      'the spool found locked',
    );
    await new Promise((resolve) => exporter.export(metrics, resolve));
    await exporter.shutdown();
    expect(exporter.stats()).toMatchObject({
      pointsDropped: points,
      pointsDroppedByReason: { 'internal-error': points },
      bufferedBytes: 0,
    });
  });
});
