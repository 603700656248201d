import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { S3MetricExporter } from '../../../src/index.js';
import { closedPort } from '../../support/closed-port.js';
import { exportSynthetic } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';

/**
 * Node prints a process warning one tick after process.emitWarning(). A service that runs
 * `await exporter.shutdown(); process.exit()` must still see what the shutdown reported: the
 * warning is out (its 'warning' event fired) by the time the promise's continuation runs.
 */
const seen: string[] = [];
const onWarning = (warning: Error & { code?: string }) => {
  if (warning.name === 'OtelS3ExporterWarning' && warning.code !== undefined)
    seen.push(warning.code);
};

beforeEach(() => {
  diag.disable(); // no logger: alerts are process warnings
  seen.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

test('the warnings of forceFlush() and shutdown() are out when they resolve', async () => {
  const exporter = new S3MetricExporter({
    bucket: 'metrics',
    endpoint: `http://127.0.0.1:${await closedPort()}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    compression: 'none',
    maxBatchBytes: 1,
    flushTimeoutMillis: 300,
    retry: { initialDelayMillis: 5, maxDelayMillis: 20 },
    startupCheck: false,
  });
  try {
    await exportSynthetic(exporter, 5, 1);
    await waitFor(
      () => (exporter.stats().uploadFailures.network ?? 0) > 0,
      25_000,
      'a failed attempt',
    );
    await exporter.forceFlush();
    const afterFlush = [...seen]; // read at once, as a process.exit() there would
    await exporter.shutdown();
    const afterShutdown = [...seen];
    expect(afterFlush).toEqual(['OTEL_S3_FLUSH_TIMEOUT']);
    expect(afterShutdown).toEqual(['OTEL_S3_FLUSH_TIMEOUT', 'OTEL_S3_DATA_DROPPED']);
    expect(exporter.stats().pointsDropped).toBeGreaterThan(0);
  } finally {
    await exporter.shutdown();
  }
}, 40_000);
