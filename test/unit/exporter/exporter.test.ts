import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { type S3MetricExporterOptions, SELF_METRICS_SCOPE } from '../../../src/index.js';
import { MemoryBudget } from '../../../src/pipeline/budget.js';
import { captureDiag } from '../../support/diag-capture.js';
import { holdLibuvPool, turns } from '../../support/held-pool.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3, tagsIn } from '../../support/scripted-s3.js';
import { collectingProvider } from '../../support/service.js';
import {
  type AnyExporter,
  exportTagged,
  METRICS,
  SIGNALS,
  type SignalDriver,
  syntheticSpans,
  TRACES,
} from '../../support/signal-driver.js';
import { waitFor } from '../../support/wait.js';
import { builtInZstd } from '../../support/zstd.js';

const messages = captureDiag();

/** An exporter of `driver`'s signal on the scripted S3 `s3`, uncompressed, retrying within 20 ms. */
const exporterWith = (
  driver: SignalDriver,
  s3: ScriptedS3,
  options: Partial<S3MetricExporterOptions> = {},
): AnyExporter =>
  scriptedExporter(
    s3,
    { compression: 'none', retry: { initialDelayMillis: 1, maxDelayMillis: 20 }, ...options },
    driver,
  );

describe('S3MetricExporter lifecycle and accounting (scripted S3 client)', () => {
  const driver = METRICS;
  test('forceFlush() retries a batch that is backing off at once, not after its backoff', async () => {
    // Full jitter draws the wait from [0, 60 s]: pinned near the top, so it cannot fire by chance.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.99);
    try {
      const s3 = new ScriptedS3().script([{ kind: 'status', status: 503, name: 'SlowDown' }]);
      const exporter = exporterWith(driver, s3, {
        flushTimeoutMillis: 1_000,
        retry: { initialDelayMillis: 60_000, maxDelayMillis: 60_000 },
      });
      await exportTagged(driver, exporter, 4, 1);
      await exporter.forceFlush(); // seals; the attempt fails and backs off ~59 s: flush times out
      expect(s3.attempts).toHaveLength(1);
      const started = performance.now();
      await exporter.forceFlush(); // ... this flush sends it again now
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(s3.attempts).toHaveLength(2);
      expect(exporter.stats().batchesUploaded).toBe(1);
      await exporter.shutdown();
    } finally {
      random.mockRestore();
    }
  });

  test('a batch whose compression fails is stored uncompressed, under an uncompressed name', async () => {
    const body = await import('../../../src/body/body-maker.js');
    const real = body.createBodyMaker;
    const spy = vi.spyOn(body, 'createBodyMaker').mockImplementation((...args) => {
      const maker = real(...args);
      return {
        ...maker,
        make: async (request) => {
          throw new body.BodyMakerError('gzip compression failed: simulated', request);
        },
      };
    });
    try {
      const s3 = new ScriptedS3();
      // gzip keeps a batch's records until its body is made (zstd compresses them as they come).
      const exporter = exporterWith(driver, s3, { compression: 'gzip' });
      await exportTagged(driver, exporter, 6, 1);
      await exporter.forceFlush();
      await exporter.shutdown();
      expect(s3.attempts).toHaveLength(1);
      const [key] = [...s3.stored.keys()];
      expect(key).toMatch(/metrics_[0-9a-f-]{36}\.json$/);
      expect(s3.storedTags()).toEqual(Array(6).fill(1));
      expect(exporter.stats().pointsDropped).toBe(0);
      expect(
        messages.some((m) =>
          /uploading batch \d+ as its records, uncompressed \(\.json\)/.test(m.text),
        ),
      ).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  test.runIf(builtInZstd)(
    'a zstd frame that fails loses only its batch: counted as internal-error, logged; the next is stored',
    async () => {
      const body = await import('../../../src/body/body-maker.js');
      const real = body.createBodyMaker;
      const spy = vi.spyOn(body, 'createBodyMaker').mockImplementation((...args) => {
        const maker = real(...args);
        const openFrame = maker.openFrame;
        if (openFrame === undefined) throw new Error('expected records compressed as they come');
        let frames = 0;
        return {
          ...maker,
          openFrame: (framing, firstRecordBytes) => {
            const frame = openFrame(framing, firstRecordBytes);
            if (++frames > 1) return frame;
            return {
              append: (record, consumed) => frame.append(record, consumed),
              end: () => {
                void frame.end().catch(() => {});
                return Promise.reject(new Error('simulated zstd failure'));
              },
            };
          },
        };
      });
      try {
        const s3 = new ScriptedS3();
        const exporter = exporterWith(driver, s3, { compression: 'zstd' });
        await exportTagged(driver, exporter, 6, 1);
        await exporter.forceFlush();
        expect(s3.attempts).toHaveLength(0);
        expect(exporter.stats().pointsDroppedByReason['internal-error']).toBe(6);
        expect(messages.some((m) => /batch \d+: .*simulated zstd failure/.test(m.text))).toBe(true);
        await exportTagged(driver, exporter, 4, 2);
        await exporter.shutdown();
        expect([...s3.stored.keys()][0]).toMatch(/\.json\.zst$/);
        expect(s3.storedTags()).toEqual(Array(4).fill(2));
        expect(exporter.stats().pointsDropped).toBe(6);
      } finally {
        spy.mockRestore();
      }
    },
  );

  test('forceFlush() and shutdown() return at once when every pending batch is blocked on a fault waiting cannot fix', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'status', status: 404, name: 'NoSuchBucket' });
    const exporter = exporterWith(driver, s3, { flushTimeoutMillis: 5_000 });
    await exportTagged(driver, exporter, 4, 1);
    let started = performance.now();
    await exporter.forceFlush();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(exporter.stats().pendingBatches).toBe(1);
    expect(messages.some((m) => /blocked on a configuration fault/.test(m.text))).toBe(true);
    // Retried at the configuration-fault pace (10-20 ms here), which no flush hurries.
    await waitFor(
      () => (exporter.stats().uploadFailures['no-such-bucket'] ?? 0) >= 2,
      2_000,
      'a slow retry',
    );
    started = performance.now();
    await exporter.shutdown();
    expect(performance.now() - started).toBeLessThan(1_000);
    const stats = exporter.stats();
    expect(stats.uploadFailures['no-such-bucket']).toBeGreaterThanOrEqual(2);
    expect(stats.pointsDroppedByReason).toEqual({ shutdown: 4 });
    expect(messages.filter((m) => /the bucket does not exist/.test(m.text))).toHaveLength(1);
  });

  /**
   * The backoff tests' setup: each backoff half its bound (Math.random pinned for the test), an
   * S3 that answers `count` times `status` (`name`), then stores, and an exporter that seals and
   * sends its batch at the export, of 4 points it has just been given.
   */
  async function failingThen(
    count: number,
    status: number,
    name: string,
    options: { flushTimeoutMillis: number; initialDelayMillis: number },
  ) {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    onTestFinished(() => random.mockRestore());
    const failures = Array.from({ length: count }, () => ({
      kind: 'status' as const,
      status,
      name,
    }));
    const s3 = new ScriptedS3().script(failures, { kind: 'ok' });
    const exporter = exporterWith(driver, s3, {
      flushTimeoutMillis: options.flushTimeoutMillis,
      maxBatchBytes: 1,
      retry: { initialDelayMillis: options.initialDelayMillis, maxDelayMillis: 60_000 },
    });
    await exportTagged(driver, exporter, 4, 1);
    return { s3, exporter };
  }

  // A blip at shutdown: the batch's earlier failures had grown its backoff, and a failure
  // during the flush must not make it sit that long backoff out past the deadline.
  test('a batch failing again during forceFlush() backs off from the first backoff, not its grown one', async () => {
    const { s3, exporter } = await failingThen(4, 500, 'InternalError', {
      flushTimeoutMillis: 1_500,
      initialDelayMillis: 400,
    });
    // Attempts 1 and 2 fail: backoffs of 200 and 400 ms; the next would be 800, then 1,600.
    await waitFor(() => s3.attempts.length === 2, 2_000, 'two failed attempts');
    const started = performance.now();
    await exporter.forceFlush(); // attempt 3 now, 4 after 200 ms, 5 (stored) after 400 more
    expect(s3.attempts).toHaveLength(5);
    expect(exporter.stats().batchesUploaded).toBe(1);
    expect(performance.now() - started).toBeLessThan(1_500);
    await exporter.shutdown();
  });

  // shutdown() during a forceFlush() that has retried a while: the failures during that flush
  // are earlier failures too, and must not make a blip at shutdown sit out a grown backoff.
  test('a shutdown() during a forceFlush() backs off from the first backoff too', async () => {
    const { s3, exporter } = await failingThen(6, 500, 'InternalError', {
      flushTimeoutMillis: 4_000,
      initialDelayMillis: 200,
    });
    await waitFor(() => s3.attempts.length === 1, 2_000, 'one failed attempt');
    const flushed = exporter.forceFlush(); // attempts 2 to 5 back off 100, 200, 400 ms at most
    await waitFor(() => s3.attempts.length === 5, 3_000, 'five failed attempts');
    const started = performance.now();
    // Attempt 6 now, and it fails: from the first backoff, attempt 7 (stored) in 100 ms;
    // from the flush's start it would wait 800 ms or more.
    await exporter.shutdown();
    expect(s3.attempts).toHaveLength(7);
    expect(exporter.stats().batchesUploaded).toBe(1);
    expect(performance.now() - started).toBeLessThan(700); // 800 ms or more without the restart
    await flushed;
  });

  // Throttling is the server asking for less: a flush retries at once, as before, but a batch
  // throttled again keeps the backoff its failures grew, or a flush per invocation would ask
  // again at the first backoff's pace all through the throttling.
  test('a batch throttled again during forceFlush() keeps its grown backoff', async () => {
    const { s3, exporter } = await failingThen(4, 503, 'SlowDown', {
      flushTimeoutMillis: 1_500,
      initialDelayMillis: 400,
    });
    await waitFor(() => s3.attempts.length === 2, 2_000, 'two throttled attempts');
    await exporter.forceFlush(); // attempt 3 now, 4 after 800 ms, the next 1,600 ms later
    expect(s3.attempts).toHaveLength(4);
    expect(exporter.stats().batchesUploaded).toBe(0);
    await exporter.shutdown();
  });

  // A function-as-a-service flushes after every invocation: in an outage each flush ends at its
  // deadline, and none may leave its waiter behind to be checked on every later change.
  test('forceFlush() calls that end at their deadline leave no waiter behind', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const exporter = exporterWith(driver, s3, {
      flushTimeoutMillis: 30,
      requestTimeoutMillis: 60_000,
    });
    const stops: AbortSignal[] = [];
    const original = MemoryBudget.prototype.whenSettledOrBlocked;
    const wait = vi
      .spyOn(MemoryBudget.prototype, 'whenSettledOrBlocked')
      .mockImplementation(function (this: MemoryBudget, batches, futile, stop) {
        if (stop !== undefined) stops.push(stop);
        return original.call(this, batches, futile, stop);
      });
    try {
      await exportTagged(driver, exporter, 4, 1);
      for (let i = 0; i < 3; i++) await exporter.forceFlush();
      expect(stops).toHaveLength(3);
      expect(stops.every((s) => s.aborted)).toBe(true);
    } finally {
      wait.mockRestore();
    }
    await exporter.shutdown();
  });

  test('a transient failure is waited out: forceFlush() does not return early for it', async () => {
    const s3 = new ScriptedS3().script(
      [
        { kind: 'status', status: 404, name: 'NoSuchBucket' },
        { kind: 'status', status: 503, name: 'SlowDown' },
      ],
      { kind: 'ok' },
    );
    const exporter = exporterWith(driver, s3, { flushTimeoutMillis: 5_000 });
    await exportTagged(driver, exporter, 4, 1);
    await exporter.forceFlush(); // blocked after the first answer
    // The slow retry meets 503: no longer blocked, so this flush waits for the next retry.
    await waitFor(() => s3.attempts.length >= 2, 2_000, 'the slow retry');
    await exporter.forceFlush();
    expect(exporter.stats().batchesUploaded).toBe(1);
    await exporter.shutdown();
  });

  // Retry-After is a floor under the jittered backoff: a shutdown waits for the server's 1 s, not
  // a 30 s backoff, and stores the batch, instead of giving it up at once as a wait past its deadline.
  test("shutdown() retries at the server's Retry-After a batch whose backoff is longer", async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5); // backoffs of 30 s
    try {
      const s3 = new ScriptedS3().script([
        { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '1' } },
      ]);
      const exporter = exporterWith(driver, s3, {
        flushTimeoutMillis: 5_000,
        retry: { initialDelayMillis: 60_000, maxDelayMillis: 60_000 },
      });
      await exportTagged(driver, exporter, 4, 1);
      void exporter.forceFlush();
      await waitFor(() => s3.attempts.length === 1, 2_000, 'the 503');
      await new Promise((r) => setTimeout(r, 50));
      await exporter.shutdown();
      expect(s3.attempts).toHaveLength(2);
      expect(exporter.stats()).toMatchObject({ batchesUploaded: 1, pointsDropped: 0 });
    } finally {
      random.mockRestore();
    }
  });

  // The same for a batch that meets the 503 during the flush: the flush does not sit out the
  // rest of a backoff past its deadline with nothing sent, it retries at the server's time.
  test("forceFlush() retries at the server's Retry-After a batch that fails during it", async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5); // backoffs of 30 s
    try {
      const s3 = new ScriptedS3().script([
        { kind: 'status', status: 503, name: 'SlowDown', headers: { 'retry-after': '1' } },
      ]);
      const exporter = exporterWith(driver, s3, {
        flushTimeoutMillis: 5_000,
        retry: { initialDelayMillis: 60_000, maxDelayMillis: 60_000 },
      });
      await exportTagged(driver, exporter, 4, 1);
      const started = performance.now();
      await exporter.forceFlush();
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(s3.attempts).toHaveLength(2);
      expect(exporter.stats().batchesUploaded).toBe(1);
      await exporter.shutdown();
    } finally {
      random.mockRestore();
    }
  });

  test('the upload-duration histogram is in seconds: its sum is stats().uploadLatency.totalMillis / 1000', async () => {
    // Every upload answers after at least 40 ms: three uploads take at least 0.12 s in all.
    const s3 = new ScriptedS3().script([], { kind: 'delay', millis: 40 });
    const exporter = exporterWith(driver, s3);
    const { provider, collect } = collectingProvider();
    exporter.recordSelfMetrics(provider);
    for (let tag = 1; tag <= 3; tag++) {
      await exportTagged(driver, exporter, 2, tag);
      await exporter.forceFlush();
    }
    const latency = exporter.stats().uploadLatency;
    const self = (await collect()).scopeMetrics.find((sm) => sm.scope.name === SELF_METRICS_SCOPE);
    const histogram = self?.metrics.find(
      (m) => m.descriptor.name === 's3_exporter.upload.duration',
    );
    expect(histogram?.descriptor.unit).toBe('s');
    const point = histogram?.dataPoints[0]?.value as
      | { count: number; sum: number; max: number }
      | undefined;
    expect(latency.count).toBe(3);
    expect(point?.count).toBe(3);
    expect(point?.sum).toBeCloseTo(latency.totalMillis / 1000, 6);
    expect(point?.max).toBeCloseTo(latency.maxMillis / 1000, 6);
    // Against the delays the test chose, not only against stats(): seconds, not milliseconds.
    expect(point?.sum).toBeGreaterThanOrEqual(3 * 0.04 - 0.003);
    expect(point?.sum).toBeLessThan(30);
    await exporter.shutdown();
    await provider.shutdown();
  });
});

