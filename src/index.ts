// `otel-s3-exporter`: the exporter and what a service needs beside it. The reader is the
// `otel-s3-exporter/reader` entry (src/reader.ts): a service that only exports never loads it.

export { InvalidOptionError } from './base/invalid-option.js';
export { ZstdUnavailableError } from './compression/zstd-engine.js';
export { ENVIRONMENT_VARIABLES, optionsFromEnvironment } from './config/environment.js';
export {
  type ChecksumMode,
  type Compression,
  DEFAULTS,
  type Format,
  type RetryOptions,
  type S3LogRecordExporterOptions,
  type S3MetricExporterOptions,
  type S3SpanExporterOptions,
  type TemporalityPreference,
} from './config/options.js';
export { S3Exporters, type SignalOptions } from './exporter/exporters.js';
export { S3LogRecordExporter } from './exporter/log-exporter.js';
export { S3MetricExporter } from './exporter/metric-exporter.js';
export { SELF_METRICS_SCOPE } from './exporter/self-metrics.js';
export {
  DEFAULT_SHUTDOWN_TIMEOUT_MILLIS,
  installShutdownHooks,
  type ShutdownHookOptions,
  type ShutdownHooks,
  type ShutdownTarget,
} from './exporter/shutdown-hooks.js';
export { S3SpanExporter } from './exporter/span-exporter.js';
export { objectKey } from './layout/keys.js';
export type { ExporterStats, UploadLatency } from './pipeline/stats.js';
export { SpoolLockedError } from './spool/lock.js';
