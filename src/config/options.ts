import type { S3Client, S3ClientConfig, StorageClass } from '@aws-sdk/client-s3';
import {
  COMPRESSION_ROWS,
  type Compression,
  defaultKeyTemplate,
  FORMAT_ROWS,
  type Format,
} from '../layout/formats.js';
import type { PartitionTime, PartitionTimeZone } from '../layout/key-template.js';
import type { ChecksumMode } from '../s3/client-settings.js';
import type { TemporalityPreference } from '../signals/metrics/temporalities.js';

export {
  PARTITION_TIMES,
  type PartitionTime,
  type PartitionTimeZone,
  TIME_ZONES,
} from '../layout/key-template.js';
export { CHECKSUM_MODES, type ChecksumMode } from '../s3/client-settings.js';
export {
  TEMPORALITIES,
  type TemporalityPreference,
} from '../signals/metrics/temporalities.js';

import type { SpoolFileSystem } from '../spool/file-system.js';

export {
  COMPRESSIONS,
  type Compression,
  FORMATS,
  type Format,
} from '../layout/formats.js';
export const SSE_MODES = ['AES256', 'aws:kms', 'aws:kms:dsse'] as const;
/**
 * S3's storage classes, as the SDK's `StorageClass` lists them (a test holds the two equal):
 * listed here so that validating an option does not load `@aws-sdk/client-s3`.
 */
export const STORAGE_CLASSES = [
  'AWS_BACKUP_LOW_COST_WARM',
  'AWS_BACKUP_WARM',
  'DEEP_ARCHIVE',
  'EXPRESS_ONEZONE',
  'FSX_ONTAP',
  'FSX_OPENZFS',
  'GLACIER',
  'GLACIER_IR',
  'INTELLIGENT_TIERING',
  'ONEZONE_IA',
  'OUTPOSTS',
  'REDUCED_REDUNDANCY',
  'SNOW',
  'STANDARD',
  'STANDARD_IA',
] as const satisfies readonly StorageClass[];

export type ServerSideEncryptionMode = (typeof SSE_MODES)[number];

const KiB = 1024;
const MiB = 1024 * KiB;

const FORMAT = 'otlp-json' satisfies Format;

/**
 * Every default in one place; the README's options table is this object. What depends on the
 * format or the compression is read from their rows (src/layout/formats.ts): here for the defaults,
 * `FORMAT_ROWS[format]` and `COMPRESSION_ROWS[compression].levels` for the others.
 */
export const DEFAULTS = {
  prefix: '',
  filePrefix: '',
  format: FORMAT,
  compression: 'zstd',
  zstdLevel: COMPRESSION_ROWS.zstd.levels.default,
  gzipLevel: COMPRESSION_ROWS.gzip.levels.default,
  maxBatchBytes: 8 * MiB,
  maxBatchAgeMillis: FORMAT_ROWS[FORMAT].maxBatchAgeMillis,
  maxBufferedBytes: 64 * MiB,
  uploadConcurrency: 4,
  requestTimeoutMillis: 10_000,
  flushTimeoutMillis: 10_000,
  temporalityPreference: 'cumulative',
  conditionalWrites: true,
  startupCheck: true,
  retryInitialDelayMillis: 250,
  retryMaxDelayMillis: 30_000,
  maxSpoolBytes: 256 * MiB,
  spoolTimeoutMillis: 5_000,
  journalSyncMillis: 1_000,
  keyTemplate: defaultKeyTemplate(FORMAT, 'metrics'),
  partitionTime: 'upload',
  partitionTimeZone: 'UTC',
} as const;

