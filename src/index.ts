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
export { decodeObject, encodingOfKey, type ObjectEncoding } from './reader/decode-object.js';
export {
  anyValue,
  attributes,
  dataPointRows,
  type MetricType,
  type PlainValue,
  type PointRow,
} from './reader/points.js';
export { SELF_METRICS_SCOPE } from './self-metrics.js';
export {
  installShutdownHooks,
  type ShutdownHookOptions,
  type ShutdownHooks,
  type ShutdownTarget,
} from './shutdown-hooks.js';
export type { ExporterStats, UploadLatency } from './stats.js';
export { OBJECT_KEY_PATTERN, objectKey } from './upload/keys.js';
