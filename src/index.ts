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
export {
  decodeOtlpProto,
  type OtlpObject,
  type OtlpValue,
  ProtoDecodeError,
} from './encoding/otlp-proto-decode.js';
export { ENVIRONMENT_VARIABLES, optionsFromEnvironment } from './env.js';
export { S3MetricExporter } from './exporter.js';
export {
  type DecodedObject,
  decodeObject,
  decodeStoredObject,
  decodeStoredObjectAsync,
  encodingOfKey,
  ObjectDecodeError,
  type ObjectEncoding,
} from './reader/decode-object.js';
export { type AccessProblem, ReadAccessError } from './reader/errors.js';
export {
  DEFAULT_EXPORT_INTERVAL_MILLIS,
  type KeyLayoutOptions,
  type MetricKey,
  metricKeyParser,
} from './reader/key-layout.js';
export {
  anyValue,
  attributes,
  dataPointRows,
  type InstrumentKind,
  instrumentKind,
  type MetricType,
  nanosToIso,
  type PlainValue,
  type PointRow,
} from './reader/points.js';
export {
  listMetricObjects,
  type MetricObject,
  type MetricStream,
  type ObjectInfo,
  type ReadMetricsOptions,
  type ReadStats,
  readMetrics,
  type UnreadableObject,
} from './reader/read-metrics.js';
export type {
  DirLocation,
  ListMetricObjectsOptions,
  ReadRangeOptions,
  S3Location,
} from './reader/read-options.js';
export { createReaderClient, type ReaderConnectionOptions } from './reader/s3-source.js';
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
