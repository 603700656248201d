import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { InvalidOptionError } from '../base/invalid-option.js';
import {
  COMPRESSION_ROWS,
  type CompressionLevels,
  defaultKeyTemplate,
  FORMAT_ROWS,
} from '../layout/formats.js';
import { KeyTemplate } from '../layout/key-template.js';
import { defaultChecksumMode, defaultForcePathStyle } from '../s3/client-settings.js';
import type { PutObjectFields } from '../s3/object-writer.js';
import type { SpoolFileSystem } from '../spool/file-system.js';
import { type EnvironmentValue, Fields } from './fields.js';
import {
  CHECKSUM_MODES,
  type ChecksumMode,
  COMPRESSIONS,
  type Compression,
  DEFAULTS,
  FORMATS,
  type Format,
  OPTION_NAMES,
  PARTITION_TIMES,
  type PartitionTime,
  RETRY_OPTION_NAMES,
  type S3MetricExporterOptions,
  SSE_MODES,
  STORAGE_CLASSES,
  TEMPORALITIES,
  type TemporalityPreference,
  TIME_ZONES,
} from './options.js';
import * as rule from './rules.js';
import { rejectUnknown } from './unknown-options.js';

export interface ResolvedConfig {
  bucket: string;
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
  spoolTimeoutMillis: number;
  spoolFileSystem: SpoolFileSystem | undefined;
  keys: KeyTemplate;
  partitionTime: PartitionTime;
  /** Fixed PutObject fields: encryption, storage class, tags, metadata. */
  putObject: PutObjectFields;
  userAgent: string | undefined;
}

export type { EnvironmentValue } from './fields.js';

export interface ConfigSources {
  /** The options passed in code (they win). */
  options: unknown;
  /** Values from OTEL_EXPORTER_S3_* variables, by option name (`retry.maxDelayMillis` for retry). */
  environment?: ReadonlyMap<string, EnvironmentValue>;
  /** Called for an environment value that is invalid; the default is used instead. */
  warn?: (error: InvalidOptionError) => void;
}

/** Validates options passed in code and fills in defaults. Throws InvalidOptionError. */
export function resolveConfig(options: S3MetricExporterOptions): ResolvedConfig {
  return resolveSources({ options });
}

/**
 * Options in code over environment values over defaults, validated field by field. A bad value
 * passed in code throws; a bad value from the environment is reported through `warn` and the
 * default is used (the OpenTelemetry SDK convention: a typo in the environment never stops a
 * service from starting). Only a bucket, which has no default, is required.
 */
