/**
 * Child process: a service whose S3 is a black hole calls meterProvider.shutdown() with no
 * timeout (as NodeSDK does), prints how long it took, and returns without process.exit(): the
 * parent test checks that nothing (timer, socket, worker) keeps the process alive afterwards.
 */
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../../../src/index.js';
import { childConnection } from './connection.js';

const env = process.env;
const flushTimeoutMillis = Number(env.FLUSH_TIMEOUT_MILLIS);
const exporter = new S3MetricExporter({
  ...childConnection(),
  prefix: 'blackhole-shutdown',
  flushTimeoutMillis,
  maxBatchAgeMillis: 50,
  requestTimeoutMillis: 60_000,
});
const provider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 100 })],
});
const requests = provider.getMeter('child').createCounter('requests');
const traffic = setInterval(() => requests.add(1, { route: '/' }), 5);

// Wait until an upload is stuck in the black hole.
while (exporter.stats().uploadAttempts < 1) await new Promise((r) => setTimeout(r, 20));
clearInterval(traffic);

const started = performance.now();
await provider.shutdown();
const shutdownMillis = performance.now() - started;
console.log(JSON.stringify({ shutdownMillis, stats: exporter.stats() }));
