import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test, vi } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import { dataPointRows } from '../../src/reader.js';
import * as backoff from '../../src/s3/backoff.js';

const realRetryDelay = backoff.retryDelay;

import { captureDiag } from '../support/diag-capture.js';
import type { Fault, FaultProxy } from '../support/fault-proxy.js';
import {
  connection,
  decodeStored,
  describeS3,
  listAndFetch,
  proxyForTest,
  storedSequence as storedSequenceIn,
  withS3,
} from '../support/s3.js';
import { sequencedService } from '../support/service.js';
import {
  type AnyExporter,
  expectedItems,
  exportTagged,
  LOGS,
  SIGNALS,
  TRACES,
  taggedItems,
} from '../support/signal-driver.js';
import { waitFor } from '../support/wait.js';

const logged = captureDiag();

const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describeS3('fault matrix: a real S3 server behind a fault-injecting proxy', () => {
  let client: S3Client;
  let bucket: string;

  withS3('faults', (s) => ({ client, bucket } = s));

  // Each test has a fault proxy of its own (proxyForTest) and a prefix of its own in the shared
  // bucket, so tests can run at once. The first group does (test.concurrent): those cases bound
  // durations from below if at all, which a loaded machine cannot break. The second group runs one
  // test at a time: its cases read the diag log (one logger for the whole process, emptied
  // before each test), spy on a module, or bound a duration from above.
  let made = 0;
  const uniquePrefix = (label: string) => `faults/${label}-${++made}-${Date.now()}`;

  /** The options of these tests' exporters: through `proxy`, under `prefix`. */
  const viaProxy = (proxy: FaultProxy, prefix: string): S3MetricExporterOptions => ({
    bucket,
    prefix,
    ...connection(),
    endpoint: proxy.endpoint,
    maxBatchAgeMillis: 50,
    requestTimeoutMillis: 1_000,
    flushTimeoutMillis: 15_000,
    retry: { initialDelayMillis: 50, maxDelayMillis: 500 },
  });

  function exporterVia(
    proxy: FaultProxy,
    prefix: string,
    options: Partial<S3MetricExporterOptions> = {},
  ): S3MetricExporter {
    return new S3MetricExporter({ ...viaProxy(proxy, prefix), ...options });
  }

  /** Sequence numbers of every stored collection under `prefix`, sorted. */
  const storedSequence = (prefix: string) => storedSequenceIn(client, bucket, prefix);

  const putsUnder = (proxy: FaultProxy, prefix: string) =>
    proxy.uploadAttempts().filter((a) => a.key.startsWith(`${prefix}/`));

  /**
   * Lets the fault bite (at least 3 failed uploads for `reason`), lifts it, flushes and shuts the
   * exporter down; returns its stats as they were before the shutdown.
   */
  async function recoverAfterFailures(proxy: FaultProxy, exporter: AnyExporter, reason: string) {
    await waitFor(
      () => (exporter.stats().uploadFailures[reason] ?? 0) >= 3,
      10_000,
      `3 ${reason} failures`,
    );
    await proxy.set({ kind: 'pass' });
    await exporter.forceFlush();
    const stats = exporter.stats();
    await exporter.shutdown();
    return stats;
  }

  /** Calls forceFlush() every `everyMillis` (after it returns) for `forMillis`. */
  async function flushOften(exporter: AnyExporter, everyMillis: number, forMillis: number) {
    const until = performance.now() + forMillis;
    while (performance.now() < until) {
      await exporter.forceFlush();
      await new Promise((r) => setTimeout(r, everyMillis));
    }
  }

  /** Milliseconds between consecutive upload attempts under `prefix`, as the server saw them. */
  const gapsUnder = (proxy: FaultProxy, prefix: string) => {
    const times = putsUnder(proxy, prefix).map((a) => a.at);
    return times.slice(1).map((t, i) => t - (times[i] as number));
  };

  // Flushing often (the README's advice for spans in a function) must not hurry the retries a
  // server paced with Retry-After, nor those at the configuration-fault pace.
  const paced: { name: string; fault: Fault; leastGap: number }[] = [
    {
      name: "503 SlowDown with Retry-After: 2, retried no sooner than the server's 2 s",
      fault: { kind: 'status', status: 503, code: 'SlowDown', retryAfter: '2' },
      leastGap: 2_000,
    },
    {
      name: '403 AccessDenied, retried at about retry.maxDelayMillis (2 s), at least half of it',
      fault: { kind: 'status', status: 403, code: 'AccessDenied' },
      leastGap: 1_000,
    },
  ];
  for (const { name, fault, leastGap } of paced) {
    test.concurrent(`forceFlush() every 100 ms, ${name}`, async ({ onTestFinished }) => {
      const prefix = uniquePrefix(`flush-often-${fault.kind}`);
      const proxy = await proxyForTest(onTestFinished);
      const exporter = exporterVia(proxy, prefix, {
        flushTimeoutMillis: 200,
        // An answer the client never reads (a stall of this process past the suite's 1 s
        // timeout) is a timeout, retried at a flush's pace: the server's time must be heard.
        requestTimeoutMillis: 10_000,
        retry: { initialDelayMillis: 20, maxDelayMillis: 2_000 },
      });
      const service = sequencedService(exporter);
      await proxy.set(fault);
      await service.exportCollections(1);
      await flushOften(exporter, 100, 3_000);
      const attempts = putsUnder(proxy, prefix).length;
      await proxy.set({ kind: 'pass' });
      await waitFor(() => exporter.stats().pendingBatches === 0, 10_000, 'the batch stored');
      await exporter.shutdown();
      await service.shutdown();

      // 3 s of flushes: the first attempt and at most one retry per 2 s (1 s for the 403).
      expect(
        attempts,
        `attempts in 3 s: ${gapsUnder(proxy, prefix).join(', ')} ms apart`,
      ).toBeLessThanOrEqual(Math.ceil(3_000 / leastGap) + 1);
      for (const gap of gapsUnder(proxy, prefix)) expect(gap).toBeGreaterThanOrEqual(leastGap - 50);
      expect((await storedSequence(prefix)).seqs).toEqual([1]);
    });
  }

  test.concurrent("backoff honours the server's Retry-After", async ({ onTestFinished }) => {
    const prefix = uniquePrefix('retry-after');
    const proxy = await proxyForTest(onTestFinished);
    const exporter = exporterVia(proxy, prefix, {
      retry: { initialDelayMillis: 20, maxDelayMillis: 100 },
    });
    const service = sequencedService(exporter);
    await proxy.set({ kind: 'status', status: 503, code: 'SlowDown', retryAfter: '1' });
    await service.exportCollections(1);
    await waitFor(() => putsUnder(proxy, prefix).length >= 3, 10_000, '3 attempts');
    await proxy.set({ kind: 'pass' });
    await exporter.forceFlush();
    await exporter.shutdown();
    await service.shutdown();
    const times = putsUnder(proxy, prefix).map((a) => a.at);
    // Without Retry-After the gaps would be at most ~100 ms; the server asked for 1 s.
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(950);
    expect((times[2] as number) - (times[1] as number)).toBeGreaterThanOrEqual(950);
    expect((await storedSequence(prefix)).seqs).toEqual([1]);
  });

  // One at a time: no retry is expected, so no upload may overrun requestTimeoutMillis (1 s), which
  // the other cases' load on the machine could make a 150 ms-delayed upload do.
  test('exports that arrive while batches are sealed, compressed and uploaded (slowly) are all stored once', async ({
    onTestFinished,
  }) => {
    const prefix = uniquePrefix('concurrent');
    const proxy = await proxyForTest(onTestFinished);
    const exporter = exporterVia(proxy, prefix, { maxBatchBytes: 4096, uploadConcurrency: 2 });
    const service = sequencedService(exporter);
    await proxy.set({ kind: 'delay', millis: 150 });
    await service.exportCollections(40);
    await exporter.forceFlush();
    await exporter.shutdown();
    await service.shutdown();
    const stats = exporter.stats();
    expect(stats.batchesSealed).toBeGreaterThan(3);
    expect(stats.retries).toBe(0);
    expect((await storedSequence(prefix)).seqs).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
  });

  const transient: {
    name: string;
    fault: Fault;
    reason: string;
    options?: Partial<S3MetricExporterOptions>;
  }[] = [
    { name: 'refused connections', fault: { kind: 'refuse' }, reason: 'network' },
    { name: 'connections reset mid-request', fault: { kind: 'reset' }, reason: 'network' },
    {
      name: '500 InternalError',
      fault: { kind: 'status', status: 500, code: 'InternalError' },
      reason: 'server',
    },
    {
      name: '503 SlowDown with Retry-After',
      fault: { kind: 'status', status: 503, code: 'SlowDown', retryAfter: '1' },
      reason: 'throttled',
    },
    // Three timed-out attempts take three request timeouts: half a second each is enough.
    {
      name: 'a slow link (uploads time out)',
      fault: { kind: 'throttle', bytesPerSecond: 200 },
      reason: 'timeout',
      options: { requestTimeoutMillis: 500 },
    },
    {
      name: 'a black hole that later recovers',
      fault: { kind: 'blackhole' },
      reason: 'timeout',
      options: { requestTimeoutMillis: 500 },
    },
    {
      name: 'lost responses (the write landed)',
      fault: { kind: 'lose-response' },
      reason: 'network',
    },
  ];

  for (const { name, fault, reason, options } of transient) {
    test.concurrent(`${name}: after recovery every collection is stored exactly once, retries reuse their key`, async ({
      onTestFinished,
    }) => {
      const prefix = uniquePrefix(fault.kind);
      const proxy = await proxyForTest(onTestFinished);
      const exporter = exporterVia(proxy, prefix, options);
      const service = sequencedService(exporter);
      await proxy.set(fault);
      await service.exportCollections(6);
      // Let the fault bite: several failed attempts, for fault kinds where the proxy sees them.
      const stats = await recoverAfterFailures(proxy, exporter, reason);
      await service.shutdown();

      const { seqs, keys } = await storedSequence(prefix);
      expect(seqs).toEqual(Array.from({ length: service.count }, (_, i) => i + 1));
      expect(stats.pointsDropped).toBe(0);
      expect(stats.pendingBatches).toBe(0);
      expect(stats.retries).toBeGreaterThan(0);
      expect(stats.batchesUploaded).toBe(keys.length);
      // Every key S3 saw attempted is a stored key: retries never invented a new name.
      const attempted = putsUnder(proxy, prefix);
      expect(new Set(attempted.map((a) => a.key))).toEqual(new Set(keys));
      // A refused connection never reaches the proxy's HTTP layer, so only it records no attempt.
      if (fault.kind !== 'refuse') expect(attempted.length).toBeGreaterThan(keys.length);
      if (fault.kind === 'lose-response') {
        // The write landed but its answer was lost; the conditional retry found it there.
        expect(attempted.some((a) => a.outcome === 'upstream 412')).toBe(true);
      }
    });
  }

  // The same for spans and log records, under every transient fault.
  for (const driver of [TRACES, LOGS]) {
    for (const { name, fault, reason, options } of transient) {
      test.concurrent(`${driver.signal}, ${name}: after recovery every export is stored exactly once, retries reuse their key and bytes`, async ({
        onTestFinished,
      }) => {
        const prefix = uniquePrefix(`${driver.signal}-${fault.kind}`);
        const proxy = await proxyForTest(onTestFinished);
        const exporter = driver.exporter({ ...viaProxy(proxy, prefix), ...options });
        await proxy.set(fault);
        for (let tag = 1; tag <= 6; tag++) {
          expect((await exportTagged(driver, exporter, 10, tag)).code).toBe(0);
          await new Promise((r) => setTimeout(r, 60)); // older than maxBatchAgeMillis: sealed
        }
        const stats = await recoverAfterFailures(proxy, exporter, reason);

        const objects = await listAndFetch(client, bucket, `${prefix}/`);
        const items = objects.flatMap((o) => taggedItems(decodeStored(o))).sort();
        expect(items).toEqual(expectedItems([1, 2, 3, 4, 5, 6], 10).sort());
        expect(stats.pointsDropped).toBe(0);
        expect(stats.retries).toBeGreaterThan(0);
        expect(stats.batchesUploaded).toBe(objects.length);
        // Every attempt of a key carried If-None-Match and the bytes stored under it (the signed
        // payload hash of each attempt is the stored object's SHA-256).
        const stored = new Map(objects.map((o) => [o.key, sha256Hex(o.bytes)]));
        const attempted = putsUnder(proxy, prefix);
        expect(new Set(attempted.map((a) => a.key))).toEqual(new Set(stored.keys()));
        // A refused connection never reaches the proxy's HTTP layer, so only it records no attempt.
        if (fault.kind !== 'refuse') expect(attempted.length).toBeGreaterThan(objects.length);
        for (const attempt of attempted) {
          expect(attempt.ifNoneMatch, attempt.key).toBe('*');
          expect(attempt.headers['x-amz-content-sha256'], attempt.key).toBe(
            stored.get(attempt.key),
          );
        }
        if (fault.kind === 'lose-response') {
          expect(attempted.some((a) => a.outcome === 'upstream 412')).toBe(true);
        }
      });
    }
  }

  // One test at a time from here on (see above).

  test('backoff: each wait is drawn under the exponential full-jitter bound, grows, and is what S3 sees', async ({
    onTestFinished,
  }) => {
    const prefix = uniquePrefix('backoff');
    const proxy = await proxyForTest(onTestFinished);
    const initial = 40;
    const max = 640;
    // The waits the exporter draws, on its own clock (the schedule itself) ...
    const drawn: number[] = [];
    const spy = vi.spyOn(backoff, 'retryDelay').mockImplementation((...args) => {
      const delay = realRetryDelay(...args);
      drawn.push(delay);
      return delay;
    });
    try {
      const exporter = exporterVia(proxy, prefix, {
        retry: { initialDelayMillis: initial, maxDelayMillis: max },
      });
      const service = sequencedService(exporter);
      await proxy.set({ kind: 'status', status: 500, code: 'InternalError' });
      await service.exportCollections(1);
      await waitFor(() => putsUnder(proxy, prefix).length >= 12, 20_000, '12 attempts');
      await proxy.set({ kind: 'pass' });
      await exporter.shutdown();
      await service.shutdown();
    } finally {
      spy.mockRestore();
    }
    drawn.slice(0, 11).forEach((delay, i) => {
      expect(delay, `wait ${i + 1}: ${drawn.join(', ')}`).toBeLessThanOrEqual(
        Math.min(max, initial * 2 ** i),
      );
    });
    // Jitter is full: later waits reach well past the first bound (all below it: p < 1e-5).
    expect(Math.max(...drawn.slice(5, 11))).toBeGreaterThan(initial * 2);
    // ... and at the server: no retry comes before its wait. The upper side gets a wide slack:
    // the S3 server shares this machine's two cores, and a loaded CI run stalls the client.
    const times = putsUnder(proxy, prefix)
      .slice(0, 12)
      .map((a) => a.at);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    gaps.forEach((gap, i) => {
      const delay = drawn[i] as number;
      expect(gap, `gap ${i + 1} vs wait ${delay}`).toBeGreaterThanOrEqual(delay - 2);
      expect(gap, `gap ${i + 1} vs wait ${delay}`).toBeLessThanOrEqual(delay + 1_000);
    });
  });

  test('a 413 from the server is a rejection: the batch is dropped and counted at once, not retried', async ({
    onTestFinished,
  }) => {
    const prefix = uniquePrefix('413');
    const proxy = await proxyForTest(onTestFinished);
    const exporter = exporterVia(proxy, prefix);
    const service = sequencedService(exporter);
    await proxy.set({ kind: 'status', status: 413, code: 'EntityTooLarge' });
    await service.exportCollections(1);
    await exporter.forceFlush();
    await proxy.set({ kind: 'pass' });
    const stats = exporter.stats();
    await exporter.shutdown();
    await service.shutdown();
    expect(putsUnder(proxy, prefix).map((a) => a.outcome)).toEqual(['status 413']);
    expect(stats.pointsDroppedByReason.rejected).toBe(stats.pointsDropped);
    expect(stats.pointsDropped).toBeGreaterThan(0);
    expect(stats.uploadFailures).toEqual({ 'entity-too-large': 1 });
    expect(logged.filter((l) => /S3 rejected .* for good/.test(l.text))).toHaveLength(1);
    expect(await listAndFetch(client, bucket, `${prefix}/`)).toEqual([]);
  });

  // One upload's body is damaged on its way (a flipped byte): the server refuses it with a 400
  // that says so. Retried with the same headers, it says nothing about If-None-Match.
  for (const conditionalWrites of [true, false]) {
    test(`a body damaged in transit is retried and stored, conditionalWrites: ${conditionalWrites} stays`, async ({
      onTestFinished,
    }) => {
      const prefix = uniquePrefix(`corrupt-${conditionalWrites}`);
      const proxy = await proxyForTest(onTestFinished);
      const exporter = exporterVia(proxy, prefix, { conditionalWrites, startupCheck: false });
      const service = sequencedService(exporter);
      await proxy.set({ kind: 'corrupt', once: true });
      await service.exportCollections(3);
      await exporter.forceFlush();
      const stats = exporter.stats();
      await exporter.shutdown();
      await service.shutdown();

      expect((await storedSequence(prefix)).seqs).toEqual([1, 2, 3]);
      const attempts = putsUnder(proxy, prefix);
      expect(attempts[0]?.outcome).toBe('upstream 400');
      const header = conditionalWrites ? '*' : undefined;
      expect(attempts.map((a) => a.ifNoneMatch)).toEqual(attempts.map(() => header));
      expect(logged.filter((l) => /without If-None-Match/.test(l.text))).toEqual([]);
      expect(stats.pointsDropped).toBe(0);
      expect(stats.uploadFailures).toEqual({ 'damaged-body': 1 });
    });
  }

  // A server's Retry-After that ends past the deadline: no attempt may come before it, so
  // sitting out the deadline stores nothing; forceFlush() and shutdown() return at once, saying so.
  test('shutdown() does not retry before a Retry-After past its deadline, nor sits the deadline out', async ({
    onTestFinished,
  }) => {
    const prefix = uniquePrefix('shutdown-retry-after');
    const proxy = await proxyForTest(onTestFinished);
    const flushTimeoutMillis = 5_000;
    const exporter = exporterVia(proxy, prefix, { flushTimeoutMillis });
    const service = sequencedService(exporter);
    await proxy.set({ kind: 'status', status: 503, code: 'SlowDown', retryAfter: '30' });
    await service.exportCollections(1);
    await waitFor(() => exporter.stats().uploadFailures.throttled === 1, 5_000, 'the 503');
    const started = performance.now();
    await exporter.shutdown();
    const shutdownMillis = performance.now() - started;
    await service.shutdown();

    expect(putsUnder(proxy, prefix)).toHaveLength(1);
    expect(shutdownMillis).toBeLessThan(1_000);
    expect(exporter.stats().pointsDroppedByReason.shutdown).toBeGreaterThan(0);
    const gaveUp = logged.filter((l) => /shutdown\(\) returns at once/.test(l.text));
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]?.text).toMatch(/Retry-After/);
    expect(gaveUp[0]?.text).toMatch(/last upload failure: SlowDown \(HTTP 503\)/);
  });

  test('forceFlush() returns at once behind a Retry-After past its deadline, and waits for one within it', async ({
    onTestFinished,
  }) => {
    const prefix = uniquePrefix('flush-retry-after');
    const proxy = await proxyForTest(onTestFinished);
    const flushTimeoutMillis = 5_000;
    const exporter = exporterVia(proxy, prefix, { flushTimeoutMillis });
    const service = sequencedService(exporter);
    await proxy.set({ kind: 'status', status: 503, code: 'SlowDown', retryAfter: '30' });
    await service.exportCollections(1);
    await waitFor(() => exporter.stats().uploadFailures.throttled === 1, 5_000, 'the 503');
    let started = performance.now();
    await exporter.forceFlush();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(putsUnder(proxy, prefix)).toHaveLength(1);
    const early = logged.filter((l) => /forceFlush\(\) returns at once with/.test(l.text));
    expect(early).toHaveLength(1);
    expect(early[0]?.text).toMatch(/Retry-After/);

    // A Retry-After of 2 s ends within the deadline: the flush waits for it and stores the batch.
    await proxy.set({ kind: 'pass' });
    proxy.once((r) => r.method === 'PUT' && r.key.startsWith(prefix), {
      kind: 'status',
      status: 503,
      code: 'SlowDown',
      retryAfter: '2',
    });
    await service.exportCollections(1);
    await waitFor(() => exporter.stats().uploadFailures.throttled === 2, 5_000, 'the second 503');
    started = performance.now();
    await exporter.forceFlush();
    const flushMillis = performance.now() - started;
    await exporter.shutdown();
    await service.shutdown();
    expect(flushMillis).toBeGreaterThan(1_000);
    expect(flushMillis).toBeLessThan(flushTimeoutMillis);
    expect((await storedSequence(prefix)).seqs).toContain(2);
  });

  test('403 AccessDenied: reported once with the fix, data kept, uploads resume by themselves', async ({
    onTestFinished,
  }) => {
    const prefix = uniquePrefix('access-denied');
    const proxy = await proxyForTest(onTestFinished);
    const exporter = exporterVia(proxy, prefix, {
      retry: { initialDelayMillis: 20, maxDelayMillis: 300 },
    });
    const service = sequencedService(exporter);
    await proxy.set({ kind: 'status', status: 403, code: 'AccessDenied' });
    await service.exportCollections(3);
    await waitFor(
      () => (exporter.stats().uploadFailures['access-denied'] ?? 0) >= 4,
      10_000,
      '4 denials',
    );
    const during = exporter.stats();
    expect(during.pointsDropped).toBe(0);
    expect(during.bufferedBytes).toBeGreaterThan(0);
    const reports = logged.filter((m) => m.level === 'error' && /AccessDenied/.test(m.text));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.text).toMatch(/s3:PutObject/);

    await proxy.set({ kind: 'pass' });
    // No flush: the slow retry alone must get the data out.
    await waitFor(() => exporter.stats().pendingBatches === 0, 5_000, 'uploads to resume');
    expect(
      logged.some((m) => m.level === 'info' && /access-denied fault is fixed/.test(m.text)),
    ).toBe(true);
    await exporter.shutdown();
    await service.shutdown();
    expect((await storedSequence(prefix)).seqs).toEqual(
      Array.from({ length: service.count }, (_, i) => i + 1),
    );
  });

  test('missing bucket: reported once, data kept, uploads resume once the bucket exists', async () => {
    const missing = `${bucket}-later`.slice(0, 63);
    const exporter = new S3MetricExporter({
      bucket: missing,
      prefix: 'late',
      ...connection(),
      maxBatchAgeMillis: 50,
      requestTimeoutMillis: 2_000,
      retry: { initialDelayMillis: 20, maxDelayMillis: 300 },
    });
    const service = sequencedService(exporter);
    await service.exportCollections(2);
    await waitFor(
      () => (exporter.stats().uploadFailures['no-such-bucket'] ?? 0) >= 2,
      10_000,
      'NoSuchBucket',
    );
    expect(logged.filter((m) => /NoSuchBucket/.test(m.text))).toHaveLength(1);
    expect(logged.find((m) => /NoSuchBucket/.test(m.text))?.text).toMatch(/bucket does not exist/);
    expect(exporter.stats().pointsDropped).toBe(0);

    const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
    await client.send(new CreateBucketCommand({ Bucket: missing }));
    await waitFor(() => exporter.stats().pendingBatches === 0, 5_000, 'uploads to resume');
    await exporter.shutdown();
    await service.shutdown();
    const objects = await listAndFetch(client, missing, 'late/');
    const seqs = objects
      .flatMap((o) => dataPointRows(decodeStored(o)))
      .filter((r) => r.metric === 'collection.seq');
    expect(seqs.map((r) => r.value).sort()).toEqual([1, 2]);
  });

  for (const driver of SIGNALS) {
    test(`${driver.signal}, black hole: forceFlush() and shutdown() each settle within flushTimeoutMillis + 500 ms`, async ({
      onTestFinished,
    }) => {
      const prefix = uniquePrefix(`bounded-${driver.signal}`);
      const proxy = await proxyForTest(onTestFinished);
      const flushTimeoutMillis = 1_500;
      const exporter = driver.exporter({
        ...viaProxy(proxy, prefix),
        flushTimeoutMillis,
        requestTimeoutMillis: 60_000,
      });
      await proxy.set({ kind: 'blackhole' });
      for (let tag = 1; tag <= 3; tag++) {
        expect((await exportTagged(driver, exporter, 10, tag)).code).toBe(0);
        await new Promise((r) => setTimeout(r, 60)); // older than maxBatchAgeMillis: sealed
      }
      let started = performance.now();
      await exporter.forceFlush();
      const flushMillis = performance.now() - started;
      started = performance.now();
      await exporter.shutdown();
      const shutdownMillis = performance.now() - started;
      console.log(
        `[measure] black hole, ${driver.signal}, flushTimeoutMillis ${flushTimeoutMillis}: forceFlush ${flushMillis.toFixed(0)} ms, shutdown ${shutdownMillis.toFixed(0)} ms`,
      );
      expect(proxy.putAttempts().some((a) => a.key.startsWith(`${prefix}/`))).toBe(true);
      expect(flushMillis).toBeLessThan(flushTimeoutMillis + 500);
      expect(shutdownMillis).toBeLessThan(flushTimeoutMillis + 500);
      const stats = exporter.stats();
      expect(stats.pointsDroppedByReason.shutdown).toBe(30);
      expect(stats.pointsDropped).toBe(30);
    });
  }
});
