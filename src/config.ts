import {
  type PutObjectCommandInput,
  type S3Client,
  type S3ClientConfig,
  StorageClass,
} from '@aws-sdk/client-s3';
import { InvalidOptionError } from './invalid-option.js';
import type { SpoolFileSystem } from './spool/file-system.js';
import { KeyTemplate } from './upload/key-template.js';

export { InvalidOptionError };

export const FORMATS = ['otlp-json', 'otlp-proto'] as const;
export const COMPRESSIONS = ['zstd', 'gzip', 'none'] as const;
export const TEMPORALITIES = ['cumulative', 'delta', 'lowmemory'] as const;
export const CHECKSUM_MODES = ['WHEN_SUPPORTED', 'WHEN_REQUIRED'] as const;
export const SSE_MODES = ['AES256', 'aws:kms', 'aws:kms:dsse'] as const;
export const STORAGE_CLASSES = Object.values(StorageClass);
export const PARTITION_TIMES = ['upload', 'data'] as const;
export const TIME_ZONES = ['UTC', 'local'] as const;

export type Format = (typeof FORMATS)[number];
export type Compression = (typeof COMPRESSIONS)[number];
export type TemporalityPreference = (typeof TEMPORALITIES)[number];
export type ChecksumMode = (typeof CHECKSUM_MODES)[number];
export type ServerSideEncryptionMode = (typeof SSE_MODES)[number];
export type PartitionTime = (typeof PARTITION_TIMES)[number];

const KiB = 1024;
const MiB = 1024 * KiB;
/** setTimeout clamps anything larger to 1 ms, so no timing option may exceed it. */
const MAX_TIMER_MILLIS = 2 ** 31 - 1;
/** S3 keys are at most 1024 bytes; keep room for the partition path and the file name. */
const MAX_PREFIX_BYTES = 512;

export const DEFAULTS = {
  format: 'otlp-json',
  compression: 'zstd',
  maxBatchBytes: 8 * MiB,
  maxBatchAgeMillis: 60_000,
  maxBufferedBytes: 64 * MiB,
  uploadConcurrency: 4,
  requestTimeoutMillis: 10_000,
  flushTimeoutMillis: 10_000,
  temporalityPreference: 'cumulative',
  conditionalWrites: true,
  retryInitialDelayMillis: 250,
  retryMaxDelayMillis: 30_000,
  zstdLevel: 3,
  gzipLevel: 6,
  maxSpoolBytes: 256 * MiB,
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
  /** Text put before `metrics_` in every object name. */
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
  /** The open batch is sealed this long after its first export. Default 60000. */
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
  /** AWS SDK checksum mode. Default `WHEN_REQUIRED` with a custom endpoint (many S3-compatible servers reject the SDK's default CRC32 trailers), else `WHEN_SUPPORTED`. */
  requestChecksumCalculation?: ChecksumMode;
  /** Backoff of retried uploads. */
  retry?: RetryOptions;
  /**
   * Directory of the durable disk spool (off by default). Every sealed batch is written there
   * before its first upload and deleted once S3 acknowledged it; an earlier run's batches are
   * uploaded at start. One exporter per directory.
   */
  spoolDir?: string;
  /** Bound of the spool on disk; the oldest files are evicted beyond it. Default 256 MiB. */
  maxSpoolBytes?: number;
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
  partitionTimeZone?: 'UTC' | 'local';
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
  /** Added to the AWS SDK user agent of the client the exporter creates. */
  userAgent?: string;
}

