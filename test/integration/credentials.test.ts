/**
 * Credentials from a provider, against a real S3 server (Ceph RGW checks SigV4): a provider that
 * hangs fails one attempt at its deadline, not every upload for good, and credentials fixed at
 * their source are read again after the server refuses them, so uploads resume by themselves.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { AwsCredentialIdentity } from '@smithy/types';
import { afterEach, expect, test, vi } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import { captureDiag } from '../support/diag-capture.js';
import {
  connection,
  describeS3,
  s3Server,
  storedSequence as storedSequenceIn,
  withS3,
} from '../support/s3.js';
import { sequencedService } from '../support/service.js';
import { tempDirs } from '../support/temp-dir.js';
import { waitFor } from '../support/wait.js';

const logged = captureDiag();
const tempDir = tempDirs();

/** The server's own credentials, or with the secret `secret`. */
const credentials = (secret?: string): AwsCredentialIdentity => ({
  accessKeyId: s3Server?.accessKeyId ?? '',
  secretAccessKey: secret ?? s3Server?.secretAccessKey ?? '',
});

/** A provider answering `answer(n)` at its n-th call (from 1); `calls` counts them. */
function countingProvider(answer: (call: number) => Promise<AwsCredentialIdentity>) {
  const counter = { calls: 0 };
  const provider = () => answer(++counter.calls);
  return { counter, provider };
}

describeS3('credentials from a provider on a real S3 server', () => {
  let client: S3Client;
  let bucket: string;

  withS3('credentials', (s) => ({ client, bucket } = s));
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  /** An exporter on the server under `prefix`: fast batches and retries, a 1 s deadline. */
  const exporterUnder = (prefix: string, options: Partial<S3MetricExporterOptions>) =>
    new S3MetricExporter({
      bucket,
      prefix,
      ...connection(),
      maxBatchAgeMillis: 50,
      requestTimeoutMillis: 1_000,
      flushTimeoutMillis: 4_000,
      startupCheck: false,
      retry: { initialDelayMillis: 50, maxDelayMillis: 300 },
      ...options,
    });

  const storedSequence = async (prefix: string) =>
    (await storedSequenceIn(client, bucket, prefix)).seqs;

  test('a provider that never answers its first call: that attempt times out at requestTimeoutMillis, is counted and said, and the retry asks again', async () => {
    const prefix = `hang-${Date.now()}`;
    const { counter, provider } = countingProvider((call) =>
      call === 1 ? new Promise<never>(() => {}) : Promise.resolve(credentials()),
    );
    const exporter = exporterUnder(prefix, { credentials: provider });
    const service = sequencedService(exporter);
    await service.exportCollections(1);
    const started = performance.now();
    await exporter.forceFlush();
    // One deadline (1 s) and a short backoff, not the flush deadline (4 s) or longer.
    expect(performance.now() - started).toBeLessThan(3_000);
    const stats = exporter.stats();
    expect(stats.uploadFailures).toEqual({ timeout: 1 });
    expect(stats.batchesUploaded).toBe(1);
    expect(counter.calls).toBe(2);
    expect(logged.map((l) => l.text)).toContainEqual(
      expect.stringMatching(
        /upload of .* failed \(CredentialsProviderTimeout: the credentials provider did not answer before the request deadline\); retrying with backoff/,
      ),
    );
    await exporter.shutdown();
    await service.shutdown();
    expect(await storedSequence(prefix)).toEqual([1]);
  });

  test('a provider that never answers: the startup check says so within its deadline, and shutdown() returns', async () => {
    const exporter = exporterUnder(`hang-check-${Date.now()}`, {
      credentials: () => new Promise<never>(() => {}),
      startupCheck: true,
    });
    const started = performance.now();
    await waitFor(() => logged.length > 0, 5_000, 'the startup check to report');
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(logged[0]?.text).toMatch(
      /the startup check \(.*\) could not be signed: the credentials provider did not answer within 1000 ms\. .*check the credentials provider/,
    );
    const stopping = performance.now();
    await exporter.shutdown();
    expect(performance.now() - stopping).toBeLessThan(4_500);
  });

  test.each([
    ['a wrong secret', 'SignatureDoesNotMatch', credentials('Xq9-not-the-secret')],
    [
      'an unknown access key',
      'InvalidAccessKeyId',
      { accessKeyId: 'AKIANOSUCHKEY0000000', secretAccessKey: 'x' },
    ],
  ])(
    '%s fixed at the provider: each refused attempt asks it again, and uploads resume by themselves',
    async (_, code, wrong) => {
      const prefix = `fixed-${code}-${Date.now()}`;
      let current = wrong;
      const { counter, provider } = countingProvider(async () => current);
      const exporter = exporterUnder(prefix, { credentials: provider });
      const service = sequencedService(exporter);
      await service.exportCollections(1);
      await waitFor(
        () => (exporter.stats().uploadFailures['bad-credentials'] ?? 0) >= 2,
        10_000,
        `2 ${code} failures`,
      );
      expect(logged.find((l) => l.level === 'error')?.text).toContain(code);
      current = credentials();
      // No flush: the slow retry alone asks again and gets the data out.
      await waitFor(() => exporter.stats().pendingBatches === 0, 5_000, 'uploads to resume');
      // Once per attempt while refused, then kept: more uploads do not ask again.
      const failures = exporter.stats().uploadFailures['bad-credentials'] ?? 0;
      expect(counter.calls).toBe(failures + 1);
      await service.exportCollections(2);
      await exporter.forceFlush();
      expect(counter.calls).toBe(failures + 1);
      expect(logged.some((l) => /bad-credentials fault is fixed/.test(l.text))).toBe(true);
      await exporter.shutdown();
      await service.shutdown();
      expect(await storedSequence(prefix)).toEqual([1, 2, 3]);
    },
  );

  test('the default chain: a shared credentials file rewritten with the right secret is read again', async () => {
    const prefix = `shared-file-${Date.now()}`;
    const dir = await tempDir('otel-s3-credentials-');
    const file = join(dir, 'credentials');
    const ini = (secret: string) =>
      `[default]\naws_access_key_id = ${s3Server?.accessKeyId}\naws_secret_access_key = ${secret}\n`;
    await writeFile(file, ini('Xq9-not-the-secret'));
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', file);
    vi.stubEnv('AWS_CONFIG_FILE', join(dir, 'no-config'));
    for (const name of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_PROFILE',
    ])
      vi.stubEnv(name, undefined);
    const exporter = exporterUnder(prefix, { credentials: undefined }); // the default chain
    const service = sequencedService(exporter);
    await service.exportCollections(1);
    await waitFor(
      () => (exporter.stats().uploadFailures['bad-credentials'] ?? 0) >= 2,
      10_000,
      '2 SignatureDoesNotMatch failures',
    );
    await writeFile(file, ini(s3Server?.secretAccessKey ?? ''));
    await waitFor(() => exporter.stats().pendingBatches === 0, 5_000, 'uploads to resume');
    await exporter.shutdown();
    await service.shutdown();
    expect(await storedSequence(prefix)).toEqual([1]);
  });
});
