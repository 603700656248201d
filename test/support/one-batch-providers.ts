import type { Resource } from '@opentelemetry/resources';
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type LogRecordExporter,
} from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';

/** Batch processor settings that hold a test's items until its flush: one export of them all. */
export const ONE_BATCH = {
  scheduledDelayMillis: 60_000,
  maxExportBatchSize: 1_000,
  maxQueueSize: 2_000,
};

/** A TracerProvider of `resource` whose BatchSpanProcessor hands `exporter` one batch at the flush. */
export const oneBatchTracerProvider = (resource: Resource, exporter: SpanExporter) =>
  new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter, ...ONE_BATCH })],
  });

/**
 * A LoggerProvider of `resource` whose BatchLogRecordProcessor hands `exporter` one batch at the
 * flush, with two loggers: `app` 1.0.0 (a schema URL and a scope attribute) and `jobs`.
 */
export function oneBatchLoggers(resource: Resource, exporter: LogRecordExporter) {
  const provider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter, ...ONE_BATCH })],
  });
  const loggers = [
    provider.getLogger('app', '1.0.0', {
      schemaUrl: 'https://opentelemetry.io/schemas/1.28.0',
      attributes: { 'scope.tier': 'gold' },
    }),
    provider.getLogger('jobs'),
  ];
  return { provider, loggers };
}