export interface ResolvedConfig {
  bucket: string;
  /** Normalized: no leading or trailing slash, may be empty. */
  prefix: string;
  filePrefix: string;
  region: string | undefined;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  credentials: S3ClientConfig['credentials'] | undefined;
  s3Client: S3Client | undefined;
  format: Format;
  compression: Compression;
  compressionLevel: number;
  maxBatchBytes: number;
  maxBatchAgeMillis: number;
  maxBufferedBytes: number;
  uploadConcurrency: number;
  requestTimeoutMillis: number;
  flushTimeoutMillis: number;
  temporalityPreference: TemporalityPreference;
  conditionalWrites: boolean;
  requestChecksumCalculation: ChecksumMode;
  retryInitialDelayMillis: number;
  retryMaxDelayMillis: number;
  spoolDir: string | undefined;
  maxSpoolBytes: number;
  spoolFileSystem: SpoolFileSystem | undefined;
  keys: KeyTemplate;
  partitionTime: PartitionTime;
  /** Fixed PutObject fields: encryption, storage class, tags, metadata. */
  putObject: Pick<
    PutObjectCommandInput,
    'ServerSideEncryption' | 'SSEKMSKeyId' | 'StorageClass' | 'Tagging' | 'Metadata'
  >;
  userAgent: string | undefined;
}

function oneOf<T extends string, F extends T | undefined>(
  option: string,
  value: unknown,
  allowed: readonly T[],
  fallback: F,
): T | F {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as T;
  throw new InvalidOptionError(option, value, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
}

function integer(
  option: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  unit: string,
  minSource = '',
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const from = minSource === '' ? `${min}` : `${min} (${minSource})`;
    throw new InvalidOptionError(option, value, `an integer ${unit} from ${from} to ${max}`);
  }
  return value;
}

function bool(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidOptionError(option, value, 'true or false');
  return value;
}

function optionalString(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidOptionError(option, value, 'a non-empty string');
  }
  return value;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** Normalizes a key prefix; rejects anything that could escape it or produce an odd key. */
export function normalizePrefix(value: unknown, option = 'prefix'): string {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string') throw new InvalidOptionError(option, value, 'a string');
  const trimmed = value.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  const why = 'a key prefix without control characters, backslashes, empty, "." or ".." segments';
  if (CONTROL_CHARS.test(trimmed) || trimmed.includes('\\')) {
    throw new InvalidOptionError(option, value, why);
  }
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidOptionError(option, value, why);
    }
  }
  if (Buffer.byteLength(trimmed) > MAX_PREFIX_BYTES) {
    throw new InvalidOptionError(option, value, `at most ${MAX_PREFIX_BYTES} bytes`);
  }
  return trimmed;
}

function filePrefix(value: unknown): string {
  if (value === undefined || value === '') return '';
  if (
    typeof value !== 'string' ||
    CONTROL_CHARS.test(value) ||
    /[/\\]/.test(value) ||
    value === '.' ||
    value === '..' ||
    Buffer.byteLength(value) > 128
  ) {
    throw new InvalidOptionError(
      'filePrefix',
      value,
      'at most 128 bytes without "/", "\\" or control characters',
    );
  }
  return value;
}

/** True for an absolute http:// or https:// URL: what an S3 endpoint must be. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** True for a non-empty bucket name without "/" or whitespace. */
export function isBucketName(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !/[/\s]/.test(value);
}

function endpoint(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isHttpUrl(value)) {
    throw new InvalidOptionError(
      'endpoint',
      value,
      'an absolute http:// or https:// URL, e.g. "http://127.0.0.1:9000"',
    );
  }
  return value;
}

function bucket(value: unknown): string {
  const expected =
    'the name of an existing bucket (a non-empty string without "/" or spaces), in the options or OTEL_EXPORTER_S3_BUCKET';
  if (!isBucketName(value)) throw new InvalidOptionError('bucket', value, expected);
  return value;
}

function isS3Client(value: unknown): value is S3Client {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { send?: unknown }).send === 'function'
  );
}

