/**
 * The startup check (src/pipeline/startup-check.ts) with a scripted S3 client: a fault is heard
 * in milliseconds, not at the first upload; it is one episode with the uploads' reports; it never
 * delays export() or shutdown(); one check per shared connection; `startupCheck: false` sends
 * nothing. Against a real server (Ceph RGW, which checks signatures): test/integration/startup-check.test.ts.
 */
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { diag } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { configure } from '../../../src/config/environment.js';
import { S3Exporters } from '../../../src/exporter/exporters.js';
import { createSharedParts } from '../../../src/exporter/shared-parts.js';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../../src/index.js';
import { spawnTs } from '../../support/child.js';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { sleep, waitFor } from '../../support/wait.js';

/** Process warnings (what reaches stderr without a diag logger), as they are emitted. */
const warnings: ProcessWarning[] = [];

beforeEach(() => {
  diag.disable();
  warnings.length = 0;
  recordProcessWarnings(warnings);
});
afterEach(() => vi.restoreAllMocks());

function exporterWith(s3: ScriptedS3, options: Partial<S3MetricExporterOptions> = {}) {
  return new S3MetricExporter({
    bucket: 'unit',
    prefix: 'prod/checkout',
    s3Client: s3.client,
    compression: 'none',
    retry: { initialDelayMillis: 1, maxDelayMillis: 20 },
    ...options,
  });
}

const FORBIDDEN = { kind: 'status', status: 403, name: 'SignatureDoesNotMatch' } as const;

