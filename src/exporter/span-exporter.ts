import { configure } from '../config/environment.js';
import type { S3SpanExporterOptions } from '../config/options.js';
import { tracesExport } from '../signals/traces/export.js';
import type { SpanLike } from '../signals/traces/span.js';
import { sharedPartsOf } from './shared-parts.js';
import { SignalExporter } from './signal-exporter.js';

/**
 * OpenTelemetry span exporter that writes batches of spans (OTLP/JSON, protobuf) to
 * S3-compatible object storage, for a BatchSpanProcessor (or SimpleSpanProcessor) or NodeSDK.
 * export() only appends to an in-memory batch under a short mutex; batches are compressed off the
 * event loop and uploaded in the background, so neither export() nor a shutdown can block on
 * storage. Objects are named `…/traces_{uuid}…`, beside the metrics' `metrics_`.
 *
 * A SpanExporter of @opentelemetry/sdk-trace, typed by what it reads of a span (SpanLike) so that
 * its declarations need no SDK a metrics-only service may not have installed (an optional peer).
 */
export class S3SpanExporter extends SignalExporter<readonly SpanLike[]> {
  /** Options win over OTEL_EXPORTER_S3_TRACES_* over OTEL_EXPORTER_S3_* variables over defaults. */
  constructor(options: S3SpanExporterOptions = {}) {
    super(configure(options, process.env, 'traces'), tracesExport, sharedPartsOf(options));
  }
}