/** Validates the options and fills in defaults. Throws InvalidOptionError. */
export function resolveConfig(options: S3MetricExporterOptions): ResolvedConfig {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', options, 'an object with at least { bucket }');
  }
  const compression = oneOf('compression', options.compression, COMPRESSIONS, DEFAULTS.compression);
  const levelDefault = compression === 'gzip' ? DEFAULTS.gzipLevel : DEFAULTS.zstdLevel;
  const levelMax = compression === 'gzip' ? 9 : 19;
  const endpointUrl = endpoint(options.endpoint);
  if (options.s3Client !== undefined && !isS3Client(options.s3Client)) {
    throw new InvalidOptionError(
      's3Client',
      options.s3Client,
      'an S3Client from @aws-sdk/client-s3',
    );
  }

  const bytes = (name: keyof S3MetricExporterOptions, fallback: number, min: number) =>
    integer(name, options[name], fallback, min, Number.MAX_SAFE_INTEGER, 'of bytes');
  const millis = (name: keyof S3MetricExporterOptions, fallback: number, min: number) =>
    integer(name, options[name], fallback, min, MAX_TIMER_MILLIS, 'of milliseconds');

  const prefix = normalizePrefix(options.prefix);
  const filePrefixValue = filePrefix(options.filePrefix);
  const maxBatchBytes = bytes('maxBatchBytes', DEFAULTS.maxBatchBytes, 1);
  const maxBufferedBytes = bytes('maxBufferedBytes', DEFAULTS.maxBufferedBytes, 1);
  if (maxBufferedBytes < maxBatchBytes) {
    // Blame the option the user set: raising only maxBatchBytes collides with the default bound.
    throw options.maxBufferedBytes === undefined
      ? new InvalidOptionError(
          'maxBatchBytes',
          maxBatchBytes,
          `at most maxBufferedBytes (default ${maxBufferedBytes}); raise maxBufferedBytes as well`,
        )
      : new InvalidOptionError(
          'maxBufferedBytes',
          maxBufferedBytes,
          `at least maxBatchBytes (${maxBatchBytes})`,
        );
  }
  const retry = options.retry ?? {};
  if (typeof retry !== 'object' || retry === null) {
    throw new InvalidOptionError(
      'retry',
      retry,
      'an object { initialDelayMillis, maxDelayMillis }',
    );
  }
  const retryInitialDelayMillis = integer(
    'retry.initialDelayMillis',
    retry.initialDelayMillis,
    DEFAULTS.retryInitialDelayMillis,
    1,
    MAX_TIMER_MILLIS,
    'of milliseconds',
  );
  const retryMaxDelayMillis = integer(
    'retry.maxDelayMillis',
    retry.maxDelayMillis,
    Math.max(DEFAULTS.retryMaxDelayMillis, retryInitialDelayMillis),
    retryInitialDelayMillis,
    MAX_TIMER_MILLIS,
    'of milliseconds',
    'retry.initialDelayMillis',
  );

  return {
    bucket: bucket(options.bucket),
    prefix,
    filePrefix: filePrefixValue,
    region: optionalString('region', options.region),
    endpoint: endpointUrl,
    forcePathStyle: bool('forcePathStyle', options.forcePathStyle, endpointUrl !== undefined),
    credentials: options.credentials,
    s3Client: options.s3Client,
    format: oneOf('format', options.format, FORMATS, DEFAULTS.format),
    compression,
    compressionLevel: integer(
      'compressionLevel',
      options.compressionLevel,
      levelDefault,
      1,
      levelMax,
      `(${compression} level)`,
    ),
    maxBatchBytes,
    maxBatchAgeMillis: millis('maxBatchAgeMillis', DEFAULTS.maxBatchAgeMillis, 1),
    maxBufferedBytes,
    uploadConcurrency: integer(
      'uploadConcurrency',
      options.uploadConcurrency,
      DEFAULTS.uploadConcurrency,
      1,
      64,
      'count',
    ),
    requestTimeoutMillis: millis('requestTimeoutMillis', DEFAULTS.requestTimeoutMillis, 1),
    flushTimeoutMillis: millis('flushTimeoutMillis', DEFAULTS.flushTimeoutMillis, 1),
    temporalityPreference: oneOf(
      'temporalityPreference',
      options.temporalityPreference,
      TEMPORALITIES,
      DEFAULTS.temporalityPreference,
    ),
    conditionalWrites: bool(
      'conditionalWrites',
      options.conditionalWrites,
      DEFAULTS.conditionalWrites,
    ),
    requestChecksumCalculation: oneOf(
      'requestChecksumCalculation',
      options.requestChecksumCalculation,
      CHECKSUM_MODES,
      endpointUrl === undefined ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED',
    ),
    retryInitialDelayMillis,
    retryMaxDelayMillis,
    spoolDir: optionalString('spoolDir', options.spoolDir),
    maxSpoolBytes: bytes('maxSpoolBytes', DEFAULTS.maxSpoolBytes, maxBatchBytes),
    spoolFileSystem: options.spoolFileSystem,
    keys: new KeyTemplate(options.keyTemplate, {
      prefix,
      filePrefix: filePrefixValue,
      timeZone: oneOf('partitionTimeZone', options.partitionTimeZone, TIME_ZONES, 'UTC'),
    }),
    partitionTime: oneOf('partitionTime', options.partitionTime, PARTITION_TIMES, 'upload'),
    putObject: putObjectFields(options),
    userAgent: printable('userAgent', options.userAgent, 256),
  };
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function printable(option: string, value: unknown, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'string' ||
    value === '' ||
    value.length > max ||
    !PRINTABLE_ASCII.test(value)
  ) {
    throw new InvalidOptionError(option, value, `printable ASCII text of 1 to ${max} characters`);
  }
  return value;
}

