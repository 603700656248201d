/**
 * Child process: a service whose S3 is a black hole shuts down the provider of SIGNAL (metrics
 * unless set: a MeterProvider with a PeriodicExportingMetricReader; traces: a TracerProvider with
 * a BatchSpanProcessor; logs: a LoggerProvider with a BatchLogRecordProcessor) with no timeout
 * (as NodeSDK does), prints how long it took, and returns without process.exit(): the parent test
 * checks that nothing (timer, socket, worker) keeps the process alive afterwards.
 */
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import {
  S3LogRecordExporter,
  S3MetricExporter,
  type S3MetricExporterOptions,
  S3SpanExporter,
} from '../../../src/index.js';
import { childConnection } from './connection.js';

const env = process.env;
const signal = env.SIGNAL ?? 'metrics';
const options: S3MetricExporterOptions = {
  ...childConnection(),
  prefix: `blackhole-shutdown/${signal}`,
  flushTimeoutMillis: Number(env.FLUSH_TIMEOUT_MILLIS),
  maxBatchAgeMillis: 50,
  requestTimeoutMillis: 60_000,
};

/** The signal's exporter inside its SDK provider, and a way to make traffic. */
function service(): {
  exporter: S3MetricExporter | S3SpanExporter | S3LogRecordExporter;
  provider: { shutdown(): Promise<void> };
  traffic(): void;
} {
  if (signal === 'traces') {
    const exporter = new S3SpanExporter(options);
    const provider = new TracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 50 })],
    });
    const tracer = provider.getTracer('child');
    return { exporter, provider, traffic: () => tracer.startSpan('GET /').end() };
  }
  if (signal === 'logs') {
    const exporter = new S3LogRecordExporter(options);
    const provider = new LoggerProvider({
      processors: [new BatchLogRecordProcessor({ exporter, scheduledDelayMillis: 50 })],
    });
    const logger = provider.getLogger('child');
    return { exporter, provider, traffic: () => logger.emit({ body: 'GET /' }) };
  }
  const exporter = new S3MetricExporter(options);
  const provider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 100 })],
  });
  const requests = provider.getMeter('child').createCounter('requests');
  return { exporter, provider, traffic: () => requests.add(1, { route: '/' }) };
}

const { exporter, provider, traffic } = service();
const sending = setInterval(traffic, 5);

// Wait until an upload is stuck in the black hole.
while (exporter.stats().uploadAttempts < 1) await new Promise((r) => setTimeout(r, 20));
clearInterval(sending);

const started = performance.now();
await provider.shutdown();
const shutdownMillis = performance.now() - started;
console.log(JSON.stringify({ shutdownMillis, stats: exporter.stats() }));
