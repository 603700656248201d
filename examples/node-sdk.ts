/**
 * otel-s3-exporter as NodeSDK's exporter of all three signals, configured entirely from the
 * environment:
 *
 *   OTEL_SERVICE_NAME=orders OTEL_EXPORTER_S3_BUCKET=telemetry \
 *   OTEL_EXPORTER_S3_ENDPOINT=http://127.0.0.1:9000 AWS_ACCESS_KEY_ID=minioadmin AWS_SECRET_ACCESS_KEY=minioadmin \
 *   node --import tsx examples/node-sdk.ts
 *
 * (Not `npx tsx`: npx exits on SIGTERM without passing it on, and the service never hears it.)
 *
 * The three exporters come from one S3Exporters: one connection, one memory bound, one spool
 * directory. NodeSDK.shutdown() passes no timeout to the providers; the exporters' own
 * flushTimeoutMillis (OTEL_EXPORTER_S3_FLUSH_TIMEOUT) is what bounds it.
 */
import * as api from '@opentelemetry/api';
import { BatchLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';
// In your own project: from 'otel-s3-exporter' (this repository's examples run on its source).
import { installShutdownHooks, S3Exporters } from '../src/index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const s3 = new S3Exporters(); // bucket, endpoint, ... from OTEL_EXPORTER_S3_*
const sdk = new NodeSDK({
  metricReaders: [
    new PeriodicExportingMetricReader({
      exporter: s3.metricExporter(),
      exportIntervalMillis: Number(process.env.OTEL_METRIC_EXPORT_INTERVAL ?? 10_000),
    }),
  ],
  spanProcessors: [
    new BatchSpanProcessor({ exporter: s3.spanExporter(), scheduledDelayMillis: 200 }),
  ],
  logRecordProcessors: [
    new BatchLogRecordProcessor({ exporter: s3.logRecordExporter(), scheduledDelayMillis: 200 }),
  ],
  instrumentations: [],
});
sdk.start();

// Some work to measure, trace and log, through the global APIs that NodeSDK registered. The logs
// API is part of @opentelemetry/api from OpenTelemetry JS 3.x on (2.x: @opentelemetry/api-logs).
const { logs } = api as unknown as {
  logs: { getLogger(name: string): { emit(record: Record<string, unknown>): void } };
};
const meter = api.metrics.getMeter('orders');
const tracer = api.trace.getTracer('orders');
const logger = logs.getLogger('orders');
const placed = meter.createCounter('orders.placed');
const value = meter.createHistogram('orders.value', { unit: 'USD' });
const work = setInterval(() => {
  tracer.startActiveSpan('place order', (span) => {
    const usd = 20 + Math.random() * 80;
    placed.add(1, { region: 'eu' });
    value.record(usd, { region: 'eu' });
    logger.emit({ severityText: 'INFO', body: 'order placed', attributes: { usd } });
    span.end();
  });
}, 20);

// The default deadline (25 s) holds the providers' forceFlush() and shutdown() at the exporters'
// default flushTimeoutMillis (10 s each), inside Kubernetes' 30 s grace period. What is logged in
// beforeShutdown is stored too: the providers are shut down after it.
installShutdownHooks(sdk, {
  beforeShutdown: () => {
    clearInterval(work);
    logger.emit({ severityText: 'INFO', body: 'shutting down' });
  },
});
console.log(JSON.stringify({ started: true, pid: process.pid }));
