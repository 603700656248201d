import { createRequire } from 'node:module';
import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../../src/index.js';
import { UNREACHABLE_ALERT_AFTER_MILLIS } from '../../../src/pipeline/outcomes.js';
import { closedPort } from '../../support/closed-port.js';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';
import { zstdDecompress } from '../../support/zstd.js';

/**
 * What reaches stderr when nobody registered a diag logger: process warnings (see alert() in
 * src/log.ts), captured here as they are emitted.
 */
const warnings: ProcessWarning[] = [];
const withCode = (code: string) => warnings.filter((w) => w.code === code);
let clockOffset = 0;

beforeEach(() => {
  diag.disable(); // no logger: alerts must be process warnings
  warnings.length = 0;
  clockOffset = 0;
  recordProcessWarnings(warnings);
  // The exporter times episodes with performance.now(); tests move it forward past a threshold.
  const now = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => now() + clockOffset);
});
afterEach(() => vi.restoreAllMocks());

/** An exporter with its own S3 client (static credentials: no provider chain to search). */
function exporterAt(endpoint: string, options: Partial<S3MetricExporterOptions> = {}) {
  return new S3MetricExporter({
    bucket: 'metrics',
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    compression: 'none',
    maxBatchBytes: 1,
    flushTimeoutMillis: 300,
    retry: { initialDelayMillis: 5, maxDelayMillis: 20 },
    // The uploads' own episode is tested here; the startup check's below.
    startupCheck: false,
    ...options,
  });
}

/**
 * Uploads keep failing on the network: no alert before UNREACHABLE_ALERT_AFTER_MILLIS, then
 * exactly one naming `cause` and the endpoint; the flush and shutdown messages name the cause.
 */
async function expectUnreachableEpisode(
  exporter: S3MetricExporter,
  endpoint: string,
  cause: string,
) {
  await exportSynthetic(exporter, 5, 1); // a batch of its own (maxBatchBytes 1), sent at once
  const failures = () => exporter.stats().uploadFailures.network ?? 0;
  // Generous waits: a name lookup takes the resolver's timeout (5 s, twice) when a query is
  // dropped, which some networks do now and then.
  await waitFor(() => failures() > 0, 25_000, 'a failed attempt');
  await exporter.forceFlush(); // cannot store it: resolves at its deadline
  expect(withCode('OTEL_S3_ENDPOINT_UNREACHABLE')).toEqual([]); // not yet: a blip stays quiet
  const [flush] = withCode('OTEL_S3_FLUSH_TIMEOUT');
  expect(flush?.text).toContain(`last upload failure: ${cause}`);

  clockOffset += UNREACHABLE_ALERT_AFTER_MILLIS; // failing that long now
  await waitFor(
    () => withCode('OTEL_S3_ENDPOINT_UNREACHABLE').length > 0,
    25_000,
    'the unreachable alert',
  );
  const seen = failures();
  await waitFor(() => failures() >= seen + 3, 25_000, 'more failed attempts');
  const alerts = withCode('OTEL_S3_ENDPOINT_UNREACHABLE');
  expect(alerts).toHaveLength(1); // once per episode
  expect(alerts[0]?.text).toContain(`uploads to ${endpoint} have failed for`);
  expect(alerts[0]?.text).toContain(cause);

  await exporter.shutdown();
  const [dropped] = withCode('OTEL_S3_DATA_DROPPED');
  expect(dropped?.text).toMatch(/shutdown\(\) deadline of 300 ms passed: dropped 1 batch/);
  expect(dropped?.text).toContain(`last upload failure: ${cause}`);
}