test('an export() of several resources is counted once, and a part that does not fit answers FAILED for the call', async () => {
  const s3 = new ScriptedS3();
  const exporter = exporterWith(TRACES, s3, { maxBufferedBytes: 1 << 20, maxBatchBytes: 1 << 20 });
  const of = (spans: ReadableSpan[], service: string) => {
    const resource = resourceFromAttributes({ 'service.name': service });
    return spans.map((span) => ({ ...span, resource }));
  };
  const one = (spans: ReadableSpan[]) =>
    new Promise<ExportResult>((resolve) => exporter.export(spans as never, resolve));
  // Three resources, one call: before, counted as three accepted exports.
  const three = [
    ...of(syntheticSpans(2, 1), 'a'),
    ...of(syntheticSpans(2, 2), 'b'),
    ...of(syntheticSpans(2, 3), 'c'),
  ];
  expect((await one(three)).code).toBe(ExportResultCode.SUCCESS);
  expect(exporter.stats()).toMatchObject({ exportsAccepted: 1, exportsRejected: 0 });
  // A part larger than the whole bound: the call is FAILED (counted once), the part that fit is
  // taken (and stored), the other counted as dropped at the bound.
  const [huge] = syntheticSpans(1, 5).map((span) => ({
    ...span,
    attributes: { tag: 5, x: 'x'.repeat(2 << 20) },
  }));
  const partial = [...of(syntheticSpans(1, 4), 'd'), ...of([huge as ReadableSpan], 'e')];
  expect((await one(partial)).code).toBe(ExportResultCode.FAILED);
  expect(exporter.stats()).toMatchObject({ exportsAccepted: 1, exportsRejected: 1 });
  expect(exporter.stats().pointsDroppedByReason['buffer-full']).toBe(1);
  await exporter.shutdown();
  expect([...s3.storedTags()].sort()).toEqual([1, 1, 2, 2, 3, 3, 4]);
});

