/**
 * Child process of bench/shutdown-blackhole.ts: one exporter (CONTENDER = ours | otlp-http |
 * locked) behind a PeriodicExportingMetricReader exports for a while into a black hole
 * (ENDPOINT), then meterProvider.shutdown() is called with no timeout, as NodeSDK does. Prints
 * JSON lines: each forceFlush()/shutdown() start and end, and {"shutdownMillis"} at the end.
 */
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../../src/index.js';
import { LockedUploadExporter } from '../lib/locked-exporter.js';
import { TimedExporter } from '../lib/timed-exporter.js';

const env = process.env;
const endpoint = env.ENDPOINT as string;
const credentials = {
  accessKeyId: env.S3_ACCESS_KEY_ID ?? 'BENCHACCESSKEY000000',
  secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? 'benchsecretkey00000000000000000000000000',
};
const bucket = 'bench-blackhole';

function contender(): PushMetricExporter {
  switch (env.CONTENDER) {
    case 'ours':
      return new S3MetricExporter({
        bucket,
        prefix: 'blackhole',
        endpoint,
        credentials,
        flushTimeoutMillis: Number(env.FLUSH_TIMEOUT_MILLIS),
        maxBatchAgeMillis: 100, // so uploads are already stuck in the black hole at shutdown
      });
    case 'otlp-http':
      return new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` });
    case 'locked':
      return new LockedUploadExporter({ endpoint, bucket, credentials });
    default:
      throw new Error(`unknown CONTENDER ${env.CONTENDER}`);
  }
}

const inner = contender();
const exporter = new TimedExporter(inner);
const provider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 500 })],
});
const meter = provider.getMeter('bench-shutdown');
const requests = meter.createCounter('http.server.requests');
const duration = meter.createHistogram('http.server.request.duration', { unit: 's' });
const traffic = setInterval(() => {
  for (let i = 0; i < 50; i++) {
    const attributes = {
      'http.route': `/api/v1/items/{id}/${i % 10}`,
      'http.request.method': i % 3 ? 'GET' : 'POST',
      'http.response.status_code': i % 7 ? 200 : 500,
    };
    requests.add(1, attributes);
    duration.record(Math.random(), attributes);
  }
}, 10);

// Let a few periodic exports happen (and hang in the black hole), then shut down.
await new Promise((resolve) => setTimeout(resolve, Number(env.TRAFFIC_MILLIS ?? 1_600)));
clearInterval(traffic);
// Ours says what it holds: batches pending, requests sent into the black hole, and what the
// shutdown deadline then cost. An exporter that simply dropped everything would show none.
const stats = () => (inner instanceof S3MetricExporter ? inner.stats() : undefined);
const atShutdown = stats();
const started = performance.now();
await provider.shutdown();
const after = stats();
console.log(
  JSON.stringify({
    shutdownMillis: performance.now() - started,
    exports: exporter.exports,
    ...(atShutdown === undefined
      ? {}
      : {
          pendingAtShutdown: atShutdown.pendingBatches,
          attemptsAtShutdown: atShutdown.uploadAttempts,
          uploaded: after?.batchesUploaded,
          droppedAtShutdown: after?.pointsDroppedByReason.shutdown ?? 0,
        }),
  }),
);
process.exit(0);
