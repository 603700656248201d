import { configure } from '../config/environment.js';
import type { S3LogRecordExporterOptions } from '../config/options.js';
import { logsExport } from '../signals/logs/export.js';
import type { LogRecordLike } from '../signals/logs/log-record.js';
import { sharedPartsOf } from './shared-parts.js';
import { SignalExporter } from './signal-exporter.js';

/**
 * OpenTelemetry log record exporter that writes batches of log records (OTLP/JSON, protobuf) to
 * S3-compatible object storage, for a BatchLogRecordProcessor or NodeSDK. export() only appends
 * to an in-memory batch under a short mutex; batches are compressed off the event loop and
 * uploaded in the background, so neither export() nor a shutdown can block on storage. Objects
 * are named `…/logs_{uuid}…`, beside the metrics' `metrics_`.
 *
 * A LogRecordExporter of @opentelemetry/sdk-logs, typed by what it reads of a record
 * (LogRecordLike) so that its declarations need no SDK a metrics-only service may not have
 * installed (an optional peer).
 */
export class S3LogRecordExporter extends SignalExporter<readonly LogRecordLike[]> {
  /** Options win over OTEL_EXPORTER_S3_LOGS_* over OTEL_EXPORTER_S3_* variables over defaults. */
  constructor(options: S3LogRecordExporterOptions = {}) {
    super(configure(options, process.env, 'logs'), logsExport, sharedPartsOf(options));
  }
}
