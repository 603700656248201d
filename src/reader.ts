// `otel-s3-exporter/reader`: finding and reading stored metrics, spans and log records (the
// otel-s3 CLI is built on it), and compacting them.

export { InvalidOptionError } from './base/invalid-option.js';
export {
  type CompactionEvent,
  type CompactionOptions,
  type CompactionReport,
  type CompactMetricsOptions,
  ConditionalWritesUnsupportedError,
  compactLogRecords,
  compactMetrics,
  compactSpans,
  type PartitionReport,
  type PartitionStatus,
  type Tally,
} from './compact/index.js';
export { ZstdUnavailableError } from './compression/zstd-engine.js';
export {
  decodeOtlpProto,
  type OtlpObject,
  type OtlpValue,
  ProtoDecodeError,
} from './encoding/otlp-proto-decode.js';
export type { SignalName } from './layout/formats.js';
export {
  type DecodedObject,
  type DecodeOptions,
  decodeObject,
  decodeStoredObject,
  decodeStoredObjectAsync,
  encodingOfKey,
  ObjectDecodeError,
  type ObjectEncoding,
} from './reader/decode-object.js';
export { type AccessProblem, ObjectGoneError, ReadAccessError } from './reader/errors.js';
export {
  DEFAULT_EXPORT_INTERVAL_MILLIS,
  type KeyLayoutOptions,
  type MetricKey,
  metricKeyParser,
} from './reader/key-layout.js';
export { ObjectTooLargeError } from './reader/read-limits.js';
export {
  listLogRecordObjects,
  listMetricObjects,
  listSpanObjects,
  listStoredObjects,
  type MetricObject,
  type MetricStream,
  type ObjectInfo,
  type ObjectStream,
  type ReadMetricsOptions,
  type ReadObjectsOptions,
  type ReadStats,
  readLogRecords,
  readMetrics,
  readSpans,
  readStoredObjects,
  type SignalsOption,
  type StoredObject,
  type UnreadableObject,
} from './reader/read-metrics.js';
export type {
  DirLocation,
  ListMetricObjectsOptions,
  ListObjectsOptions,
  ReadRangeOptions,
  S3Location,
} from './reader/read-options.js';
export { createReaderClient, type ReaderConnectionOptions } from './reader/s3-source.js';
export { type LogRecordRow, logRecordRows, severityName } from './signals/logs/rows.js';
export {
  anyValue,
  attributes,
  dataPointRows,
  type ExponentialBuckets,
  type HistogramBuckets,
  type InstrumentKind,
  instrumentKind,
  type MetricType,
  nanosToIso,
  type PlainValue,
  type PointRow,
} from './signals/metrics/rows.js';
export {
  type SpanEventRow,
  type SpanKindName,
  type SpanLinkRow,
  type SpanRow,
  type SpanStatusName,
  spanRows,
} from './signals/traces/rows.js';
