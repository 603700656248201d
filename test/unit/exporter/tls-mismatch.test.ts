import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { S3MetricExporter } from '../../../src/index.js';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { exportSynthetic } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';

// An https:// endpoint whose server speaks plain HTTP (a local MinIO without TLS, say): every
// TLS handshake fails with OpenSSL's "wrong version number". Only the operator can fix it:
// retried at once as a client fault it raised no alert, and the warnings quoted OpenSSL's
// internals ("EPROTO 40CD…:error:0A00010B:SSL routines:…:tlsany_meth.c:77:\n").

const warnings: ProcessWarning[] = [];
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
    const exporter = new S3MetricExporter({
      bucket: 'metrics',
      endpoint: `https://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
      compression: 'none',
      maxBatchBytes: 1,
      flushTimeoutMillis: 300,
      retry: { initialDelayMillis: 5, maxDelayMillis: 20 },
      startupCheck,
    });
    try {
      await exportSynthetic(exporter, 5, 1);
      await waitFor(
        () => Object.keys(exporter.stats().uploadFailures).length > 0,
        10_000,
        'a failed attempt',
      );
      expect(exporter.stats().uploadFailures).toEqual({ 'no-tls': 1 });
      const alerts = warnings.filter((w) => w.code === 'OTEL_S3_NO_TLS');
      expect(alerts.map((w) => w.text)).toEqual([
        expect.stringContaining(
          'failed (EPROTO: write EPROTO (TLS: wrong version number)): the server does not answer in TLS; if it serves plain HTTP, give the endpoint as http://. Data is kept',
        ),
      ]);
    } finally {
      await exporter.shutdown();
    }
  });
}
