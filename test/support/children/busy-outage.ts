/**
 * Child process: a busy service exports SIGNAL (metrics unless set: a MeterProvider with a
 * PeriodicExportingMetricReader; traces: a TracerProvider with a BatchSpanProcessor; logs: a
 * LoggerProvider with a BatchLogRecordProcessor) for DURATION_MILLIS while S3 is a black hole,
 * and prints one JSON sample of its memory and the exporter's accounting every SAMPLE_MILLIS.
 */
import type { S3MetricExporterOptions } from '../../../src/index.js';
import { childConnection } from './connection.js';
import { signalService } from './signal-service.js';

const env = process.env;
const maxBufferedBytes = Number(env.MAX_BUFFERED_BYTES);

/**
 * With --expose-gc: live memory after full collections. Unlike RSS (which follows the heap's
 * growth policy and the allocator), this moves only with what is really held, so a leak shows
 * and heap growth does not. `bufferedBytes` is what the exporter says it holds at that moment.
 */
const gc = (globalThis as { gc?: () => void }).gc;
async function checkpoint(name: string, bufferedBytes: () => number): Promise<void> {
  if (gc === undefined) return;
  gc();
  await new Promise((resolve) => setImmediate(resolve)); // finalizers free native memory
  gc();
  const m = process.memoryUsage();
  console.log(
    JSON.stringify({
      checkpoint: name,
      heapUsed: m.heapUsed,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      bufferedBytes: bufferedBytes(),
    }),
  );
}
// Before the exporter exists: what the process holds without it.
await checkpoint('baseline', () => 0);

const signal = env.SIGNAL ?? 'metrics';
const options: S3MetricExporterOptions = {
  ...childConnection(),
  prefix: `busy-outage/${signal}`,
  maxBufferedBytes,
  maxBatchBytes: Math.floor(maxBufferedBytes / 16),
  requestTimeoutMillis: 2_000,
  flushTimeoutMillis: 500,
  retry: { initialDelayMillis: 100, maxDelayMillis: 1_000 },
};
const SERIES = 1_000;
/** A request's attributes, as a service's instrumentation sets them. */
function request(): Record<string, string> {
  const series = Math.floor(Math.random() * SERIES);
  return { route: `/api/items/${series}`, method: series % 2 ? 'GET' : 'POST', pod: 'pod-7' };
}

/** The signal's exporter inside its SDK provider, and one request's worth of its telemetry. */
const service = signalService(
  signal,
  options,
  { name: 'busy', scheduledDelayMillis: 100, maxQueueSize: 4096, exportIntervalMillis: 100 },
  {
    traces: (tracer) => () => tracer.startSpan('GET /api/items', { attributes: request() }).end(),
    logs: (logger) => () => {
      const attributes = request();
      logger.emit({
        severityNumber: 9,
        severityText: 'INFO',
        body: `${attributes.method} ${attributes.route} ${Math.random()}`,
        attributes,
      });
    },
    metrics: (meter) => {
      const requests = meter.createCounter('http.requests');
      const latency = meter.createHistogram('http.latency', { unit: 's' });
      return () => {
        const attributes = request();
        requests.add(1, attributes);
        latency.record(Math.random(), attributes);
      };
    },
  },
);
const { exporter, provider } = service;
const handle = service.traffic;
const traffic = setInterval(() => {
  for (let i = 0; i < 200; i++) handle();
}, 10);

const started = performance.now();
const sampler = setInterval(
  () => {
    const m = process.memoryUsage();
    const s = exporter.stats();
    console.log(
      JSON.stringify({
        t: Math.round(performance.now() - started),
        rss: m.rss,
        heapTotal: m.heapTotal,
        heapUsed: m.heapUsed,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        bufferedBytes: s.bufferedBytes,
        peakBufferedBytes: s.peakBufferedBytes,
        batchesDropped: s.batchesDropped,
        pointsDropped: s.pointsDropped,
        pointsDroppedByReason: s.pointsDroppedByReason,
        exportsRejected: s.exportsRejected,
        uploadAttempts: s.uploadAttempts,
      }),
    );
  },
  Number(env.SAMPLE_MILLIS ?? 500),
);

const duration = Number(env.DURATION_MILLIS ?? 15_000);
const held = () => exporter.stats().bufferedBytes;
setTimeout(() => checkpoint('middle', held), duration / 2);
setTimeout(() => checkpoint('end', held), duration - 500);

setTimeout(async () => {
  clearInterval(traffic);
  clearInterval(sampler);
  await provider.shutdown();
  console.log(JSON.stringify({ done: true }));
  process.exit(0);
}, duration);
