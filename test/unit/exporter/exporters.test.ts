import { ExportResultCode } from '@opentelemetry/core';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  InvalidOptionError,
  S3Exporters,
  type S3MetricExporterOptions,
  SELF_METRICS_SCOPE,
} from '../../../src/index.js';
import * as backoff from '../../../src/s3/backoff.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { collectingProvider } from '../../support/service.js';
import { exportTagged, LOGS, METRICS, TRACES } from '../../support/signal-driver.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { thrown } from '../../support/thrown.js';
import { waitFor } from '../../support/wait.js';

/** The bucket from the environment, as a service sets it, so that per-signal variables count. */
function group(s3: ScriptedS3, options: S3MetricExporterOptions = {}): S3Exporters {
  return new S3Exporters({
    s3Client: s3.client,
    compression: 'none',
    maxBatchAgeMillis: 3_600_000, // nothing is sealed by age while the test runs
    ...options,
  });
}

/** A group on an S3 that never answers: what it is given stays held until it is dropped. */
function groupOnHangingS3(options: S3MetricExporterOptions = {}): S3Exporters {
  return new S3Exporters({
    s3Client: new ScriptedS3().script([], { kind: 'hang' }).client,
    compression: 'none',
    maxBatchAgeMillis: 3_600_000,
    requestTimeoutMillis: 60_000,
    flushTimeoutMillis: 100,
    ...options,
  });
}