/** The readers' defaults: the reader API, the compactor and the CLI. */
export const READ_DEFAULTS = {
  /**
   * 32: a lookup over a lake of small objects (a trace in 10-minute files: 720 GETs for 6 hours
   * of one instance) waits for each GET's round trip 32 at a time, not 8 (4.5 s → 2.2 s on the
   * local Ceph server); readAheadBytes keeps large objects from taking 32 times the memory.
   */
  concurrency: 32,
  /**
   * The listed bytes of the objects fetched ahead of the one being read, at most (one object,
   * whatever its size, is always fetched): what reading holds in memory, however many objects
   * `concurrency` allows.
   */
  readAheadBytes: 32 * MiB,
  /**
   * 64 MiB: the exporter's default maxBufferedBytes, which bounds every object it writes (batches
   * seal at maxBatchBytes, 8 MiB by default; only one export larger than that is stored alone, and
   * it must fit in maxBufferedBytes). Refusing a decompression bomb costs at most this much
   * memory, and decoding an object of this size can already take a gigabyte of heap for hostile
   * JSON.
   */
  maxDecompressedBytes: 64 * MiB,
  /** The OpenTelemetry SDK's default metric export interval (OTEL_METRIC_EXPORT_INTERVAL). */
  exportIntervalMillis: 60_000,
} as const;

/** The compactor's defaults (compactMetrics(), `otel-s3 compact`). */
export const COMPACTION_DEFAULTS = {
  targetFileBytes: 128 * MiB,
  compression: 'zstd',
  partitionConcurrency: 1,
  leaseMillis: 10 * 60_000,
  /** Compactors' clocks may be this far apart: an expired lease is taken over only this much later. */
  leaseClockSkewMillis: 60_000,
} as const;

export interface RetryOptions {
  /** Upper bound of the first backoff (full jitter: the wait is uniform in [0, bound]). Default 250. */
  initialDelayMillis?: number;
  /** Cap of the backoff bound, and the pace of retries during configuration faults. Default 30000. */
  maxDelayMillis?: number;
}