describe('failures are loud without a logger', () => {
  test('an endpoint on a closed port: alerted once, with ECONNREFUSED, the address and the endpoint', async () => {
    const port = await closedPort();
    const endpoint = `http://127.0.0.1:${port}`;
    await expectUnreachableEpisode(
      exporterAt(endpoint),
      endpoint,
      `connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  test('the startup check reports a closed port within seconds, once: the uploads that fail later are the same episode', async () => {
    const port = await closedPort();
    const endpoint = `http://127.0.0.1:${port}`;
    const started = performance.now();
    const exporter = exporterAt(endpoint, { startupCheck: true });
    await waitFor(
      () => withCode('OTEL_S3_ENDPOINT_UNREACHABLE').length > 0,
      10_000,
      'the startup check alert',
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(withCode('OTEL_S3_ENDPOINT_UNREACHABLE').map((w) => w.text)).toEqual([
      expect.stringMatching(
        new RegExp(
          `the startup check \\(a PutObject of s3://metrics/_otel_s3_check/startup\\.check that stores nothing\\) could not reach ${endpoint} \\(\\d attempts\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\. .*check the endpoint and the network$`,
        ),
      ),
    ]);
    await exportSynthetic(exporter, 5, 1);
    await waitFor(() => (exporter.stats().uploadFailures.network ?? 0) > 0, 10_000, 'a failure');
    clockOffset += UNREACHABLE_ALERT_AFTER_MILLIS; // the uploads have failed that long now
    const seen = exporter.stats().uploadFailures.network ?? 0;
    await waitFor(
      () => (exporter.stats().uploadFailures.network ?? 0) >= seen + 3,
      10_000,
      'more failures',
    );
    expect(withCode('OTEL_S3_ENDPOINT_UNREACHABLE')).toHaveLength(1);
    await exporter.shutdown();
  });

  test('an endpoint whose name does not resolve: alerted once, with ENOTFOUND and the name', async () => {
    // The system resolver answers as getaddrinfo does for a name that does not exist, at once:
    // a real lookup of it waits on whatever DNS server the machine has, which may drop the query
    // and answer after the connect timeout (then it is a timeout, named as one: outcomes.test.ts).
    const dns = createRequire(import.meta.url)('node:dns') as typeof import('node:dns');
    vi.spyOn(dns, 'lookup').mockImplementation(((host: string, ...rest: unknown[]) => {
      const callback = rest.at(-1) as (error: NodeJS.ErrnoException) => void;
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), {
        errno: -3008,
        code: 'ENOTFOUND',
        syscall: 'getaddrinfo',
        hostname: host,
      });
      process.nextTick(callback, error);
    }) as unknown as typeof dns.lookup);
    const endpoint = 'http://no-such-host.invalid:9000';
    await expectUnreachableEpisode(
      exporterAt(endpoint),
      endpoint,
      'getaddrinfo ENOTFOUND no-such-host.invalid',
    );
  });

  test('the unreachable alert comes at its threshold, not at the first failure after it', async () => {
    // Backoffs pinned (default retry options, jitter at 0.94 of each bound): failures at 0, 0.2,
    // 0.7, 1.6, 3.5, 7.3, 14.8 and 29.8 s, then a backoff of 28.2 s. Before, the alert waited
    // for the failure after the threshold: 58 s into the episode.
    vi.spyOn(Math, 'random').mockReturnValue(0.94);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const s3 = new ScriptedS3().script([], { kind: 'network', code: 'ECONNREFUSED' });
      const exporter = scriptedExporter(s3, {
        compression: 'none',
        maxBatchBytes: 1,
        startupCheck: false,
      });
      // Each attempt fails as it arrives: its time is the failure's. The alert is timed as emitted.
      const failedAt: number[] = [];
      s3.onAttempt = () => failedAt.push(performance.now());
      let alertedAt: number | undefined;
      vi.mocked(process.emitWarning).mockImplementation(((warning, options) => {
        const code = typeof options === 'object' ? options.code : undefined;
        if (code === 'OTEL_S3_ENDPOINT_UNREACHABLE') alertedAt ??= performance.now();
        warnings.push({ code, text: String(warning) });
      }) as typeof process.emitWarning);
      const alerts = () => withCode('OTEL_S3_ENDPOINT_UNREACHABLE');
      await exportSynthetic(exporter, 5, 1);
      // Fake time in steps of 100 ms, then real turns of the loop (nextTurn) for what is due.
      const step = async () => {
        await vi.advanceTimersByTimeAsync(100);
        for (let turn = 0; turn < 20; turn++) await new Promise((r) => setImmediate(r));
      };
      // The first attempt's body is made off this thread, in real time: under load that took
      // more than a hundred steps, and the attempt's own deadline passed in fake time first (a
      // timeout that started the episode a second before the first failure seen). Fake time
      // stands still until the first attempt is made.
      const realDeadline = Date.now() + 10_000;
      while (failedAt.length === 0 && Date.now() < realDeadline) {
        await vi.advanceTimersByTimeAsync(0);
        await new Promise((r) => setImmediate(r));
      }
      expect(failedAt, 'the first attempt, within 10 s').not.toEqual([]);
      for (let t = 0; t < 70_000; t += 100) await step();
      const [first = Number.NaN] = failedAt;
      const since = failedAt.map((t) => Math.round(t - first));
      const alertedAfter = (alertedAt ?? Number.POSITIVE_INFINITY) - first;
      // The pinned backoffs did what this test is about: no failure in the 20 s after 30 s.
      expect(since.filter((t) => t >= UNREACHABLE_ALERT_AFTER_MILLIS && t < 50_000)).toEqual([]);
      expect(alertedAfter).toBeGreaterThanOrEqual(UNREACHABLE_ALERT_AFTER_MILLIS);
      expect(alertedAfter).toBeLessThanOrEqual(UNREACHABLE_ALERT_AFTER_MILLIS + 1_000);
      expect(alerts()).toHaveLength(1);
      expect(alerts()[0]?.text).toMatch(
        /uploads to .* have failed for 30 s: connect ECONNREFUSED 127\.0\.0\.1:9\. /,
      );
      let shut = false;
      void exporter.shutdown().then(() => {
        shut = true;
      });
      while (!shut) await step();
    } finally {
      vi.useRealTimers();
    }
  });

  test('forceFlush() at its deadline alerts once per episode; a flush that stores everything ends it', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const exporter = scriptedExporter(s3, {
      compression: 'none',
      flushTimeoutMillis: 200,
      requestTimeoutMillis: 60_000,
    });
    await exportSynthetic(exporter, 4, 1);
    await exporter.forceFlush();
    await exportSynthetic(exporter, 4, 2);
    await exporter.forceFlush();
    const alerts = withCode('OTEL_S3_FLUSH_TIMEOUT');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.text).toMatch(
      /forceFlush\(\) deadline of 200 ms passed with 1 batch \(\d[\d,]* bytes uncompressed\) not yet stored; they keep retrying/,
    );

    s3.script([], { kind: 'ok' });
    await exporter.shutdown(); // aborts the hung requests; nothing more to flush
    const again = scriptedExporter(s3, {
      compression: 'none',
      flushTimeoutMillis: 200,
    });
    await exportSynthetic(again, 4, 3);
    await again.forceFlush(); // stored: no alert
    s3.script([], { kind: 'hang' });
    await exportSynthetic(again, 4, 4);
    await again.forceFlush(); // a new episode: alerted again
    expect(withCode('OTEL_S3_FLUSH_TIMEOUT')).toHaveLength(2);
    await again.shutdown();
  });

  test('forceFlush() and shutdown() name the same bytes for the same batches: uncompressed, as stats() counts them', async () => {
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const exporter = scriptedExporter(s3, {
      compression: 'zstd',
      maxBatchBytes: 1, // a batch per export
      uploadConcurrency: 4,
      flushTimeoutMillis: 300,
      requestTimeoutMillis: 60_000,
    });
    for (let tag = 1; tag <= 3; tag++) await exportSynthetic(exporter, 10, tag);
    await waitFor(() => s3.attempts.length === 3, 10_000, 'every batch in flight');
    await exporter.forceFlush();
    await exporter.shutdown();

    // The batches as the test saw them go out: the bodies sent, decompressed here.
    const bodies = new Map(s3.attempts.map((a) => [a.key, a.body]));
    expect(bodies.size).toBe(3);
    const uncompressed = [...bodies.values()].reduce((n, b) => n + zstdDecompress(b).length, 0);
    const compressed = [...bodies.values()].reduce((n, b) => n + b.length, 0);
    expect(compressed).toBeLessThan(uncompressed); // the two measures differ here
    const named = (code: string) => {
      const text = withCode(code)[0]?.text ?? '';
      const match = /(\d+) batches \((\d[\d,]*) bytes uncompressed\)/.exec(text);
      return match && { batches: Number(match[1]), bytes: Number(match[2]?.replace(/,/g, '')) };
    };
    const expected = { batches: bodies.size, bytes: uncompressed };
    expect(named('OTEL_S3_FLUSH_TIMEOUT')).toEqual(expected);
    expect(named('OTEL_S3_DATA_DROPPED')).toEqual(expected);
    expect(exporter.stats().rawBytesDropped).toBe(uncompressed);
  });
});
