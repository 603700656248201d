import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { Episodes } from '../../src/base/log.js';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../src/index.js';
import { emptySpoolStats, type SpoolStats } from '../../src/pipeline/stats.js';
import { DiskDeadline } from '../../src/spool/disk-deadline.js';
import { nodeFileSystem, type SpoolFileSystem } from '../../src/spool/file-system.js';
import { OpenBatchJournal } from '../../src/spool/journal.js';
import type { JournalRecordFormat } from '../../src/spool/journal-format.js';
import { KeeperReports } from '../../src/spool/keeper-reports.js';
import { Spool } from '../../src/spool/spool.js';
import type { FaultyFileSystem } from './faulty-fs.js';
import { scriptedExporter } from './scripted-exporter.js';
import { ScriptedS3 } from './scripted-s3.js';
import { type AnyExporter, METRICS, type SignalDriver } from './signal-driver.js';
import { tempDir } from './temp-dir.js';

/**
 * An exporter on a scripted S3 with its spool in `dir`, paced for unit tests: batches sealed
 * after 10 ms, retries within 50 ms, requests abandoned after 100 ms, no compression (bodies stay
 * readable on disk). Of metrics, or of `driver`'s signal.
 */
export function spoolExporter(
  s3: ScriptedS3,
  dir: string,
  options?: Partial<S3MetricExporterOptions>,
): S3MetricExporter;
export function spoolExporter<E extends AnyExporter>(
  s3: ScriptedS3,
  dir: string,
  options: Partial<S3MetricExporterOptions>,
  driver: SignalDriver<E>,
): E;
export function spoolExporter(
  s3: ScriptedS3,
  dir: string,
  options: Partial<S3MetricExporterOptions> = {},
  driver: SignalDriver = METRICS,
): AnyExporter {
  return scriptedExporter(
    s3,
    {
      compression: 'none',
      spoolDir: dir,
      maxBatchAgeMillis: 10,
      retry: { initialDelayMillis: 1, maxDelayMillis: 50 },
      requestTimeoutMillis: 100,
      flushTimeoutMillis: 1_000,
      ...options,
    },
    driver,
  );
}

/** spoolExporter() on a directory that changes from test to test, with a file's own defaults. */
export interface SpoolExporterIn {
  (s3: ScriptedS3, options?: Partial<S3MetricExporterOptions>): S3MetricExporter;
  <E extends AnyExporter>(
    s3: ScriptedS3,
    options: Partial<S3MetricExporterOptions>,
    driver: SignalDriver<E>,
  ): E;
}

/**
 * The exporter of a file of spool tests: spoolExporter() on `dir()` (the running test's spool
 * directory), with `defaults` under each call's options. Of metrics, or of `driver`'s signal.
 */
export function spoolExporterIn(
  dir: () => string,
  defaults: Partial<S3MetricExporterOptions> = {},
): SpoolExporterIn {
  return ((s3: ScriptedS3, options: Partial<S3MetricExporterOptions> = {}, driver = METRICS) =>
    spoolExporter(s3, dir(), { ...defaults, ...options }, driver)) as SpoolExporterIn;
}

/**
 * Opens `dir` as a spool of its own (directories and lock), as an earlier run would have, to
 * write files by hand. close() it before an exporter takes the directory.
 */
export async function openSpool(
  dir: string,
  fs: SpoolFileSystem = nodeFileSystem,
  timeoutMillis = 5_000,
): Promise<Spool> {
  const opening = await Spool.open(dir, fs, new DiskDeadline(timeoutMillis));
  if (opening.kind !== 'open') throw new Error(`spool ${dir} is held by another owner`);
  return opening.spool;
}

/**
 * A journal of metrics in OTLP JSON for a spool in `dir`, not attached yet: a group commit every
 * 10 ms, a chain given up past 1 MiB pending, its faults counted into `stats` and reported for a
 * spool of at most 1 MiB on a 5 s disk deadline (the deadline itself comes with attach()).
 */
export function testJournal(
  dir: string,
  options: {
    stats?: SpoolStats;
    syncMillis?: number;
    maxPendingBytes?: number;
    maxSpoolBytes?: number;
    diskTimeoutMillis?: number;
    signal?: string;
    format?: JournalRecordFormat;
    lost?: (points: number, rawBytes: number) => void;
    unwritten?: (points: number, rawBytes: number) => void;
  } = {},
): OpenBatchJournal {
  return new OpenBatchJournal(
    {
      signal: options.signal ?? 'metrics',
      format: options.format ?? 'otlp-json',
      syncMillis: options.syncMillis ?? 10,
      maxPendingBytes: options.maxPendingBytes ?? 1 << 20,
      overhead: () => 0,
      lost: options.lost,
      unwritten: options.unwritten,
    },
    new KeeperReports(options.stats ?? emptySpoolStats(), new Episodes(), {
      dir,
      maxSpoolBytes: options.maxSpoolBytes ?? 1 << 20,
      diskTimeoutMillis: options.diskTimeoutMillis ?? 5_000,
      retryEveryMillis: 60_000,
    }),
  );
}

/**
 * A testJournal() attached on `fs` to the journal and quarantine folders of the spool in `dir`
 * (made if missing), its disk deadline `options.diskTimeoutMillis` (5 s). The caller closes it.
 */
export function attachedJournal(
  dir: string,
  fs: SpoolFileSystem = nodeFileSystem,
  options: Parameters<typeof testJournal>[1] = {},
): OpenBatchJournal {
  const journal = testJournal(dir, options);
  mkdirSync(join(dir, 'journal'), { recursive: true });
  mkdirSync(join(dir, 'quarantine'), { recursive: true });
  journal.attach({
    dir: join(dir, 'journal'),
    quarantineDir: join(dir, 'quarantine'),
    fs,
    disk: new DiskDeadline(options.diskTimeoutMillis ?? 5_000),
  });
  return journal;
}

/**
 * For a file of spool tests: a spool directory for each test (made before it, handed to `use`,
 * removed after it), and lists a test adds its faulty disks and exporters to: after the test
 * the disks are released, then the exporters shut down. `exporterOn()` adds an exporter with
 * its spool in the test's directory, on the exporter's own intervals and a scripted S3.
 */
export function spoolTestDirs(
  prefix: string,
  use: (dir: string) => void,
): {
  exporters: S3MetricExporter[];
  disks: FaultyFileSystem[];
  exporterOn: (options?: Partial<S3MetricExporterOptions>) => S3MetricExporter;
} {
  const exporters: S3MetricExporter[] = [];
  const disks: FaultyFileSystem[] = [];
  let dir = '';
  beforeEach(() =>
    tempDir(prefix, (path) => {
      dir = path;
      use(path);
    }),
  );
  afterEach(async () => {
    for (const fs of disks.splice(0)) fs.release();
    for (const exporter of exporters.splice(0)) await exporter.shutdown();
  });
  const exporterOn = (options: Partial<S3MetricExporterOptions> = {}) => {
    const exporter = scriptedExporter(new ScriptedS3(), {
      compression: 'none',
      spoolDir: dir,
      ...options,
    });
    exporters.push(exporter);
    return exporter;
  };
  return { exporters, disks, exporterOn };
}

/** Where the spool of `exporter` is (stats().spool.state). */
export const spoolStateOf = (exporter: S3MetricExporter) => exporter.stats().spool?.state;