describe('S3Exporters', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.OTEL_EXPORTER_S3_BUCKET = 'unit';
  });
  afterEach(() => {
    // In place: a plain object as process.env would no longer be the process's environment (a
    // later TZ, say, would change no time zone), and the next file in this worker would see it.
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  test("forceFlush() stores the spans a TracerProvider's forceFlush() leaves in the exporter", async () => {
    const s3 = new ScriptedS3();
    const s3Exporters = group(s3);
    const exporter = s3Exporters.spanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter })],
    });
    provider.getTracer('unit').startSpan('checkout').end();
    await provider.forceFlush();
    expect([...s3.stored.keys()]).toEqual([]); // the SDK's flush handed the span over, no more
    await s3Exporters.forceFlush();
    const keys = [...s3.stored.keys()];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/\/traces_[0-9a-f-]{36}\.json$/);
    expect(exporter.stats().pointsUploaded).toBe(1);
    await provider.shutdown();
  });

  test("one signal's forceFlush() leaves another's retries to their backoff", async () => {
    vi.spyOn(backoff, 'retryDelay').mockReturnValue(60_000);
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {}); // the spans' flush timeout
    try {
      const s3 = new ScriptedS3().script([{ kind: 'status', status: 500, name: 'InternalError' }]);
      const s3Exporters = group(s3, { flushTimeoutMillis: 100 });
      const spans = s3Exporters.spanExporter();
      const metrics = s3Exporters.metricExporter();
      await exportTagged(TRACES, spans, 1, 1);
      await spans.forceFlush(); // its upload fails and waits 60 s to retry
      await metrics.forceFlush();
      await new Promise((r) => setTimeout(r, 50)); // time for a retry it would have started
      expect(s3.attempts).toHaveLength(1);
      await spans.forceFlush(); // its own flush does not sit the backoff out
      expect(s3.stored.size).toBe(1);
      await Promise.all([spans.shutdown(), metrics.shutdown()]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("one signal's uploads working do not end another's configuration fault", async () => {
    vi.spyOn(backoff, 'slowRetryDelay').mockReturnValue(100);
    const warnings: string[] = [];
    vi.spyOn(process, 'emitWarning').mockImplementation((w) => {
      warnings.push(String(w));
    });
    try {
      const denied = { kind: 'status', status: 403, name: 'AccessDenied' } as const;
      // The spans' prefix is denied, the metrics' allowed: spans, metrics, the spans' retry.
      const s3 = new ScriptedS3().script([denied, { kind: 'ok' }, denied, denied]);
      const s3Exporters = group(s3, { flushTimeoutMillis: 100 });
      const spans = s3Exporters.spanExporter();
      const metrics = s3Exporters.metricExporter();
      await exportTagged(TRACES, spans, 1, 1);
      await spans.forceFlush(); // blocked on the fault: returns at once
      await exportTagged(METRICS, metrics, 1, 2);
      await metrics.forceFlush();
      expect(metrics.stats().batchesUploaded).toBe(1);
      await waitFor(() => s3.attempts.length >= 4, 5_000, 'two retries of the spans');
      // Before: one alert each time a span batch failed after a metric batch was stored.
      expect(warnings.filter((w) => w.includes('AccessDenied'))).toHaveLength(1);
      await Promise.all([spans.shutdown(), metrics.shutdown()]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("three exporters of one group: each one's stats() and self-metrics count its own signal only", async () => {
    const s3 = new ScriptedS3();
    const s3Exporters = group(s3);
    const signals = [
      { driver: METRICS, exporter: s3Exporters.metricExporter(), items: 3 },
      { driver: TRACES, exporter: s3Exporters.spanExporter(), items: 5 },
      { driver: LOGS, exporter: s3Exporters.logRecordExporter(), items: 7 },
    ];
    const { provider, collect } = collectingProvider();
    for (const { exporter } of signals) exporter.recordSelfMetrics(provider);
    for (const { driver, exporter, items } of signals) {
      for (let tag = 1; tag <= 2; tag++) await exportTagged(driver, exporter, items, tag);
    }
    await s3Exporters.forceFlush();
    const self = (await collect()).scopeMetrics.find((sm) => sm.scope.name === SELF_METRICS_SCOPE);
    const value = (name: string, attributes: Record<string, string>) =>
      self?.metrics
        .find((m) => m.descriptor.name === name)
        ?.dataPoints.filter((p) =>
          Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
        )
        .map((p) => p.value);
    for (const { driver, exporter, items } of signals) {
      const signal = driver.signal;
      const stats = exporter.stats();
      expect(stats.exportsAccepted, signal).toBe(2);
      expect(stats.pointsUploaded, signal).toBe(2 * items);
      expect(stats.batchesUploaded, signal).toBe(1);
      expect(value('s3_exporter.data_points', { outcome: 'uploaded', signal }), signal).toEqual([
        2 * items,
      ]);
      expect(value('s3_exporter.exports', { result: 'accepted', signal }), signal).toEqual([2]);
      expect(value('s3_exporter.batches', { outcome: 'uploaded', signal }), signal).toEqual([1]);
    }
    // One object per signal, named for it, holding its own items only.
    const keys = [...s3.stored.keys()];
    for (const word of ['metrics', 'traces', 'logs']) {
      expect(keys.filter((k) => k.includes(`/${word}_`))).toHaveLength(1);
    }
    expect(s3.storedTags()).toEqual(
      [3, 5, 7].flatMap((n) => [...Array(n).fill(1), ...Array(n).fill(2)]).sort((a, b) => a - b),
    );
    for (const { exporter } of signals) await exporter.shutdown();
    await provider.shutdown();
  });

  test("at the group's memory bound, each signal whose batches are dropped is told, by name", async () => {
    const warnings: string[] = [];
    vi.spyOn(process, 'emitWarning').mockImplementation((w) => {
      warnings.push(String(w));
    });
    try {
      // Every batch waits, and the bound drops the oldest idle ones.
      const s3Exporters = groupOnHangingS3({
        maxBatchBytes: 4_096,
        maxBufferedBytes: 64 * 1024,
        uploadConcurrency: 1,
      });
      const metrics = s3Exporters.metricExporter();
      const logs = s3Exporters.logRecordExporter();
      // Metrics first, then a flood of log records that drops the metrics' batches, then its own.
      for (let tag = 1; tag <= 20; tag++) await exportTagged(METRICS, metrics, 20, tag);
      for (let tag = 1; tag <= 400; tag++) await exportTagged(LOGS, logs, 20, tag);
      expect(metrics.stats().pointsDroppedByReason['buffer-full'] ?? 0).toBeGreaterThan(0);
      expect(logs.stats().pointsDroppedByReason['buffer-full'] ?? 0).toBeGreaterThan(0);
      const dropping = warnings.filter((w) => w.includes('reached: dropping'));
      // Before: one warning naming no signal, for both.
      expect(dropping.some((w) => w.includes('metrics exporter: maxBufferedBytes'))).toBe(true);
      expect(dropping.some((w) => w.includes('logs exporter: maxBufferedBytes'))).toBe(true);
      await Promise.all([metrics.shutdown(), logs.shutdown()]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("an export refused at the group's bound drops none of another signal's batches", async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const s3Exporters = groupOnHangingS3({
        maxBatchBytes: 4_096,
        maxBufferedBytes: 64 * 1024,
        uploadConcurrency: 1,
      });
      const metrics = s3Exporters.metricExporter();
      const logs = s3Exporters.logRecordExporter();
      // Two metric batches: the first uploading (S3 never answers), the second queued behind it.
      for (let tag = 1; tag <= 2; tag++) {
        await exportTagged(METRICS, metrics, 5, tag);
        await metrics.forceFlush();
      }
      expect(metrics.stats().pendingBatches).toBe(2);
      await exportTagged(METRICS, metrics, 5, 4); // and an open batch
      // Larger than the whole bound: it can never be taken, whatever is dropped for it.
      const result = await exportTagged(LOGS, logs, 2_000, 3);
      expect(result.code).toBe(ExportResultCode.FAILED);
      expect(logs.stats().pointsDroppedByReason['buffer-full']).toBe(2_000);
      // Before: the queued metric batch was dropped (buffer-full) to make room that never sufficed.
      expect(metrics.stats().pointsDropped).toBe(0);
      expect(metrics.stats().pendingBatches).toBe(2);
      // Nor is the metrics' open batch sealed early for it: no room it could free would do.
      expect(metrics.stats().batchesSealed).toBe(2);
      await Promise.all([metrics.shutdown(), logs.shutdown()]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("other signals' open batches keep a signal's exports out for one upload, not their age", async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const s3 = new ScriptedS3();
    const s3Exporters = group(s3, { maxBatchBytes: 64 * 1024, maxBufferedBytes: 96 * 1024 });
    const spans = s3Exporters.spanExporter();
    const logs = s3Exporters.logRecordExporter();
    const metrics = s3Exporters.metricExporter();
    try {
      // Spans and log records, each short of its batch size: two open batches, none sealed, that
      // together leave no room for a metric export.
      let tag = 1;
      while (spans.stats().bufferedBytes < 45 * 1024) await exportTagged(TRACES, spans, 20, tag++);
      while (logs.stats().bufferedBytes < 45 * 1024) await exportTagged(LOGS, logs, 20, tag++);
      expect(spans.stats().batchesSealed + logs.stats().batchesSealed).toBe(0);
      const refused = await exportTagged(METRICS, metrics, 5, tag++);
      expect(refused.code).toBe(ExportResultCode.FAILED);
      expect(metrics.stats().pointsDroppedByReason['buffer-full']).toBe(5);
      // Before: never stored (sealed at their age, an hour), the metrics refused all along.
      await waitFor(() => s3.stored.size === 2, 2_000, "the other signals' batches stored");
      expect((await exportTagged(METRICS, metrics, 5, tag++)).code).toBe(ExportResultCode.SUCCESS);
      expect(spans.stats().pointsDropped + logs.stats().pointsDropped).toBe(0);
    } finally {
      await Promise.all([spans.shutdown(), logs.shutdown(), metrics.shutdown()]);
      vi.restoreAllMocks();
    }
  });

  test("one signal's shutdown, giving up an upload that hangs, frees the group's queue for the others", async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    // The spans' upload hangs (and would for a minute); every later one is answered at once.
    const s3 = new ScriptedS3().script([{ kind: 'hang' }]);
    const s3Exporters = group(s3, {
      uploadConcurrency: 1,
      requestTimeoutMillis: 60_000,
      // Room for the two answered uploads on a loaded machine; the hang lasts a minute.
      flushTimeoutMillis: 1_000,
    });
    const spans = s3Exporters.spanExporter();
    const metrics = s3Exporters.metricExporter();
    const logs = s3Exporters.logRecordExporter();
    try {
      await exportTagged(TRACES, spans, 2, 1);
      await spans.shutdown();
      expect(spans.stats().pointsDroppedByReason).toEqual({ shutdown: 2 });
      await exportTagged(METRICS, metrics, 3, 2);
      await exportTagged(LOGS, logs, 4, 3);
      // Flushes and shutdowns of the two others, side by side, the group's flush among them.
      await Promise.all([
        metrics.forceFlush(),
        logs.shutdown(),
        s3Exporters.forceFlush(),
        metrics.shutdown(),
        logs.shutdown(),
      ]);
      expect(s3.attempts.map((a) => a.outcome)).toEqual(['aborted', 'ok', 'ok']);
      expect([metrics.stats().pointsUploaded, logs.stats().pointsUploaded]).toEqual([3, 4]);
      expect(metrics.stats().pointsDropped + logs.stats().pointsDropped).toBe(0);
      expect(s3.storedTags()).toEqual([2, 2, 2, 3, 3, 3, 3]);
    } finally {
      s3.release();
      await Promise.all([spans.shutdown(), metrics.shutdown(), logs.shutdown()]);
      vi.restoreAllMocks();
    }
  });

  test("one signal's forceFlush() stores its batch ahead of another signal's backlog", async () => {
    // Each upload takes 40 ms, one at a time: the log records' backlog takes 800 ms.
    const s3 = new ScriptedS3().script([], { kind: 'delay', millis: 40 });
    const s3Exporters = group(s3, { uploadConcurrency: 1, maxBatchBytes: 1_024 });
    const logs = s3Exporters.logRecordExporter();
    const metrics = s3Exporters.metricExporter();
    try {
      for (let tag = 1; tag <= 20; tag++) await exportTagged(LOGS, logs, 5, tag);
      expect(logs.stats().batchesSealed).toBe(20);
      await exportTagged(METRICS, metrics, 1, 21);
      await metrics.forceFlush();
      expect(metrics.stats().pointsUploaded).toBe(1);
      // Stored second: after the log records' batch that had the one slot already.
      expect(s3.attempts.findIndex((a) => a.key.includes('/metrics_'))).toBe(1);
      expect(logs.stats().pendingBatches).toBeGreaterThan(10);
    } finally {
      await Promise.all([logs.shutdown(), metrics.shutdown()]);
    }
  });

  test("each exporter's peakBufferedBytes is its own, as its bufferedBytes is, not the group's", async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const s3Exporters = groupOnHangingS3();
      const logs = s3Exporters.logRecordExporter();
      const metrics = s3Exporters.metricExporter();
      for (let tag = 1; tag <= 50; tag++) await exportTagged(LOGS, logs, 20, tag);
      await exportTagged(METRICS, metrics, 1, 1);
      const held = metrics.stats().bufferedBytes;
      expect(held).toBeGreaterThan(0);
      expect(logs.stats().bufferedBytes).toBeGreaterThan(10 * held);
      // Before: the group's bytes at its append, the log records' included.
      expect(metrics.stats().peakBufferedBytes).toBe(held);
      await Promise.all([metrics.shutdown(), logs.shutdown()]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("a signal shut down before its spool opened holds none of the group's memory bound", async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const dir = await makeTempDir('otel-s3-group-journal-');
    const disk = new FaultyFileSystem().hangNext('mkdir', 100); // the spool never opens
    try {
      // The journal keeps each signal's entries in memory until the spool opens: a 256 KiB chunk
      // a signal. 780,000 bytes hold three such chunks less a few kilobytes.
      const s3Exporters = groupOnHangingS3({
        spoolDir: dir,
        spoolFileSystem: disk,
        maxBatchBytes: 200_000,
        maxBufferedBytes: 780_000,
      });
      const spans = s3Exporters.spanExporter();
      const metrics = s3Exporters.metricExporter();
      const logs = s3Exporters.logRecordExporter();
      expect((await exportTagged(TRACES, spans, 3, 1)).code).toBe(ExportResultCode.SUCCESS);
      await spans.shutdown();
      // Before: 262,144, the journal's chunk, held and counted in the group's bound for good.
      expect(spans.stats().bufferedBytes).toBe(0);
      expect((await exportTagged(METRICS, metrics, 3, 2)).code).toBe(ExportResultCode.SUCCESS);
      // Before: FAILED, maxBufferedBytes (780000) reached.
      expect((await exportTagged(LOGS, logs, 3, 3)).code).toBe(ExportResultCode.SUCCESS);
      await Promise.all([metrics.shutdown(), logs.shutdown()]);
    } finally {
      disk.release();
      vi.restoreAllMocks();
      await removeDir(dir);
    }
  });

  test('a bad variable value is warned once for a group of three exporters', async () => {
    process.env.OTEL_EXPORTER_S3_MAX_BATCH_BYTES = '8MB';
    const warnings: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => {
      warnings.push(String(warning));
    });
    try {
      const s3Exporters = group(new ScriptedS3());
      const exporters = [
        s3Exporters.metricExporter(),
        s3Exporters.spanExporter(),
        s3Exporters.logRecordExporter(),
      ];
      await Promise.all(exporters.map((exporter) => exporter.shutdown()));
    } finally {
      spy.mockRestore();
    }
    expect(warnings.filter((w) => w.includes('OTEL_EXPORTER_S3_MAX_BATCH_BYTES'))).toEqual([
      expect.stringMatching(/"8MB" .*; using the default instead$/),
    ]);
  });

  test('one exporter per signal: a second is refused, naming the signal', () => {
    const s3Exporters = group(new ScriptedS3());
    const first = s3Exporters.logRecordExporter();
    expect(() => s3Exporters.logRecordExporter()).toThrow(InvalidOptionError);
    expect(() => s3Exporters.logRecordExporter()).toThrow(
      /signal.*logs.*one logs exporter per S3Exporters/,
    );
    void first.shutdown();
  });

  test('a variable for one signal cannot move its exporter off the group connection', () => {
    process.env.OTEL_EXPORTER_S3_TRACES_BUCKET = 'elsewhere';
    const s3Exporters = group(new ScriptedS3());
    expect(() => s3Exporters.spanExporter()).toThrow(
      /bucket.*elsewhere.*the same value for every exporter of an S3Exporters \(unit\)/,
    );
  });

  test('a refused exporter leaves its spool directory: asked again at once, the signal gets it', async () => {
    const dir = await makeTempDir('otel-s3-group-refused-');
    try {
      const s3 = new ScriptedS3();
      const s3Exporters = group(s3, { spoolDir: dir });
      process.env.OTEL_EXPORTER_S3_TRACES_BUCKET = 'elsewhere';
      expect(() => s3Exporters.spanExporter()).toThrow(/OTEL_EXPORTER_S3_TRACES_BUCKET/);
      delete process.env.OTEL_EXPORTER_S3_TRACES_BUCKET; // the configuration fixed
      // Before: SpoolLockedError, spoolDir/traces claimed by the refused one until its shutdown.
      const spans = s3Exporters.spanExporter();
      await waitFor(() => spans.stats().spool?.state === 'active', 5_000, 'the spool opened');
      expect((await exportTagged(TRACES, spans, 3, 1)).code).toBe(ExportResultCode.SUCCESS);
      await s3Exporters.forceFlush();
      expect(spans.stats().spool?.written).toBe(1);
      expect([...s3.stored.keys()]).toEqual([
        expect.stringMatching(/\/traces_[0-9a-f-]{36}\.json$/),
      ]);
      await spans.shutdown();
    } finally {
      await removeDir(dir);
    }
  });

  test("a group's option given to one signal's exporter, or a signal's variable for an upload header, is refused", () => {
    const s3Exporters = group(new ScriptedS3());
    // Before: taken and ignored (tags, credentials), or a second spool made (spoolDir).
    for (const [name, value] of [
      ['spoolDir', '/tmp/elsewhere'],
      ['tags', { team: 'metrics' }],
      ['credentials', { accessKeyId: 'a', secretAccessKey: 'b' }],
      ['prefix', 'other'],
    ] as const) {
      expect(() => s3Exporters.metricExporter({ [name]: value } as never)).toThrow(
        new RegExp(`${name}.*an option of the whole group, set in new S3Exporters`),
      );
    }
    process.env.OTEL_EXPORTER_S3_TRACES_TAGS = 'team=traces';
    try {
      const error = thrown(() => s3Exporters.spanExporter(), InvalidOptionError);
      expect(error.variable).toBe('OTEL_EXPORTER_S3_TRACES_TAGS');
      expect(error.message).toMatch(/tags.*the same value for every exporter/);
    } finally {
      delete process.env.OTEL_EXPORTER_S3_TRACES_TAGS;
    }
    // Its own options, temporality for metrics, and any option left undefined, are taken.
    const metrics = s3Exporters.metricExporter({
      format: 'parquet',
      temporalityPreference: 'delta',
      spoolDir: undefined,
    } as never);
    void metrics.shutdown();
  });

  test("a signal's variable for a group option that code may not set per signal is refused, not applied", async () => {
    // Before: spanExporter({ prefix }) was refused, but OTEL_EXPORTER_S3_TRACES_PREFIX moved the
    // spans under another prefix than the group's startup check writes to (and the spool
    // settings likewise), without a word.
    for (const [variable, value] of [
      ['OTEL_EXPORTER_S3_TRACES_PREFIX', 'spans-only'],
      ['OTEL_EXPORTER_S3_TRACES_SPOOL_DIR', '/tmp/otel-s3-unused'],
      ['OTEL_EXPORTER_S3_TRACES_MAX_SPOOL_BYTES', '99999999'],
      ['OTEL_EXPORTER_S3_TRACES_SPOOL_TIMEOUT', '777'],
      ['OTEL_EXPORTER_S3_TRACES_JOURNAL_SYNC_INTERVAL', '0'],
    ] as const) {
      process.env[variable] = value;
      try {
        const s3Exporters = group(new ScriptedS3());
        const error = thrown(() => s3Exporters.spanExporter(), InvalidOptionError);
        expect(error.variable).toBe(variable);
        expect(error.message).toContain(`invalid environment variable ${variable}`);
        expect(error.message).toContain(value);
        expect(error.message).toMatch(/set it for the group, not for one signal/);
        // The other signals, whose variables are not set, are made as ever.
        await s3Exporters.logRecordExporter().shutdown();
      } finally {
        delete process.env[variable];
      }
    }
  });

  test('a retry variable for one signal is refused as the retry option, naming the variable', () => {
    process.env.OTEL_EXPORTER_S3_METRICS_RETRY_MAX_DELAY = '5000';
    const s3Exporters = group(new ScriptedS3());
    const error = thrown(() => s3Exporters.metricExporter(), InvalidOptionError);
    expect(error.variable).toBe('OTEL_EXPORTER_S3_METRICS_RETRY_MAX_DELAY');
    expect(error.message).toMatch(
      /invalid environment variable OTEL_EXPORTER_S3_METRICS_RETRY_MAX_DELAY \(option retry\.maxDelayMillis\): 5000/,
    );
  });

  test("metrics' own variables are not the group's: the metric exporter is the one refused, naming the variable", () => {
    process.env.OTEL_EXPORTER_S3_METRICS_MAX_BUFFERED_BYTES = '100000000';
    try {
      const s3Exporters = group(new ScriptedS3());
      // Before: the group took the metrics' value, so the span exporter (default) was refused.
      const spans = s3Exporters.spanExporter();
      expect(spans.stats().bufferedBytes).toBe(0);
      const error = thrown(() => s3Exporters.metricExporter(), InvalidOptionError);
      expect(error.variable).toBe('OTEL_EXPORTER_S3_METRICS_MAX_BUFFERED_BYTES');
      expect(String(error.message)).toMatch(/maxBufferedBytes.*100000000/);
      void spans.shutdown();
    } finally {
      delete process.env.OTEL_EXPORTER_S3_METRICS_MAX_BUFFERED_BYTES;
    }
  });
});
