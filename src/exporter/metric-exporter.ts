import type {
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { configure } from '../config/environment.js';
import type { S3MetricExporterOptions } from '../config/options.js';
import { metricsExport } from '../signals/metrics/export.js';
import { temporalitySelector } from '../signals/metrics/temporality.js';
import { sharedPartsOf } from './shared-parts.js';
import { SignalExporter } from './signal-exporter.js';

/**
 * OpenTelemetry push metric exporter that writes batches of OTLP metrics (or Parquet) to
 * S3-compatible object storage, for a PeriodicExportingMetricReader or NodeSDK. export() only
 * appends to an in-memory batch under a short mutex; batches are compressed off the event loop
 * and uploaded in the background, so neither export() nor a shutdown can block on storage.
 */
export class S3MetricExporter
  extends SignalExporter<ResourceMetrics>
  implements PushMetricExporter
{
  readonly #selectTemporality: (type: InstrumentType) => AggregationTemporality;

  /** Options win over OTEL_EXPORTER_S3_* environment variables, which win over defaults. */
  constructor(options: S3MetricExporterOptions = {}) {
    const config = configure(options);
    const select = temporalitySelector(config.temporalityPreference);
    super(config, metricsExport, sharedPartsOf(options));
    this.#selectTemporality = select;
  }

  selectAggregationTemporality(instrumentType: InstrumentType): AggregationTemporality {
    return this.#selectTemporality(instrumentType);
  }
}
