import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { firstUploadFailure } from '../../support/first-upload-failure.js';

// An https:// endpoint whose server speaks plain HTTP (a local MinIO without TLS, say): every
// TLS handshake fails with OpenSSL's "wrong version number". Only the operator can fix it:
// retried at once as a client fault it raised no alert, and the warnings quoted OpenSSL's
// internals ("EPROTO 40CD…:error:0A00010B:SSL routines:…:tlsany_meth.c:77:\n").

const warnings: ProcessWarning[] = [];
const credentials = { accessKeyId: 'id', secretAccessKey: 'secret' };
let server: Server;
let port: number;

beforeEach(async () => {
  diag.disable();
  warnings.length = 0;
  recordProcessWarnings(warnings);
  // A plain HTTP server: what answers a TLS ClientHello is not TLS.
  server = createServer((req, res) => {
    req.resume();
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise((resolve) => server.close(resolve));
});

for (const startupCheck of [false, true]) {
  test(`https:// to a plain HTTP server: a configuration fault, said plainly (startupCheck ${startupCheck})`, async () => {
    const { stats, alerts } = await firstUploadFailure(
      { endpoint: `https://127.0.0.1:${port}`, region: 'us-east-1', credentials, startupCheck },
      warnings,
      'OTEL_S3_NO_TLS',
    );
    expect(stats.uploadFailures).toEqual({ 'no-tls': 1 });
    expect(alerts).toEqual([
      expect.stringContaining(
        `failed (EPROTO: write EPROTO (TLS: wrong version number)): the server does not answer in TLS; if it serves plain HTTP, give the endpoint as http:// (the endpoint: https://127.0.0.1:${port}). Data is kept`,
      ),
    ]);
  });
}

// The other way round: http:// to a TLS port. Go's TLS servers (MinIO's) answer plain HTTP with
// a bare 400 and a line of text, nginx with a 400 page: not an S3 error, so the batch was
// rejected for good and dropped ("UnknownError (HTTP 400)"). Only the operator can fix it.
const TLS_ANSWERS = {
  Go: 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n',
  nginx:
    'HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: 220\r\nConnection: close\r\n\r\n<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
};
for (const [who, answer] of Object.entries(TLS_ANSWERS)) {
  test(`http:// to a TLS port (${who}'s answer): a configuration fault, the batch kept`, async () => {
    const tls = createNetServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => socket.end(answer));
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    try {
      const { stats, alerts } = await firstUploadFailure(
        {
          endpoint,
          region: 'us-east-1',
          credentials,
          startupCheck: false,
        },
        warnings,
        'OTEL_S3_NEEDS_TLS',
      );
      expect(stats.uploadFailures).toEqual({ 'needs-tls': 1 });
      expect(stats.pointsDroppedByReason).toEqual({});
      expect(alerts).toEqual([
        expect.stringContaining(
          `the server answers only in TLS; give the endpoint as https:// (the endpoint: ${endpoint}). Data is kept`,
        ),
      ]);
    } finally {
      tls.close();
    }
  });
}

// Set by the AWS SDK's variable, not the endpoint option: the report names where it came from,
// so that the fix is made where the endpoint is set.
test('http:// to a TLS port through AWS_ENDPOINT_URL_S3: the report names the variable', async () => {
  const tls = createNetServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(TLS_ANSWERS.Go));
  });
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  vi.stubEnv('AWS_ENDPOINT_URL_S3', endpoint);
  try {
    const { stats, alerts } = await firstUploadFailure(
      { region: 'us-east-1', credentials, startupCheck: false, forcePathStyle: true },
      warnings,
      'OTEL_S3_NEEDS_TLS',
    );
    expect(stats.uploadFailures).toEqual({ 'needs-tls': 1 });
    expect(alerts).toEqual([
      expect.stringContaining(
        `give the endpoint as https:// (the endpoint: ${endpoint} (AWS_ENDPOINT_URL_S3)). Data is kept`,
      ),
    ]);
  } finally {
    vi.unstubAllEnvs();
    tls.close();
  }
});
