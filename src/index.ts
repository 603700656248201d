// `otel-s3-exporter`: the exporter and what a service needs beside it. The reader is the
// `otel-s3-exporter/reader` entry (src/reader.ts): a service that only exports never loads it.
export { ZstdUnavailableError } from './compression/zstd-engine.js';
export {
  type ChecksumMode,
  type Compression,
  DEFAULTS,
  type Format,
  InvalidOptionError,
  type RetryOptions,
  type S3MetricExporterOptions,
  type TemporalityPreference,
} from './config.js';
export { ENVIRONMENT_VARIABLES, optionsFromEnvironment } from './env.js';
export { S3MetricExporter } from './exporter.js';
export { SELF_METRICS_SCOPE } from './self-metrics.js';
export {
  DEFAULT_SHUTDOWN_TIMEOUT_MILLIS,
  installShutdownHooks,
  type ShutdownHookOptions,
  type ShutdownHooks,
  type ShutdownTarget,
} from './shutdown-hooks.js';
export type { ExporterStats, UploadLatency } from './stats.js';
export { objectKey } from './upload/keys.js';
