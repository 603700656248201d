/**
 * S3MetricExporter as the metric exporter of NodeSDK, configured entirely from the environment:
 *
 *   OTEL_SERVICE_NAME=orders OTEL_EXPORTER_S3_BUCKET=metrics \
 *   OTEL_EXPORTER_S3_ENDPOINT=http://127.0.0.1:9000 AWS_ACCESS_KEY_ID=minioadmin AWS_SECRET_ACCESS_KEY=minioadmin \
 *   npx tsx examples/node-sdk.ts
 *
 * NodeSDK.shutdown() passes no timeout to the meter provider; the exporter's own
 * flushTimeoutMillis (OTEL_EXPORTER_S3_FLUSH_TIMEOUT) is what bounds it.
 */
import { metrics } from '@opentelemetry/api';
import { PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { installShutdownHooks, S3MetricExporter } from '../src/index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// This example exports metrics only; without these NodeSDK would also send traces and logs to an
// OTLP endpoint on localhost.
process.env.OTEL_TRACES_EXPORTER ??= 'none';
process.env.OTEL_LOGS_EXPORTER ??= 'none';

const exporter = new S3MetricExporter(); // bucket, endpoint, ... from OTEL_EXPORTER_S3_*
const sdk = new NodeSDK({
  metricReaders: [
    new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: Number(process.env.OTEL_METRIC_EXPORT_INTERVAL ?? 10_000),
    }),
  ],
  instrumentations: [],
});
sdk.start();

// Some work to measure, through the global API that NodeSDK registered.
const meter = metrics.getMeter('orders');
const placed = meter.createCounter('orders.placed');
const value = meter.createHistogram('orders.value', { unit: 'USD' });
const work = setInterval(() => {
  placed.add(1, { region: 'eu' });
  value.record(20 + Math.random() * 80, { region: 'eu' });
}, 20);

// The default deadline (25 s) holds the reader's forceFlush() and shutdown() at the exporter's
// default flushTimeoutMillis (10 s each), inside Kubernetes' 30 s grace period.
installShutdownHooks(sdk, { beforeShutdown: () => clearInterval(work) });
console.log(JSON.stringify({ started: true, pid: process.pid }));