export function resolveSources(sources: ConfigSources): ResolvedConfig {
  const options = sources.options;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError('options', options, 'an object with at least { bucket }');
  }
  const code = options as Record<string, unknown>;
  rejectUnknown(code, OPTION_NAMES, '');
  const retry = code.retry ?? {};
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
    throw new InvalidOptionError(
      'retry',
      retry,
      'an object { initialDelayMillis, maxDelayMillis }',
    );
  }
  rejectUnknown(retry as Record<string, unknown>, RETRY_OPTION_NAMES, 'retry.');
  const f = new Fields(
    { ...code, ...prefixed(retry as Record<string, unknown>, 'retry.') },
    sources.environment ?? new Map(),
    sources.warn ?? (() => {}),
  );

  const prefix = f.get('prefix', (o, v) => rule.normalizePrefix(v, o), DEFAULTS.prefix);
  const filePrefix = f.get('filePrefix', rule.filePrefix, DEFAULTS.filePrefix);
  const endpoint = f.get('endpoint', rule.endpoint, undefined);
  const format = f.get('format', (o, v) => rule.oneOf(o, v, FORMATS), DEFAULTS.format);
  const compression = f.get(
    'compression',
    (o, v) => rule.oneOf(o, v, COMPRESSIONS),
    DEFAULTS.compression,
  );
  const levels = COMPRESSION_ROWS[compression].levels ?? ANY_LEVEL;
  const [maxBatchBytes, maxBufferedBytes] = batchAndBuffer(f);
  const retryInitialDelayMillis = f.get(
    'retry.initialDelayMillis',
    (o, v) => rule.millis(o, v),
    DEFAULTS.retryInitialDelayMillis,
  );
  const spoolDir = f.get('spoolDir', rule.nonEmptyString, undefined);
  const timeZone = f.get(
    'partitionTimeZone',
    (o, v) => rule.oneOf(o, v, TIME_ZONES),
    DEFAULTS.partitionTimeZone,
  );
  const sse = f.get('serverSideEncryption', (o, v) => rule.oneOf(o, v, SSE_MODES), undefined);
  const kms = sse === 'aws:kms' || sse === 'aws:kms:dsse';
  const putObject: ResolvedConfig['putObject'] = {
    ServerSideEncryption: sse,
    SSEKMSKeyId: f.get(
      'sseKmsKeyId',
      (o, v) => {
        const id = rule.nonEmptyString(o, v);
        if (!kms)
          throw new InvalidOptionError(
            o,
            v,
            "serverSideEncryption 'aws:kms' or 'aws:kms:dsse' with it",
          );
        return id;
      },
      undefined,
    ),
    StorageClass: f.get('storageClass', (o, v) => rule.oneOf(o, v, STORAGE_CLASSES), undefined),
    Tagging: f.get('tags', rule.tagging, undefined),
    Metadata: f.get('metadata', rule.metadata, undefined),
  };

  return {
    bucket: f.required('bucket', (o, v) =>
      rule.bucket(
        o,
        v,
        'the name of an existing bucket (a non-empty string without "/" or spaces), in the options or OTEL_EXPORTER_S3_BUCKET',
      ),
    ),
    region: f.get('region', rule.nonEmptyString, undefined),
    endpoint,
    forcePathStyle: f.get('forcePathStyle', rule.bool, defaultForcePathStyle(endpoint)),
    credentials: f.get('credentials', rule.credentials, undefined),
    s3Client: f.get('s3Client', rule.s3Client, undefined),
    format,
    compression,
    compressionLevel: f.get(
      'compressionLevel',
      (o, v) => rule.integer(o, v, levels.min, levels.max, `(${compression} level)`),
      levels.default,
    ),
    maxBatchBytes,
    maxBatchAgeMillis: f.get(
      'maxBatchAgeMillis',
      (o, v) => rule.millis(o, v),
      FORMAT_ROWS[format].maxBatchAgeMillis,
    ),
    maxBufferedBytes,
    uploadConcurrency: f.get(
      'uploadConcurrency',
      (o, v) => rule.integer(o, v, 1, 64, 'count'),
      DEFAULTS.uploadConcurrency,
    ),
    requestTimeoutMillis: f.get(
      'requestTimeoutMillis',
      (o, v) => rule.millis(o, v),
      DEFAULTS.requestTimeoutMillis,
    ),
    flushTimeoutMillis: f.get(
      'flushTimeoutMillis',
      (o, v) => rule.millis(o, v),
      DEFAULTS.flushTimeoutMillis,
    ),
    temporalityPreference: f.get(
      'temporalityPreference',
      (o, v) => rule.oneOf(o, v, TEMPORALITIES),
      DEFAULTS.temporalityPreference,
    ),
    conditionalWrites: f.get('conditionalWrites', rule.bool, DEFAULTS.conditionalWrites),
    requestChecksumCalculation: f.get(
      'requestChecksumCalculation',
      (o, v) => rule.oneOf(o, v, CHECKSUM_MODES),
      defaultChecksumMode(endpoint),
    ),
    retryInitialDelayMillis,
    retryMaxDelayMillis: f.get(
      'retry.maxDelayMillis',
      (o, v) => rule.millis(o, v, retryInitialDelayMillis, 'retry.initialDelayMillis'),
      Math.max(DEFAULTS.retryMaxDelayMillis, retryInitialDelayMillis),
    ),
    spoolDir,
    maxSpoolBytes: f.get(
      'maxSpoolBytes',
      (o, v) => rule.bytes(o, v, maxBatchBytes),
      DEFAULTS.maxSpoolBytes,
    ),
    spoolTimeoutMillis: f.get(
      'spoolTimeoutMillis',
      (o, v) => rule.millis(o, v),
      DEFAULTS.spoolTimeoutMillis,
    ),
    spoolFileSystem: f.get('spoolFileSystem', spoolFileSystem, undefined),
    keys: f.get(
      'keyTemplate',
      // KeyTemplate validates the template itself, whatever its type.
      (_o, v) => new KeyTemplate(v as string, { prefix, filePrefix, timeZone }),
      // Each format has its default layout (Parquet: hour partitions).
      new KeyTemplate(defaultKeyTemplate(format, 'metrics'), { prefix, filePrefix, timeZone }),
    ),
    partitionTime: f.get(
      'partitionTime',
      (o, v) => rule.oneOf(o, v, PARTITION_TIMES),
      DEFAULTS.partitionTime,
    ),
    putObject: Object.fromEntries(
      Object.entries(putObject).filter(([, v]) => v !== undefined),
    ) as ResolvedConfig['putObject'],
    userAgent: f.get('userAgent', (o, v) => rule.printable(o, v, 256), undefined),
  };
}

/**
 * Where a compression has no level (none), any level of the others is taken and ignored, so
 * that a level set for all services does not fail the ones that turn compression off.
 */
const ANY_LEVEL: CompressionLevels = (() => {
  const all = Object.values(COMPRESSION_ROWS).flatMap((row) => row.levels ?? []);
  return {
    min: Math.min(...all.map((l) => l.min)),
    max: Math.max(...all.map((l) => l.max)),
    default: 0,
  };
})();

/**
 * maxBatchBytes and maxBufferedBytes, which must agree: the bound holds at least one batch.
 * The value the user chose is blamed (raising only maxBatchBytes collides with the default
 * bound), and a value from the environment gives way to one passed in code.
 */
function batchAndBuffer(f: Fields): [number, number] {
  let batch = f.get('maxBatchBytes', (o, v) => rule.bytes(o, v), DEFAULTS.maxBatchBytes);
  let buffered = f.get('maxBufferedBytes', (o, v) => rule.bytes(o, v), DEFAULTS.maxBufferedBytes);
  if (buffered >= batch) return [batch, buffered];
  const bufferedFrom = f.origin('maxBufferedBytes');
  if (
    bufferedFrom === 'environment' ||
    (bufferedFrom === 'code' && f.origin('maxBatchBytes') !== 'environment')
  ) {
    buffered = f.reject(
      'maxBufferedBytes',
      `at least maxBatchBytes (${batch})`,
      DEFAULTS.maxBufferedBytes,
    );
    if (buffered >= batch) return [batch, buffered];
  }
  const bound = f.origin('maxBufferedBytes') === 'default' ? `default ${buffered}` : `${buffered}`;
  batch = f.reject(
    'maxBatchBytes',
    `at most maxBufferedBytes (${bound}); raise maxBufferedBytes as well`,
    DEFAULTS.maxBatchBytes,
  );
  return [Math.min(batch, buffered), buffered];
}

function spoolFileSystem(option: string, value: unknown): SpoolFileSystem {
  if (typeof value !== 'object' || value === null)
    throw new InvalidOptionError(option, value, 'an object with the SpoolFileSystem methods');
  return value as SpoolFileSystem;
}

function prefixed(o: Record<string, unknown>, prefix: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [prefix + k, v]));
}
