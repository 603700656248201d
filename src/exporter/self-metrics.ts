import type { BatchObservableResult, MeterProvider, Observable } from '@opentelemetry/api';
import type { ExporterStats } from '../pipeline/stats.js';
import type { SignalName } from '../signals/signal.js';

/** Name of the meter the exporter's own metrics are recorded under. */
export const SELF_METRICS_SCOPE = 'otel-s3-exporter';

export interface SelfMetrics {
  /** Records one successful upload's latency. */
  recordUploadLatency(millis: number): void;
  /** Stops reporting. */
  unregister(): void;
}

/**
 * The exporter's stats() as OpenTelemetry metrics: observable counters and gauges read from one
 * stats() snapshot per collection, and a histogram of upload latency.
 */
export function registerSelfMetrics(
  meterProvider: MeterProvider,
  signal: SignalName,
  stats: () => ExporterStats,
): SelfMetrics {
  const meter = meterProvider.getMeter(SELF_METRICS_SCOPE);
  const counter = (name: string, unit: string, description: string) =>
    meter.createObservableCounter(name, { unit, description });
  const gauge = (name: string, unit: string, description: string) =>
    meter.createObservableGauge(name, { unit, description });

  const batches = counter(
    's3_exporter.batches',
    '{batch}',
    'Batches by outcome: sealed, uploaded, dropped',
  );
  const bytes = counter(
    's3_exporter.uploaded.bytes',
    'By',
    'Bytes uploaded, as stored and uncompressed',
  );
  const points = counter(
    's3_exporter.data_points',
    '{data_point}',
    'Data points uploaded, and dropped by reason',
  );
  const maybeStored = counter(
    's3_exporter.data_points.maybe_stored',
    '{data_point}',
    'Of the data points dropped, those S3 may hold after all: an attempt of their batch got no answer',
  );
  const attempts = counter(
    's3_exporter.upload.attempts',
    '{attempt}',
    'PutObject attempts, including retries',
  );
  const failures = counter('s3_exporter.upload.failures', '{attempt}', 'Failed attempts by reason');
  const exports = counter('s3_exporter.exports', '{export}', 'export() calls by result');
  const buffered = gauge(
    's3_exporter.buffered.bytes',
    'By',
    'Bytes held now (bounded by maxBufferedBytes)',
  );
  const pending = gauge(
    's3_exporter.pending.batches',
    '{batch}',
    'Sealed batches not yet stored or dropped',
  );
  const latency = meter.createHistogram('s3_exporter.upload.duration', {
    unit: 's',
    description: 'From the first attempt of a batch to its acknowledgement by S3',
  });

  const observables: Observable[] = [
    batches,
    bytes,
    points,
    maybeStored,
    attempts,
    failures,
    exports,
    buffered,
    pending,
  ];
  const observe = (result: BatchObservableResult) => {
    const s = stats();
    result.observe(batches, s.batchesSealed, { signal, outcome: 'sealed' });
    result.observe(batches, s.batchesUploaded, { signal, outcome: 'uploaded' });
    result.observe(batches, s.batchesDropped, { signal, outcome: 'dropped' });
    result.observe(bytes, s.bytesUploaded, { signal, form: 'stored' });
    result.observe(bytes, s.rawBytesUploaded, { signal, form: 'raw' });
    result.observe(points, s.pointsUploaded, { signal, outcome: 'uploaded' });
    for (const [reason, n] of Object.entries(s.pointsDroppedByReason)) {
      result.observe(points, n, { signal, outcome: 'dropped', reason });
    }
    result.observe(maybeStored, s.pointsDroppedMaybeStored, { signal });
    result.observe(attempts, s.uploadAttempts, { signal });
    for (const [reason, n] of Object.entries(s.uploadFailures))
      result.observe(failures, n, { signal, reason });
    result.observe(exports, s.exportsAccepted, { signal, result: 'accepted' });
    result.observe(exports, s.exportsRejected, { signal, result: 'rejected' });
    result.observe(buffered, s.bufferedBytes, { signal });
    result.observe(pending, s.pendingBatches, { signal });
  };
  meter.addBatchObservableCallback(observe, observables);

  let active = true;
  return {
    recordUploadLatency: (millis) => {
      if (active) latency.record(millis / 1000, { signal });
    },
    unregister: () => {
      active = false;
      meter.removeBatchObservableCallback(observe, observables);
    },
  };
}