function stringRecord(option: string, value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    !Object.values(value).every((v) => typeof v === 'string')
  ) {
    throw new InvalidOptionError(option, value, 'an object of string values');
  }
  return value as Record<string, string>;
}

/** The fixed PutObject fields, validated the way S3 will judge them. */
function putObjectFields(options: S3MetricExporterOptions): ResolvedConfig['putObject'] {
  const out: ResolvedConfig['putObject'] = {};
  const sse = oneOf('serverSideEncryption', options.serverSideEncryption, SSE_MODES, undefined);
  if (sse !== undefined) out.ServerSideEncryption = sse;
  const kmsKey = optionalString('sseKmsKeyId', options.sseKmsKeyId);
  if (kmsKey !== undefined) {
    if (sse !== 'aws:kms' && sse !== 'aws:kms:dsse') {
      throw new InvalidOptionError(
        'sseKmsKeyId',
        kmsKey,
        "serverSideEncryption 'aws:kms' or 'aws:kms:dsse' with it",
      );
    }
    out.SSEKMSKeyId = kmsKey;
  }
  const storageClass = oneOf('storageClass', options.storageClass, STORAGE_CLASSES, undefined);
  if (storageClass !== undefined) out.StorageClass = storageClass;
  const tags = stringRecord('tags', options.tags);
  if (tags !== undefined && Object.keys(tags).length > 0) {
    const entries = Object.entries(tags);
    if (
      entries.length > 10 ||
      entries.some(([k, v]) => k === '' || k.length > 128 || v.length > 256)
    ) {
      throw new InvalidOptionError(
        'tags',
        tags,
        'at most 10 tags, keys of 1 to 128 characters, values of up to 256',
      );
    }
    out.Tagging = entries
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&');
  }
  const metadata = stringRecord('metadata', options.metadata);
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    const entries = Object.entries(metadata);
    const size = entries.reduce((n, [k, v]) => n + k.length + v.length, 0);
    if (
      entries.some(([k, v]) => !/^[A-Za-z0-9_-]+$/.test(k) || !PRINTABLE_ASCII.test(v)) ||
      size > 2048
    ) {
      throw new InvalidOptionError(
        'metadata',
        metadata,
        'keys of letters, digits, "-" and "_", printable ASCII values, at most 2 KB in all',
      );
    }
    out.Metadata = metadata;
  }
  return out;
}
