import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { SpoolFileSystem } from './spool/file-system.js';

export const FORMATS = ['otlp-json', 'otlp-proto'] as const;
export const COMPRESSIONS = ['zstd', 'gzip', 'none'] as const;
export const TEMPORALITIES = ['cumulative', 'delta', 'lowmemory'] as const;
export const CHECKSUM_MODES = ['WHEN_SUPPORTED', 'WHEN_REQUIRED'] as const;

export type Format = (typeof FORMATS)[number];
export type Compression = (typeof COMPRESSIONS)[number];
export type TemporalityPreference = (typeof TEMPORALITIES)[number];
export type ChecksumMode = (typeof CHECKSUM_MODES)[number];

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
}

/** Thrown at construction for a bad option; names the option, the value and what is allowed. */
export class InvalidOptionError extends TypeError {
  readonly option: string;
  readonly value: unknown;
  /** The environment variable the value came from, if it did. */
  readonly variable: string | undefined;
  readonly expected: string;
  constructor(option: string, value: unknown, expected: string, variable?: string) {
    const where =
      variable === undefined
        ? `option ${option}`
        : `environment variable ${variable} (option ${option})`;
    super(`otel-s3-exporter: invalid ${where}: ${show(value)} (expected ${expected})`);
    this.name = 'InvalidOptionError';
    this.option = option;
    this.value = value;
    this.variable = variable;
    this.expected = expected;
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function oneOf<T extends string>(
  option: string,
  value: unknown,
  allowed: readonly T[],
  fallback: T,
): T {
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

function endpoint(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const expected = 'an absolute http:// or https:// URL, e.g. "http://127.0.0.1:9000"';
  if (typeof value !== 'string') throw new InvalidOptionError('endpoint', value, expected);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidOptionError('endpoint', value, expected);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidOptionError('endpoint', value, expected);
  }
  return value;
}

function bucket(value: unknown): string {
  const expected =
    'the name of an existing bucket (a non-empty string without "/" or spaces), in the options or OTEL_EXPORTER_S3_BUCKET';
  if (typeof value !== 'string' || value === '' || /[/\s]/.test(value)) {
    throw new InvalidOptionError('bucket', value, expected);
  }
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
    prefix: normalizePrefix(options.prefix),
    filePrefix: filePrefix(options.filePrefix),
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
  };
}
