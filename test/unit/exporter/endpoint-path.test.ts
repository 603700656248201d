import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { firstUploadFailure } from '../../support/first-upload-failure.js';

// An endpoint given with a path (`http://host:port/s3`, a proxy's route copied with it): every
// path-style request puts the path before the bucket, and the server takes the path's first
// segment for the bucket. Ceph RGW answers 404 NoSuchBucket, and the report said "the bucket
// does not exist; create it or fix the bucket option" of a bucket that exists.

const warnings: ProcessWarning[] = [];
const credentials = { accessKeyId: 'id', secretAccessKey: 'secret' };
let server: Server | undefined;

beforeEach(() => {
  diag.disable();
  warnings.length = 0;
  recordProcessWarnings(warnings);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server that answers every request as S3 does for a bucket it does not have. */
async function noSuchBucketServer(): Promise<number> {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body =
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message></Message><BucketName>s3</BucketName><RequestId>tx1</RequestId></Error>';
      response.writeHead(404, { 'Content-Type': 'application/xml', 'Content-Length': body.length });
      response.end(body);
    });
  });
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return (listening.address() as AddressInfo).port;
}

for (const startupCheck of [true, false]) {
  test(`NoSuchBucket through an endpoint with a path names the path (startupCheck ${startupCheck})`, async () => {
    const port = await noSuchBucketServer();
    const endpoint = `http://127.0.0.1:${port}/s3`;
    const { stats, alerts } = await firstUploadFailure(
      { endpoint, region: 'us-east-1', credentials, startupCheck },
      warnings,
      'OTEL_S3_NO_SUCH_BUCKET',
    );
    expect(stats.uploadFailures).toEqual({ 'no-such-bucket': 1 });
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toContain(
      `the bucket does not exist; create it or fix the bucket option; the endpoint ${endpoint} has a path (/s3), which every request puts before the bucket: if the bucket exists, take the path out of the endpoint. Data is kept`,
    );
  });
}

test('NoSuchBucket through an endpoint without a path says nothing of a path', async () => {
  const port = await noSuchBucketServer();
  const { alerts } = await firstUploadFailure(
    { endpoint: `http://127.0.0.1:${port}/`, region: 'us-east-1', credentials },
    warnings,
    'OTEL_S3_NO_SUCH_BUCKET',
  );
  expect(alerts).toHaveLength(1);
  expect(alerts[0]).toContain(
    'the bucket does not exist; create it or fix the bucket option. Data is kept',
  );
});
