/**
 * Child process: a service whose S3 is a black hole shuts down the provider of SIGNAL (metrics
 * unless set: a MeterProvider with a PeriodicExportingMetricReader; traces: a TracerProvider with
 * a BatchSpanProcessor; logs: a LoggerProvider with a BatchLogRecordProcessor) with no timeout
 * (as NodeSDK does), prints how long it took, and returns without process.exit(): the parent test
 * checks that nothing (timer, socket, worker) keeps the process alive afterwards.
 */
import type { S3MetricExporterOptions } from '../../../src/index.js';
import { childConnection } from './connection.js';
import { signalService } from './signal-service.js';

const env = process.env;
const signal = env.SIGNAL ?? 'metrics';
const options: S3MetricExporterOptions = {
  ...childConnection(),
  prefix: `blackhole-shutdown/${signal}`,
  flushTimeoutMillis: Number(env.FLUSH_TIMEOUT_MILLIS),
  maxBatchAgeMillis: 50,
  requestTimeoutMillis: 60_000,
};

const { exporter, provider, traffic } = signalService(
  signal,
  options,
  { name: 'child', scheduledDelayMillis: 50, exportIntervalMillis: 100 },
  {
    traces: (tracer) => () => tracer.startSpan('GET /').end(),
    logs: (logger) => () => logger.emit({ body: 'GET /' }),
    metrics: (meter) => {
      const requests = meter.createCounter('requests');
      return () => requests.add(1, { route: '/' });
    },
  },
);
const sending = setInterval(traffic, 5);

// Wait until an upload is stuck in the black hole.
while (exporter.stats().uploadAttempts < 1) await new Promise((r) => setTimeout(r, 20));
clearInterval(sending);

const started = performance.now();
await provider.shutdown();
const shutdownMillis = performance.now() - started;
console.log(JSON.stringify({ shutdownMillis, stats: exporter.stats() }));