describe('the startup check', () => {
  test('a wrong secret is reported at start, with the fix, before any upload', async () => {
    const s3 = new ScriptedS3().scriptProbes([], FORBIDDEN);
    const exporter = exporterWith(s3, { retry: { initialDelayMillis: 1, maxDelayMillis: 30_000 } });
    const started = performance.now();
    await waitFor(() => warnings.length > 0, 5_000, 'a warning');
    const heardAfter = performance.now() - started;
    expect(heardAfter).toBeLessThan(1_000);
    expect(warnings).toEqual([
      {
        code: 'OTEL_S3_BAD_CREDENTIALS',
        text: 'otel-s3-exporter: the startup check (a PutObject of s3://unit/prod/checkout/_otel_s3_check/startup.check that stores nothing) failed (SignatureDoesNotMatch (HTTP 403)): the secret key does not match the access key id; check the credentials. Data is kept within maxBufferedBytes and retried about every 30 s',
      },
    ]);
    // One request: an empty PutObject under the prefix with a Content-MD5 no empty body has.
    expect(s3.probes.map((p) => [p.key, p.body.length])).toEqual([
      ['prod/checkout/_otel_s3_check/startup.check', 0],
    ]);
    expect(s3.attempts).toEqual([]);
    await exporter.shutdown();
  });

  test('a refusal for good (a storage class the server does not take) is reported at start, where uploads would drop their batches', async () => {
    const refused = { kind: 'status', status: 400, name: 'InvalidArgument' } as const;
    const s3 = new ScriptedS3().scriptProbes([], refused);
    const exporter = exporterWith(s3, { storageClass: 'GLACIER' });
    // Before: a diag line only, nothing reached stderr; the first upload then dropped its batch.
    await waitFor(() => warnings.length > 0, 5_000, 'a warning');
    expect(warnings).toEqual([
      {
        code: 'OTEL_S3_UPLOADS_REFUSED',
        text: expect.stringMatching(
          /the startup check .* was refused by .* \(InvalidArgument \(HTTP 400\)\): uploads with these settings would be refused too and their batches dropped; check the endpoint and the options sent with each upload \(storageClass,/,
        ),
      },
    ]);
    await exporter.shutdown();
  });

  test('the upload that meets the same fault later is the same episode: no second report', async () => {
    const s3 = new ScriptedS3().scriptProbes([], FORBIDDEN).script([], FORBIDDEN);
    const exporter = exporterWith(s3, { flushTimeoutMillis: 200 });
    await waitFor(() => warnings.length > 0, 5_000, 'the startup check report');
    await exportSynthetic(exporter, 5, 1);
    await exporter.forceFlush();
    expect(s3.attempts.length).toBeGreaterThan(0);
    expect(exporter.stats().uploadFailures['bad-credentials']).toBeGreaterThan(0);
    await exporter.shutdown();
    expect(warnings.filter((w) => w.code === 'OTEL_S3_BAD_CREDENTIALS')).toHaveLength(1);
  });

  test('access that works says nothing, and stores nothing', async () => {
    const s3 = new ScriptedS3();
    const exporter = exporterWith(s3);
    await waitFor(() => s3.probes.length === 1, 5_000, 'the check');
    await sleep(20);
    expect(warnings).toEqual([]);
    expect(s3.stored.size).toBe(0);
    await exporter.shutdown();
  });

  // A web app's catch-all route (or a mock) answers any PUT 200 with no ETag: every upload
  // "stored" there was lost, and the check said so only at info level ("does not check
  // Content-MD5"), which nothing shows without a logger. An S3 server that ignores Content-MD5
  // answers with an ETag, and the check stays quiet.
  test.each([
    ['no ETag', {}, ['OTEL_S3_NOT_S3']],
    ['an ETag', { etag: '"d41d8cd98f00b204e9800998ecf8427e"' }, []],
  ])('a PUT accepted with %s: %j', async (_, headers, codes) => {
    let checks = 0;
    const server = createHttpServer((request, response) => {
      if (request.headers['content-md5'] !== undefined) checks++;
      request.resume().on('end', () => {
        response.writeHead(200, { 'content-type': 'text/html', ...headers });
        response.end('<html>ok</html>');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const exporter = new S3MetricExporter({
      bucket: 'unit',
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    try {
      await waitFor(() => checks === 1, 5_000, 'the check');
      await sleep(100); // its answer handled
      expect(warnings.map((w) => w.code)).toEqual(codes);
      if (codes.length > 0) {
        expect(warnings[0]?.text).toBe(
          `otel-s3-exporter: the startup check (a PutObject of s3://unit/_otel_s3_check/startup.check that stores nothing) was accepted without an ETag, which no S3 API does: what answers at ${endpoint} is not S3, and what is uploaded there is lost; check the endpoint's host, port and path`,
        );
      }
    } finally {
      await exporter.shutdown();
      server.close();
    }
  });

  test.each([
    [
      'NoSuchBucket',
      404,
      'OTEL_S3_NO_SUCH_BUCKET',
      'the bucket does not exist; create it or fix the bucket option',
    ],
    [
      'AccessDenied',
      403,
      'OTEL_S3_ACCESS_DENIED',
      'the credentials lack permission on this bucket and prefix; grant s3:PutObject on this bucket and prefix (uploads resume by themselves)',
    ],
    [
      'PermanentRedirect',
      301,
      'OTEL_S3_WRONG_REGION',
      'the bucket is in another region; set the region option to the bucket region',
    ],
    [
      'XMinioStorageFull',
      507,
      'OTEL_S3_QUOTA_EXCEEDED',
      "the server's storage is full (its drives are below their minimum free space); raise the quota or free space in the bucket (uploads resume by themselves)",
    ],
    [
      'XMinioAdminBucketQuotaExceeded',
      400,
      'OTEL_S3_QUOTA_EXCEEDED',
      'the bucket is over its quota; raise the quota or free space in the bucket (uploads resume by themselves)',
    ],
    [
      'AllAccessDisabled',
      403,
      'OTEL_S3_ACCOUNT_DISABLED',
      'all access to the bucket has been disabled by the storage provider; contact the storage provider or its administrator (uploads resume by themselves)',
    ],
    [
      'UnknownError',
      401,
      'OTEL_S3_BAD_CREDENTIALS',
      'the server did not accept the credentials (missing or invalid); check the credentials',
    ],
  ])('%s is reported with its code and its fix', async (name, status, code, fix) => {
    const s3 = new ScriptedS3().scriptProbes([{ kind: 'status', status, name }]);
    const exporter = exporterWith(s3);
    await waitFor(() => warnings.length > 0, 5_000, 'a warning');
    expect(warnings.map((w) => w.code)).toEqual([code]);
    expect(warnings[0]?.text).toContain(`(${name} (HTTP ${status})): ${fix}`);
    await exporter.shutdown();
  });

  test('a refused connection is tried again for a few seconds, then reported once', async () => {
    const s3 = new ScriptedS3().scriptProbes([], { kind: 'network', code: 'ECONNREFUSED' });
    const exporter = exporterWith(s3);
    const started = performance.now();
    await waitFor(() => warnings.length > 0, 8_000, 'a warning');
    const heardAfter = performance.now() - started;
    expect(heardAfter).toBeGreaterThan(1_500);
    expect(heardAfter).toBeLessThan(5_000);
    expect(s3.probes.length).toBeGreaterThanOrEqual(2);
    expect(warnings).toEqual([
      {
        code: 'OTEL_S3_ENDPOINT_UNREACHABLE',
        text: expect.stringMatching(
          /^otel-s3-exporter: the startup check \(.*\) could not reach the s3Client option's endpoint \(\d attempts\): connect ECONNREFUSED 127\.0\.0\.1:9\. Data is kept within maxBufferedBytes and retried with backoff; check the endpoint and the network$/,
        ),
      },
    ]);
    await exporter.shutdown();
  });

  test('a check that hangs delays neither export() nor shutdown(), which aborts it', async () => {
    const s3 = new ScriptedS3().scriptProbes([{ kind: 'hang' }]);
    const exporter = exporterWith(s3, { flushTimeoutMillis: 1_000 });
    await waitFor(() => s3.probes.length === 1, 5_000, 'the check in flight');
    const started = performance.now();
    expect((await exportSynthetic(exporter, 5, 1)).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    expect(performance.now() - started).toBeLessThan(500);
    expect(s3.attempts.map((a) => a.outcome)).toEqual(['ok']); // the batch was stored
    await waitFor(() => s3.probes[0]?.outcome === 'aborted', 1_000, 'the check aborted');
    expect(warnings).toEqual([]);
  });

  test('an s3Client whose credentials provider never answers: the check says so within its deadline', async () => {
    // The AWS SDK does not watch abortSignal while it resolves credentials.
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      forcePathStyle: true,
      credentials: () => new Promise(() => {}),
    });
    const exporter = new S3MetricExporter({
      bucket: 'unit',
      s3Client: client,
      requestTimeoutMillis: 200,
    });
    try {
      await waitFor(
        () => warnings.some((w) => w.code === 'OTEL_S3_ENDPOINT_UNREACHABLE'),
        2_000,
        'the check reported',
      );
      expect(warnings.find((w) => w.code === 'OTEL_S3_ENDPOINT_UNREACHABLE')?.text).toMatch(
        /no answer within 200 ms/,
      );
    } finally {
      await exporter.shutdown();
      client.destroy();
    }
  });

  // OTEL_EXPORTER_S3_TIMEOUT=10, meant as seconds: every attempt's deadline passes before any
  // server answers. The check said only "check the endpoint and the network", though the
  // uploads' own reports name requestTimeoutMillis.
  test('a requestTimeoutMillis shorter than the check deadline is named when the check gets no answer', async () => {
    const s3 = new ScriptedS3().scriptProbes([], { kind: 'hang' });
    const exporter = exporterWith(s3, { requestTimeoutMillis: 10 });
    try {
      await waitFor(
        () => warnings.some((w) => w.code === 'OTEL_S3_ENDPOINT_UNREACHABLE'),
        2_000,
        'the check reported',
      );
      expect(warnings.find((w) => w.code === 'OTEL_S3_ENDPOINT_UNREACHABLE')?.text).toMatch(
        /: no answer within 10 ms \(requestTimeoutMillis\)\. Data is kept within maxBufferedBytes and retried with backoff; check the endpoint, the network and requestTimeoutMillis$/,
      );
    } finally {
      s3.release();
      await exporter.shutdown();
    }
  });

  test('startupCheck: false (or OTEL_EXPORTER_S3_STARTUP_CHECK=false) sends nothing', async () => {
    const s3 = new ScriptedS3().scriptProbes([], FORBIDDEN);
    const off = exporterWith(s3, { startupCheck: false });
    await sleep(50);
    expect(s3.probes).toEqual([]);
    await off.shutdown();
    const fromEnv = configure(
      { bucket: 'unit', s3Client: s3.client },
      { OTEL_EXPORTER_S3_STARTUP_CHECK: 'false' },
    );
    expect(fromEnv.startupCheck).toBe(false);
    expect(warnings).toEqual([]);
  });

  test('one check per shared connection, however many exporters join it', async () => {
    const s3 = new ScriptedS3();
    const parts = createSharedParts(configure({ bucket: 'unit', s3Client: s3.client }));
    const leaves = [parts.join(), parts.join(), parts.join()];
    expect(await parts.startupCheck?.result).toBe('ok');
    expect(s3.probes).toHaveLength(1);
    for (const leave of leaves) leave();

    const group = new S3Exporters({ bucket: 'unit', s3Client: s3.client, compression: 'none' });
    const metrics = group.metricExporter();
    await waitFor(() => s3.probes.length === 2, 5_000, "the group's check");
    await sleep(20);
    expect(s3.probes).toHaveLength(2);
    await metrics.shutdown();
  });

  test("a group's first exporter refused: the next one still gets the group's check", async () => {
    const s3 = new ScriptedS3();
    const saved = { ...process.env };
    // The bucket from the environment, so that the traces' own variable counts (and is refused).
    process.env.OTEL_EXPORTER_S3_BUCKET = 'unit';
    process.env.OTEL_EXPORTER_S3_TRACES_BUCKET = 'elsewhere';
    try {
      const group = new S3Exporters({ s3Client: s3.client, compression: 'none' });
      expect(() => group.spanExporter()).toThrow(/OTEL_EXPORTER_S3_TRACES_BUCKET/);
      const metrics = group.metricExporter();
      // Before: none, the refused exporter's leaving had stopped the group's check for good.
      await waitFor(() => s3.probes.length === 1, 5_000, "the group's check");
      await metrics.shutdown();
    } finally {
      delete process.env.OTEL_EXPORTER_S3_BUCKET;
      delete process.env.OTEL_EXPORTER_S3_TRACES_BUCKET;
      Object.assign(process.env, saved);
    }
  });
});

test('a check in flight does not keep an idle process alive', async () => {
  // A black hole: connections are accepted and read, never answered.
  const held = new Set<Socket>();
  const server = createServer((socket) => {
    held.add(socket);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const child = spawnTs('test/support/children/startup-check-idle.ts', {
      ENDPOINT: `http://127.0.0.1:${port}`,
    });
    await child.waitForJson<{ idle?: boolean }>((v) => v.idle === true, 20_000);
    const idleAt = performance.now();
    expect(held.size).toBe(1); // the check's connection, its request unanswered
    const exit = await child.exited;
    expect(exit.code, child.stderr()).toBe(0);
    // Without an unref'd connection the process waits for the check's 5 s deadline.
    expect(exit.at - idleAt).toBeLessThan(1_500);
  } finally {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
