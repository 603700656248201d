/**
 * The startup check against a real S3 server (Ceph RGW checks SigV4, bucket policies and
 * Content-MD5), seen through a pass-through proxy that counts requests: a fault is heard within
 * 5 s of the exporter's start with nothing exported but the check itself, and the check stores
 * nothing when access works.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { diag } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import { type ProcessWarning, recordProcessWarnings } from '../support/diag-capture.js';
import { FaultProxy } from '../support/fault-proxy.js';
import {
  bucketDenying,
  connection,
  describeS3,
  freshBucket,
  listAndFetch,
  s3Server,
  testClient,
} from '../support/s3.js';
import { exportSynthetic } from '../support/service.js';
import { sleep, waitFor } from '../support/wait.js';

const warnings: ProcessWarning[] = [];

describeS3('the startup check on a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;

  beforeAll(async () => {
    client = testClient();
    bucket = await freshBucket(client, 'startup-check');
    proxy = await FaultProxy.start(s3Server?.endpoint ?? '');
  });
  afterAll(async () => {
    await proxy?.close();
    client?.destroy();
  });
  beforeEach(() => {
    diag.disable(); // no logger: what an operator sees on stderr
    warnings.length = 0;
    proxy.attempts.length = 0;
    recordProcessWarnings(warnings);
    return () => vi.restoreAllMocks();
  });

  const exporterVia = (options: Partial<S3MetricExporterOptions>) =>
    new S3MetricExporter({
      bucket,
      ...connection(),
      endpoint: proxy.endpoint,
      flushTimeoutMillis: 2_000,
      ...options,
    });

  /** Waits for the first warning; returns it and how long after `started` it came. */
  async function firstWarning(started: number) {
    await waitFor(() => warnings.length > 0, 10_000, 'a warning');
    return { warning: warnings[0], millis: performance.now() - started };
  }

  /** Starts an exporter with `options`; its first warning must come within 5 s, with `code`. */
  async function heardWithin5s(options: Partial<S3MetricExporterOptions>, code: string) {
    const started = performance.now();
    const exporter = exporterVia(options);
    const { warning, millis } = await firstWarning(started);
    expect(millis).toBeLessThan(5_000);
    expect(warning?.code).toBe(code);
    return { exporter, text: warning?.text };
  }

  test('a wrong secret is heard within 5 s, with the fix, after one request: the check; a failing upload later says nothing more', async () => {
    const prefix = `wrong-secret-${Date.now()}`;
    const started = performance.now();
    const exporter = exporterVia({
      prefix,
      credentials: {
        accessKeyId: s3Server?.accessKeyId ?? '',
        secretAccessKey: 'Xq9-not-the-secret',
      },
    });
    await exportSynthetic(exporter, 5, 1); // in the open batch: nothing is sealed for a minute
    const { warning, millis } = await firstWarning(started);
    console.log(`[measure] wrong secret heard ${millis.toFixed(0)} ms after the start`);
    expect(millis).toBeLessThan(5_000);
    expect(warning).toEqual({
      code: 'OTEL_S3_BAD_CREDENTIALS',
      text: `otel-s3-exporter: the startup check (a PutObject of s3://${bucket}/${prefix}/_otel_s3_check/startup.check that stores nothing) failed (SignatureDoesNotMatch (HTTP 403)): the secret key does not match the access key id; check the credentials. Data is kept within maxBufferedBytes and retried about every 30 s`,
    });
    // The only request so far is the check's; no batch was exported.
    expect(proxy.attempts.map((a) => [a.method, a.key, a.upstreamStatus])).toEqual([
      ['PUT', `${prefix}/_otel_s3_check/startup.check`, 403],
    ]);
    expect(exporter.stats().uploadAttempts).toBe(0);

    // The first upload meets the same fault: the same episode, not a second warning.
    await exporter.forceFlush();
    expect(exporter.stats().uploadFailures['bad-credentials']).toBeGreaterThan(0);
    await exporter.shutdown();
    expect(warnings.filter((w) => w.code === 'OTEL_S3_BAD_CREDENTIALS')).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain('Xq9-not-the-secret');
  });

  test('access that works: nothing said, nothing stored; Ceph answered the check 400 BadDigest', async () => {
    const prefix = `works-${Date.now()}`;
    const exporter = exporterVia({ prefix });
    await waitFor(() => proxy.putAttempts().length === 1, 10_000, 'the check');
    await waitFor(() => proxy.putAttempts()[0]?.upstreamStatus !== undefined, 10_000, 'its answer');
    expect(proxy.putAttempts()[0]?.upstreamStatus).toBe(400);
    await sleep(100);
    expect(warnings).toEqual([]);
    expect(await listAndFetch(client, bucket, `${prefix}/`)).toEqual([]);
    await exporter.shutdown();
  });

  test('a missing bucket is heard within 5 s, with the fix', async () => {
    const { exporter, text } = await heardWithin5s(
      { bucket: `no-such-bucket-${Date.now().toString(36)}` },
      'OTEL_S3_NO_SUCH_BUCKET',
    );
    expect(text).toContain(
      'failed (NoSuchBucket (HTTP 404)): the bucket does not exist; create it or fix the bucket option',
    );
    await exporter.shutdown();
  });

  test('a missing s3:PutObject permission is heard within 5 s, with the permission to grant', async () => {
    const { bucket: denied, lift } = await bucketDenying(client, 'startup-denied', [
      's3:PutObject',
    ]);
    try {
      const { exporter, text } = await heardWithin5s({ bucket: denied }, 'OTEL_S3_ACCESS_DENIED');
      expect(text).toContain(
        'failed (AccessDenied (HTTP 403)): the credentials lack permission on this bucket and prefix; grant s3:PutObject on this bucket and prefix',
      );
      await exporter.shutdown();
    } finally {
      await lift();
    }
  });
});