export interface S3MetricExporterOptions {
  /** Target bucket. Required, here or in OTEL_EXPORTER_S3_BUCKET. */
  bucket?: string;
  /** Key prefix, e.g. `prod/checkout`. No leading or trailing `/` needed; `..` is rejected. */
  prefix?: string;
  /** Text put before `metrics_` (`traces_`, `logs_`) in every object name. */
  filePrefix?: string;
  /** AWS region. Default: AWS_REGION or AWS_DEFAULT_REGION, else `us-east-1`. */
  region?: string;
  /** Endpoint URL of an S3-compatible server, e.g. `http://127.0.0.1:9000`. */
  endpoint?: string;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most self-hosted servers. Default: true when `endpoint` is set. */
  forcePathStyle?: boolean;
  /** Static credentials or a provider. Default: the AWS SDK's default provider chain. */
  credentials?: S3ClientConfig['credentials'];
  /** Bring your own client; then region, endpoint, forcePathStyle, credentials and requestChecksumCalculation are ignored. */
  s3Client?: S3Client;
  /** Object format. Default `otlp-json`. */
  format?: Format;
  /** Object compression. Default `zstd`. */
  compression?: Compression;
  /** zstd level 1..19 (default 3) or gzip level 1..9 (default 6). */
  compressionLevel?: number;
  /** The open batch is sealed once it holds this many uncompressed bytes. Default 8 MiB. */
  maxBatchBytes?: number;
  /** The open batch is sealed this long after its first export. Default 60000 (Parquet: 600000). */
  maxBatchAgeMillis?: number;
  /** Bound over every byte the exporter holds: open batch, sealed, compressing, uploading, retrying. Default 64 MiB. */
  maxBufferedBytes?: number;
  /** Uploads in flight at once. Default 4. */
  uploadConcurrency?: number;
  /** Deadline of one PutObject request; the request is aborted after it. Default 10000. */
  requestTimeoutMillis?: number;
  /** Deadline of forceFlush() and, separately, of shutdown(). Default 10000. */
  flushTimeoutMillis?: number;
  /** Aggregation temporality per instrument kind, as in the OTLP exporters. Default `cumulative`. */
  temporalityPreference?: TemporalityPreference;
  /** Send `If-None-Match: *` so a retried upload can never overwrite or duplicate an object. Default true. */
  conditionalWrites?: boolean;
  /**
   * At start, one PutObject that stores nothing (an empty body with a wrong Content-MD5), so a
   * wrong endpoint, secret, bucket or permission is reported in seconds, not at the first upload.
   * Default true.
   */
  startupCheck?: boolean;
  /** AWS SDK checksum mode. Default `WHEN_REQUIRED` with a custom endpoint (many S3-compatible servers reject the SDK's default CRC32 trailers), else `WHEN_SUPPORTED`. */
  requestChecksumCalculation?: ChecksumMode;
  /** Backoff of retried uploads. */
  retry?: RetryOptions;
  /**
   * Directory of the durable disk spool (off by default). Every sealed batch is written there
   * before its first upload and deleted once S3 acknowledged it; an earlier run's batches are
   * uploaded at start. One exporter per directory: it is opened in the background, and while
   * another process holds it the exporter runs from memory (`stats().spool.state`).
   */
  spoolDir?: string;
  /** Bound of the spool on disk; the oldest files are evicted beyond it. Default 256 MiB. */
  maxSpoolBytes?: number;
  /**
   * Deadline of every spool operation (opening, listing, reading, writing, deleting, moving a
   * file). Past it the disk counts as stalled: batches go on to S3 from memory and no new spool
   * I/O starts until the overdue one returns. Default 5000.
   */
  spoolTimeoutMillis?: number;
  /**
   * With spoolDir, every export appended to the open batch is also copied to a journal in the
   * spool, written and fsynced once per this interval off the event loop (a group commit), and
   * replayed exactly once after a crash: a kill -9 loses at most about this much, whatever
   * maxBatchAgeMillis. 0 turns the journal off (a crash then loses the open batch). Default 1000.
   */
  journalSyncMillis?: number;
  /** File operations of the spool (tests inject failures here). Default: node:fs. */
  spoolFileSystem?: SpoolFileSystem;
  /**
   * Object key after the prefix, without the extension. Tokens: %Y %m %d %H %M %S %j %%,
   * `{uuid}` (required, in the last segment), `{filePrefix}`, and resource attributes such as
   * `{service.name}`, `{service.instance.id}`, `{host.name}` (sanitized to [A-Za-z0-9._-]).
   * Default `year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuid}`.
   */
  keyTemplate?: string;
  /** Time that places an object: when its batch was sealed for upload, or its oldest data point. Default `upload`. */
  partitionTime?: PartitionTime;
  /** Time zone of the key's time tokens. Default `UTC`. */
  partitionTimeZone?: PartitionTimeZone;
  /** Server-side encryption of every object. Default: the bucket's default encryption. */
  serverSideEncryption?: ServerSideEncryptionMode;
  /** KMS key id or ARN for `aws:kms` / `aws:kms:dsse`. Default: the account's `aws/s3` key. */
  sseKmsKeyId?: string;
  /** Storage class of every object, e.g. `STANDARD_IA`. Default: the bucket's (STANDARD). */
  storageClass?: StorageClass;
  /** Tags of every object (at most 10; keys up to 128 characters, values up to 256). */
  tags?: Record<string, string>;
  /** User metadata of every object (`x-amz-meta-*`; ASCII; at most 2 KB in all). */
  metadata?: Record<string, string>;
  /** Added to the user agent of the exporter's requests (`otel-s3-exporter …`). */
  userAgent?: string;
}

/** The options of S3SpanExporter: S3MetricExporter's, but for the metrics' temporality. */
export type S3SpanExporterOptions = Omit<S3MetricExporterOptions, 'temporalityPreference'>;

/** The options of S3LogRecordExporter: S3MetricExporter's, but for the metrics' temporality. */
export type S3LogRecordExporterOptions = Omit<S3MetricExporterOptions, 'temporalityPreference'>;
