import { type AddressInfo, createServer } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { firstUploadFailure } from '../../support/first-upload-failure.js';

// An endpoint where no S3 API answers: a web server, an S3 console's port (MinIO's 9001 beside
// its API's 9000), an ingress route that is not there. It answers a PutObject with a 404 or 405
// and a page, not an S3 error. Every batch was dropped as refused for good ('http-404',
// 'rejected'), though only the endpoint is wrong: with a spool, a restart with the right one
// would have stored them.

const warnings: ProcessWarning[] = [];
const credentials = { accessKeyId: 'id', secretAccessKey: 'secret' };

beforeEach(() => {
  diag.disable();
  warnings.length = 0;
  recordProcessWarnings(warnings);
});
afterEach(() => {
  vi.restoreAllMocks();
});

const ANSWERS = {
  // Go's net/http for a path no handler serves (a Kubernetes ingress's default backend too).
  'Go 404': [
    'HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\nConnection: close\r\n\r\n404 page not found\n',
    '(NotFound (HTTP 404): not an S3 answer: "404 page not found")',
    '(HTTP 404: not an S3 answer: "404 page not found")',
  ],
  // nginx serving files: no PUT.
  'nginx 405': [
    'HTTP/1.1 405 Not Allowed\r\nContent-Type: text/html\r\nContent-Length: 157\r\nConnection: close\r\n\r\n<html>\r\n<head><title>405 Not Allowed</title></head>\r\n<body>\r\n<center><h1>405 Not Allowed</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n',
    '(UnknownError (HTTP 405): not an S3 answer: "405 Not Allowed 405 Not Allowed nginx/1.22.1")',
    '(HTTP 405: not an S3 answer: "405 Not Allowed 405 Not Allowed nginx/1.22.1")',
  ],
  'a bare 404': [
    'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
    '(NotFound (HTTP 404))',
    '(NotFound (HTTP 404))',
  ],
} as const;

// Each: the answer, and the error as each client words it.
for (const [who, [answer, ownSaid, sdkSaid]] of Object.entries(ANSWERS)) {
  for (const [client, startupCheck] of [
    ['own requests', false],
    ['own requests', true],
    ['an S3Client', false],
  ] as const) {
    test(`${who} (${client}, startupCheck ${startupCheck}): a configuration fault, the batch kept`, async () => {
      const server = createServer((socket) => {
        socket.on('error', () => {});
        socket.once('data', () => socket.end(answer));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const s3Client =
        client === 'an S3Client'
          ? new S3Client({
              endpoint,
              region: 'us-east-1',
              credentials,
              forcePathStyle: true,
              maxAttempts: 1,
            })
          : undefined;
      try {
        const { stats, alerts } = await firstUploadFailure(
          s3Client === undefined
            ? { endpoint, region: 'us-east-1', credentials, startupCheck }
            : { s3Client, startupCheck },
          warnings,
          'OTEL_S3_NOT_S3',
        );
        expect(stats.uploadFailures).toEqual({ 'not-s3': 1 });
        expect(stats.pointsDroppedByReason).toEqual({});
        expect(alerts).toEqual([
          expect.stringContaining(
            `failed ${client === 'an S3Client' ? sdkSaid : ownSaid}: no S3 API answers at this endpoint (a web server, a console or a proxy does); check its host, port and path (the endpoint: ${s3Client === undefined ? endpoint : "the s3Client option's endpoint"}). Data is kept`,
          ),
        ]);
      } finally {
        s3Client?.destroy();
        server.close();
      }
    });
  }
}