for (const driver of SIGNALS) {
  test.runIf(builtInZstd)(
    `${driver.signal}: an object's zstd window holds two of its exports where exports repeat (metrics), 256 KiB otherwise`,
    async () => {
      const s3 = new ScriptedS3();
      const exporter = exporterWith(driver, s3, { compression: 'zstd' });
      // About 150-400 KB a record: two of them fit in 512 KiB or 1 MiB, not in 256 KiB.
      await exportTagged(driver, exporter, 1_500, 1);
      await exportTagged(driver, exporter, 1_500, 2);
      await exporter.shutdown();
      const [body] = [...s3.stored.values()];
      if (body === undefined) throw new Error('nothing stored');
      // The window of the frame, as RFC 8878 (3.1.1.1.2) has it in the frame header.
      expect(body.readUInt32LE(0)).toBe(0xfd2fb528);
      expect((body[4] ?? 0) & 0x20).toBe(0);
      const w = body[5] ?? 0;
      const window = 2 ** (10 + (w >> 3)) * (1 + (w & 7) / 8);
      if (driver === METRICS) expect(window).toBeGreaterThanOrEqual(512 * 1024);
      else expect(window).toBe(256 * 1024);
    },
  );

  describe(`${driver.signal}: the guarantees of every signal (scripted S3 client)`, () => {
    /** An exporter with 300 ms deadlines on an S3 that never answers, holding one export. */
    async function holdingOneExport() {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const exporter = exporterWith(driver, s3, {
        flushTimeoutMillis: 300,
        requestTimeoutMillis: 60_000,
      });
      await exportTagged(driver, exporter, 10, 1);
      return { s3, exporter };
    }

    test('export() acknowledges from the buffer without waiting for S3', async () => {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const exporter = exporterWith(driver, s3, { flushTimeoutMillis: 200, maxBatchBytes: 1 });
      // Each export fills a batch (maxBatchBytes 1): the first one's upload hangs in flight ...
      expect((await exportTagged(driver, exporter, 10, 1)).code).toBe(ExportResultCode.SUCCESS);
      await waitFor(() => s3.attempts.length === 1, 5_000, 'an upload in flight');
      // ... and the next exports are acknowledged while it hangs, and while theirs do.
      const started = performance.now();
      for (let tag = 2; tag <= 5; tag++) {
        expect((await exportTagged(driver, exporter, 10, tag)).code).toBe(ExportResultCode.SUCCESS);
      }
      // Waiting for the flush deadline would take 4 × 200 ms; for the hung upload, forever.
      expect(performance.now() - started).toBeLessThan(400);
      expect(s3.attempts.every((a) => a.outcome === 'error')).toBe(true); // none answered yet
      expect(exporter.stats().exportsAccepted).toBe(5);
      await exporter.shutdown();
    });

    test('forceFlush() resolves by its deadline while S3 never answers, and warns', async () => {
      const { exporter } = await holdingOneExport();
      const started = performance.now();
      await expect(exporter.forceFlush()).resolves.toBeUndefined();
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(300 + 500);
      expect(
        messages.some((m) => m.level === 'warn' && /forceFlush\(\) deadline/.test(m.text)),
      ).toBe(true);
      await exporter.shutdown();
    });

    test('shutdown() settles by its deadline while S3 never answers, aborts the request and counts the loss', async () => {
      const { s3, exporter } = await holdingOneExport();
      await exporter.forceFlush(); // sealed and sent: the request hangs
      await waitFor(() => s3.attempts.length === 1, 5_000, 'the request in flight');
      const started = performance.now();
      await exporter.shutdown();
      expect(performance.now() - started).toBeLessThan(300 + 500);
      expect(s3.attempts.at(-1)?.outcome).toBe('aborted');
      const stats = exporter.stats();
      expect(stats.batchesDropped).toBe(1);
      expect(stats.pointsDropped).toBe(10);
      expect(stats.pointsDroppedByReason).toEqual({ shutdown: 10 });
      expect(stats.bufferedBytes).toBe(0);
      expect(
        messages.some((m) => m.level === 'error' && /shutdown\(\) deadline/.test(m.text)),
      ).toBe(true);
    });

    test('after shutdown: export() answers FAILED without throwing, shutdown() and forceFlush() resolve', async () => {
      const s3 = new ScriptedS3();
      const exporter = exporterWith(driver, s3);
      await exporter.shutdown();
      const result = await exportTagged(driver, exporter, 1, 1);
      expect(result.code).toBe(ExportResultCode.FAILED);
      expect(result.error?.message).toMatch(/after shutdown/);
      await expect(exporter.shutdown()).resolves.toBeUndefined();
      await expect(exporter.forceFlush()).resolves.toBeUndefined();
      expect(exporter.stats().exportsRejected).toBe(1);
    });

    test('a retry reuses the key and the bytes, with If-None-Match, and is counted', async () => {
      const s3 = new ScriptedS3().script([
        { kind: 'status', status: 503, name: 'SlowDown' },
        { kind: 'status', status: 500, name: 'InternalError' },
      ]);
      const exporter = exporterWith(driver, s3);
      await exportTagged(driver, exporter, 5, 1);
      await exporter.forceFlush();
      expect(s3.attempts).toHaveLength(3);
      const [first, ...rest] = s3.attempts;
      for (const attempt of rest) {
        expect(attempt.key).toBe(first?.key);
        expect(attempt.body.equals(first?.body ?? Buffer.alloc(0))).toBe(true);
      }
      expect(s3.attempts.every((a) => a.ifNoneMatch === '*')).toBe(true);
      const stats = exporter.stats();
      expect(stats.retries).toBe(2);
      expect(stats.uploadAttempts).toBe(3);
      expect(stats.uploadFailures).toEqual({ throttled: 1, server: 1 });
      expect(stats.batchesUploaded).toBe(1);
      await exporter.shutdown();
    });

    test('a 412 from the conditional write counts as stored (an earlier attempt landed)', async () => {
      // The first attempt lands but its answer never comes back; the retry is answered 412.
      const s3 = new ScriptedS3().script([{ kind: 'store-then-hang' }]);
      const exporter = exporterWith(driver, s3, { requestTimeoutMillis: 100 });
      await exportTagged(driver, exporter, 3, 7);
      await exporter.forceFlush();
      expect(s3.attempts.map((a) => a.outcome)).toEqual(['aborted', 'exists']);
      expect(s3.attempts[0]?.key).toBe(s3.attempts[1]?.key);
      expect(s3.stored.size).toBe(1);
      const stats = exporter.stats();
      expect(stats.batchesUploaded).toBe(1);
      expect(stats.uploadFailures).toEqual({ timeout: 1 });
      expect(stats.pointsDropped).toBe(0);
      await exporter.shutdown();
    });

    test('a non-retryable rejection drops the batch, counted and logged', async () => {
      // 413: never about the If-None-Match header (a 400 or 501 is first tried without it).
      const s3 = new ScriptedS3().script([{ kind: 'status', status: 413, name: 'EntityTooLarge' }]);
      const exporter = exporterWith(driver, s3);
      await exportTagged(driver, exporter, 4, 1);
      await exporter.forceFlush();
      const stats = exporter.stats();
      expect(stats.pointsDroppedByReason).toEqual({ rejected: 4 });
      expect(stats.uploadFailures).toEqual({ 'entity-too-large': 1 });
      expect(messages.some((m) => m.level === 'error' && /rejected/.test(m.text))).toBe(true);
      await exporter.shutdown();
    });

    test('bytes held never exceed maxBufferedBytes; the oldest batches are dropped first and counted', async () => {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const maxBufferedBytes = 64 * 1024;
      const exporter = exporterWith(driver, s3, {
        maxBatchBytes: 8 * 1024,
        maxBufferedBytes,
        uploadConcurrency: 1,
        flushTimeoutMillis: 5_000,
        requestTimeoutMillis: 1_000,
        retry: { initialDelayMillis: 1, maxDelayMillis: 1 },
      });
      let peak = 0;
      for (let tag = 1; tag <= 200; tag++) {
        const result = await exportTagged(driver, exporter, 20, tag);
        expect(result.code).toBe(ExportResultCode.SUCCESS);
        peak = Math.max(peak, exporter.stats().bufferedBytes);
      }
      expect(peak).toBeLessThanOrEqual(maxBufferedBytes);
      expect(peak).toBeGreaterThan(maxBufferedBytes / 2);
      const stats = exporter.stats();
      expect(stats.batchesDropped).toBeGreaterThan(10);
      expect(stats.pointsDroppedByReason['buffer-full']).toBe(stats.pointsDropped);
      expect(messages.filter((m) => /maxBufferedBytes/.test(m.text))).toHaveLength(1);
      // The oldest go first. The first batch was taken for upload (busy, not droppable) before
      // memory ran out; with S3 back, what is still pending is stored. So what is stored must be
      // that first batch (tags from 1) and then the newest exports, every one, up to 200: the
      // dropped ones are exactly the run between them.
      s3.script([], { kind: 'ok' });
      await exporter.forceFlush(); // the hung request is aborted at its deadline and retried
      await exporter.shutdown();
      const final = exporter.stats();
      expect(final.pointsDroppedByReason).toEqual({ 'buffer-full': stats.pointsDropped });
      const stored = [...new Set(s3.storedTags())];
      const gap = stored.findIndex((t, i) => i > 0 && t !== (stored[i - 1] as number) + 1);
      const [head, tail] = [stored.slice(0, gap), stored.slice(gap)];
      const first = s3.attempts[0];
      expect(head).toEqual([...new Set(tagsIn(first?.key ?? '', first?.body ?? Buffer.alloc(0)))]);
      expect(head[0]).toBe(1);
      expect(tail.at(-1)).toBe(200);
      expect(tail).toEqual(Array.from({ length: tail.length }, (_, i) => (tail[0] as number) + i));
      const droppedTags = (tail[0] as number) - (head.at(-1) as number) - 1;
      expect(final.pointsDropped).toBe(droppedTags * 20);
      expect(final.pointsUploaded + final.pointsDropped).toBe(200 * 20);
    });

    test.each([
      ['landed but got no answer', { kind: 'store-then-hang' }],
      ['were refused a connection', { kind: 'network', code: 'ECONNREFUSED' }],
    ] as const)(
      'batches dropped at the memory bound after attempts that %s: pointsDroppedMaybeStored counts what S3 may hold',
      async (_, behaviour) => {
        const s3 = new ScriptedS3().script([], behaviour);
        const exporter = exporterWith(driver, s3, {
          maxBatchBytes: 8 * 1024,
          maxBufferedBytes: 64 * 1024,
          uploadConcurrency: 1,
          requestTimeoutMillis: 20,
          retry: { initialDelayMillis: 1_000, maxDelayMillis: 1_000 },
        });
        onTestFinished(() => exporter.shutdown());
        for (let tag = 1; tag <= 200; tag++) {
          await exportTagged(driver, exporter, 20, tag);
          await new Promise((resolve) => setTimeout(resolve, 2)); // attempts go out meanwhile
        }
        expect(exporter.stats().pointsDroppedByReason['buffer-full']).toBeGreaterThan(0);
        s3.script([], { kind: 'ok' });
        await exporter.forceFlush();
        await exporter.shutdown();
        const final = exporter.stats();
        // What S3 holds, read from its objects, beyond what the exporter counts as stored: the
        // batches it gave up whose attempt had landed all the same.
        const landedButDropped = s3.storedTags().length - final.pointsUploaded;
        if (behaviour.kind === 'store-then-hang') expect(landedButDropped).toBeGreaterThan(0);
        else expect(landedButDropped).toBe(0);
        expect(final.pointsDroppedMaybeStored).toBe(landedButDropped);
        expect(final.pointsUploaded + final.pointsDropped).toBe(200 * 20);
      },
    );

    test('a shutdown that gives up a batch whose attempt landed unanswered says S3 may hold it', async () => {
      const s3 = new ScriptedS3().script([], { kind: 'store-then-hang' });
      const exporter = exporterWith(driver, s3, {
        requestTimeoutMillis: 60_000,
        flushTimeoutMillis: 200,
      });
      const { provider, collect } = collectingProvider();
      exporter.recordSelfMetrics(provider);
      await exportTagged(driver, exporter, 20, 1);
      await exporter.shutdown();
      expect(s3.storedTags()).toHaveLength(20); // the object is in S3
      expect(exporter.stats().pointsDroppedMaybeStored).toBe(20);
      // Its own counter beside the drops by reason, which count these 20 too.
      const self = (await collect()).scopeMetrics.find(
        (sm) => sm.scope.name === SELF_METRICS_SCOPE,
      );
      const maybe = self?.metrics.find(
        (m) => m.descriptor.name === 's3_exporter.data_points.maybe_stored',
      );
      expect(maybe?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
        [{ signal: driver.signal }, 20],
      ]);
      await provider.shutdown();
      expect(messages.map((m) => m.text)).toContainEqual(
        expect.stringMatching(
          /shutdown\(\) deadline of 200 ms passed: dropped 1 batch \(.*\) not yet stored \(S3 may hold it after all: an attempt got no answer\)/,
        ),
      );
    });

    // A storageClass the server does not take (Ceph RGW: 400 InvalidArgument): the batch is
    // dropped as rejected for good while its attempt is still being ended, and was counted as
    // "S3 may hold it", though an HTTP answer says the write did not land.
    test('a batch S3 rejects for good is not counted in pointsDroppedMaybeStored', async () => {
      const s3 = new ScriptedS3().script([], {
        kind: 'status',
        status: 400,
        name: 'InvalidArgument',
      });
      const exporter = exporterWith(driver, s3, { conditionalWrites: false });
      onTestFinished(() => exporter.shutdown());
      await exportTagged(driver, exporter, 20, 1);
      await exporter.forceFlush();
      const stats = exporter.stats();
      expect(s3.attempts.map((a) => a.outcome)).toEqual(['error']);
      expect(s3.storedTags()).toHaveLength(0);
      expect(stats.pointsDroppedByReason).toEqual({ rejected: 20 });
      expect(stats.pointsDroppedMaybeStored).toBe(0);
    });

    test('memory full: dropping old batches and rejecting an export are two conditions, each reported once', async () => {
      const s3 = new ScriptedS3().script([], { kind: 'hang' });
      const exporter = exporterWith(driver, s3, {
        maxBatchBytes: 2 * 1024,
        maxBufferedBytes: 8 * 1024,
        uploadConcurrency: 1,
        requestTimeoutMillis: 60_000,
        flushTimeoutMillis: 200,
      });
      for (let tag = 1; tag <= 60; tag++) {
        expect((await exportTagged(driver, exporter, 10, tag)).code).toBe(ExportResultCode.SUCCESS);
      }
      const dropped = exporter.stats().pointsDroppedByReason['buffer-full'] ?? 0;
      expect(dropped).toBeGreaterThan(0); // old batches dropped: the first condition
      for (const tag of [100, 101]) {
        // Larger than the whole bound: even with every idle batch dropped it cannot fit.
        expect((await exportTagged(driver, exporter, 2_000, tag)).code).toBe(
          ExportResultCode.FAILED,
        );
      }
      // Both exports' points are lost, and the idle batches dropped while trying to fit them.
      expect(exporter.stats().exportsRejected).toBe(2);
      expect(exporter.stats().pointsDroppedByReason['buffer-full']).toBeGreaterThanOrEqual(
        dropped + 2 * 2_000,
      );
      const dropping = messages.filter((m) => /dropping the oldest batches/.test(m.text));
      // Each larger than the whole bound: said so once, with what to change.
      const rejecting = messages.filter((m) =>
        /is larger than maxBufferedBytes \(8192\) and can never be taken/.test(m.text),
      );
      expect(dropping).toHaveLength(1);
      expect(rejecting).toHaveLength(1);
      await exporter.shutdown();
    });

    test('an export larger than maxBufferedBytes is answered FAILED and counted', async () => {
      const s3 = new ScriptedS3();
      const exporter = exporterWith(driver, s3, { maxBatchBytes: 1024, maxBufferedBytes: 2048 });
      const result = await exportTagged(driver, exporter, 200, 1);
      expect(result.code).toBe(ExportResultCode.FAILED);
      expect(result.error?.message).toMatch(/maxBufferedBytes/);
      expect(exporter.stats().pointsDroppedByReason).toEqual({ 'buffer-full': 200 });
      await exporter.shutdown();
    });

    // gzip keeps a batch's records until its body is made (a sealed batch sharing the open one's
    // array would take in later exports); zstd compresses them as they come.
    test.each(['gzip', 'zstd'] as const)(
      'exports that arrive while batches are sealed, compressed (%s) and uploaded are all stored once',
      async (compression) => {
        const s3 = new ScriptedS3().script([], { kind: 'delay', millis: 20 });
        const exporter = exporterWith(driver, s3, {
          compression,
          maxBatchBytes: 4 * 1024,
          uploadConcurrency: 2,
        });
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) => exportTagged(driver, exporter, 5, i + 1)),
        );
        expect(results.every((r) => r.code === ExportResultCode.SUCCESS)).toBe(true);
        // More exports while the first batches are in flight.
        const more = Array.from({ length: 50 }, (_, i) =>
          exportTagged(driver, exporter, 5, i + 101),
        );
        await exporter.forceFlush();
        await Promise.all(more);
        await exporter.shutdown();
        const expected = Array.from({ length: 150 }, (_, i) => i + 1).flatMap((t) =>
          Array(5).fill(t),
        );
        expect(s3.storedTags()).toEqual(expected); // sorted
        expect(exporter.stats().batchesSealed).toBeGreaterThan(5);
        expect(new Set(s3.attempts.map((a) => a.key)).size).toBe(s3.stored.size);
      },
    );

    // gzip keeps a batch's records until it is sealed, then compresses them on the pool; zstd
    // (node:zlib) compresses them on the pool as they come, and ends the frame when sealed.
    test.runIf(process.platform === 'linux').each(builtInZstd ? ['gzip', 'zstd'] : ['gzip'])(
      "a batch's body is made off the event loop (%s): while libuv's pool is held, it waits and exports are answered",
      async (compression) => {
        const s3 = new ScriptedS3();
        const exporter = exporterWith(driver, s3, {
          compression: compression as 'gzip' | 'zstd',
        });
        await exportTagged(driver, exporter, 50, 1);
        // A batch is uploaded once its body is made (with zstd, once its frame has ended).
        const pool = await holdLibuvPool();
        try {
          const flushed = exporter.forceFlush();
          for (let tag = 2; tag <= 5; tag++) {
            expect((await exportTagged(driver, exporter, 5, tag)).code).toBe(
              ExportResultCode.SUCCESS,
            );
          }
          // Made on the event loop, the body would be made within these turns.
          await turns(200);
          expect(s3.attempts).toHaveLength(0);
          await pool.release();
          await flushed;
          expect(s3.attempts).toHaveLength(1);
        } finally {
          await pool.release();
        }
        expect(s3.storedTags()).toEqual(Array(50).fill(1));
        await exporter.shutdown();
        expect(s3.storedTags()).toHaveLength(50 + 4 * 5);
      },
    );

    test('recordSelfMetrics() reports stats() as OpenTelemetry metrics, each point with its signal', async () => {
      const s3 = new ScriptedS3().script([{ kind: 'status', status: 503, name: 'SlowDown' }]);
      const exporter = exporterWith(driver, s3);
      const { provider, collect } = collectingProvider();
      const stop = exporter.recordSelfMetrics(provider);
      await exportTagged(driver, exporter, 6, 1);
      await exporter.forceFlush();
      const rm = await collect();
      const self = rm.scopeMetrics.find((sm) => sm.scope.name === SELF_METRICS_SCOPE);
      // Each point names the exporter's signal.
      const points = self?.metrics.flatMap((m) => m.dataPoints.map((p) => p.attributes)) ?? [];
      expect(points.length).toBeGreaterThan(10);
      expect(new Set(points.map((a) => a.signal))).toEqual(new Set([driver.signal]));
      const value = (name: string, attributes: Record<string, string> = {}) =>
        self?.metrics
          .find((m) => m.descriptor.name === name)
          ?.dataPoints.find((p) =>
            Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
          )?.value;
      expect(value('s3_exporter.batches', { outcome: 'uploaded' })).toBe(1);
      expect(value('s3_exporter.data_points', { outcome: 'uploaded' })).toBe(6);
      expect(value('s3_exporter.upload.attempts')).toBe(2);
      expect(value('s3_exporter.upload.failures', { reason: 'throttled' })).toBe(1);
      expect(value('s3_exporter.exports', { result: 'accepted' })).toBe(1);
      expect(value('s3_exporter.buffered.bytes')).toBe(0);
      expect(value('s3_exporter.upload.duration')).toMatchObject({ count: 1 });
      // After stop() the callback no longer runs: a later upload does not show.
      stop();
      await exportTagged(driver, exporter, 6, 2);
      await exporter.forceFlush();
      expect(exporter.stats().batchesUploaded).toBe(2);
      const after = (await collect()).scopeMetrics.find(
        (sm) => sm.scope.name === SELF_METRICS_SCOPE,
      );
      const batches = after?.metrics.find((m) => m.descriptor.name === 's3_exporter.batches');
      expect(batches?.dataPoints.find((p) => p.attributes.outcome === 'uploaded')?.value ?? 1).toBe(
        1,
      );
      await exporter.shutdown();
      await provider.shutdown();
    });
  });
}
