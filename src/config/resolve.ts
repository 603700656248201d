import { join } from 'node:path';
import type { S3Client, S3ClientConfig, StorageClass } from '@aws-sdk/client-s3';
import { InvalidOptionError } from '../base/invalid-option.js';
import {
  COMPRESSION_ROWS,
  type CompressionLevels,
  defaultKeyTemplate,
  FORMAT_ROWS,
  FORMATS,
  type SignalName,
  signalOfKeyName,
} from '../layout/formats.js';
import { KeyTemplate, warnAmbiguousTokens } from '../layout/key-template.js';
import { ANY_ID } from '../layout/listing-range.js';
import { defaultChecksumMode, defaultForcePathStyle } from '../s3/client-settings.js';
import type { PutObjectFields } from '../s3/object-writer.js';
import type { SpoolFileSystem } from '../spool/file-system.js';
import { type LockTiming, lockTimingOf } from '../spool/lock.js';
import { type EnvironmentValue, type EnvironmentWarn, Fields } from './fields.js';
import {
  check,
  exporterOptionNames,
  type OptionName,
  optionsOf,
  RETRY_OPTION_NAMES,
} from './option-table.js';
import {
  type ChecksumMode,
  type Compression,
  DEFAULTS,
  type Format,
  type PartitionTime,
  type PartitionTimeZone,
  type S3MetricExporterOptions,
  type ServerSideEncryptionMode,
  type TemporalityPreference,
} from './options.js';
import * as rule from './rules.js';
import { rejectUnknown } from './unknown-options.js';

export interface ResolvedConfig {
  /** The signal whose exporter this configures. */
  signal: SignalName;
  bucket: string;
  /** Normalized (no leading or trailing slash), may be empty. */
  prefix: string;
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
  startupCheck: boolean;
  requestChecksumCalculation: ChecksumMode;
  retryInitialDelayMillis: number;
  retryMaxDelayMillis: number;
  /** The signal's own spool directory: spoolDir for metrics, spoolDir/traces, spoolDir/logs. */
  spoolDir: string | undefined;
  maxSpoolBytes: number;
  spoolTimeoutMillis: number;
  /** The journal's group-commit interval; 0: no journal. */
  journalSyncMillis: number;
  spoolFileSystem: SpoolFileSystem | undefined;
  /** Tests' shorter spool lock intervals (LOCK_TIMING_OPTION); undefined: LOCK_TIMING. */
  spoolLock?: LockTiming | undefined;
  keys: KeyTemplate;
  /** The layouts a spool file's key may be in: `keys`, and without a keyTemplate every format's default. */
  spoolKeys: readonly KeyTemplate[];
  partitionTime: PartitionTime;
  /** Fixed PutObject fields: encryption, storage class, tags, metadata. */
  putObject: PutObjectFields;
  userAgent: string | undefined;
}

export type { EnvironmentValue, EnvironmentWarn } from './fields.js';

type Credentials = NonNullable<S3ClientConfig['credentials']>;

export interface ConfigSources {
  /** The options passed in code (they win). */
  options: unknown;
  /** Values from OTEL_EXPORTER_S3_* variables, by option name (`retry.maxDelayMillis` for retry). */
  environment?: ReadonlyMap<string, EnvironmentValue>;
  /** Called for an environment value that is invalid, with the variable used instead, if any (else the default is). */
  warn?: EnvironmentWarn;
  /** Whose exporter: it names the objects (`metrics_`) and decides which options exist. */
  signal?: SignalName;
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
  const signal = sources.signal ?? 'metrics';
  rejectOtherSignals(code, signal);
  rejectUnknown(code, exporterOptionNames(signal), '');
  const retry = check<object>('retry')('retry', code.retry ?? {});
  rejectUnknown(retry as Record<string, unknown>, RETRY_OPTION_NAMES, 'retry.');
  const f = new Fields(
    { ...code, ...prefixed(retry as Record<string, unknown>, 'retry.') },
    sources.environment ?? new Map(),
    sources.warn ?? (() => {}),
  );

  const prefix = option<string>(f, 'prefix', DEFAULTS.prefix);
  const filePrefix = option<string>(f, 'filePrefix', DEFAULTS.filePrefix);
  // Not warned and left out: without an endpoint, telemetry meant for a server goes to AWS S3.
  const endpoint = f.strict('endpoint', check<string | undefined>('endpoint'));
  const format = option<Format>(f, 'format', DEFAULTS.format);
  // A value from the environment that makes one set in code invalid is the one blamed (warned,
  // its default used): a service's environment never stops it from starting.
  let compression = option<Compression>(f, 'compression', DEFAULTS.compression);
  const codeLevel = code.compressionLevel;
  if (
    codeLevel !== undefined &&
    f.origin('compression') === 'environment' &&
    !levelFits(compression, codeLevel) &&
    levelFits(DEFAULTS.compression, codeLevel)
  ) {
    compression = f.reject(
      'compression',
      `a compression whose levels take compressionLevel ${String(codeLevel)} (set in code)`,
      DEFAULTS.compression,
    );
  }
  const levels = levelsOf(compression);
  let [maxBatchBytes, maxBufferedBytes] = batchAndBuffer(f);
  const codeSpool = code.maxSpoolBytes;
  if (
    typeof codeSpool === 'number' &&
    f.origin('maxBatchBytes') === 'environment' &&
    codeSpool < maxBatchBytes &&
    codeSpool >= Math.min(DEFAULTS.maxBatchBytes, maxBufferedBytes)
  ) {
    maxBatchBytes = Math.min(
      f.reject(
        'maxBatchBytes',
        `at most maxSpoolBytes (${codeSpool}, set in code)`,
        DEFAULTS.maxBatchBytes,
      ),
      maxBufferedBytes,
    );
  }
  let retryInitialDelayMillis = option<number>(
    f,
    'retry.initialDelayMillis',
    DEFAULTS.retryInitialDelayMillis,
  );
  const codeMaxDelay = (retry as Record<string, unknown>).maxDelayMillis;
  if (
    typeof codeMaxDelay === 'number' &&
    f.origin('retry.initialDelayMillis') === 'environment' &&
    codeMaxDelay < retryInitialDelayMillis &&
    codeMaxDelay >= DEFAULTS.retryInitialDelayMillis
  ) {
    retryInitialDelayMillis = f.reject(
      'retry.initialDelayMillis',
      `at most retry.maxDelayMillis (${codeMaxDelay}, set in code)`,
      DEFAULTS.retryInitialDelayMillis,
    );
  }
  const s3Client = option<S3Client | undefined>(f, 's3Client', undefined);
  // Each signal keeps its own spool (its own lock) under one spoolDir: metrics in it, as ever.
  const givenSpoolDir = option<string | undefined>(f, 'spoolDir', undefined);
  const spoolDir =
    givenSpoolDir === undefined || signal === 'metrics'
      ? givenSpoolDir
      : join(givenSpoolDir, signal);
  const timeZone = option<PartitionTimeZone>(f, 'partitionTimeZone', DEFAULTS.partitionTimeZone);
  const sse = option<ServerSideEncryptionMode | undefined>(f, 'serverSideEncryption', undefined);
  const kms = sse === 'aws:kms' || sse === 'aws:kms:dsse';
  const putObject: ResolvedConfig['putObject'] = {
    ServerSideEncryption: sse,
    SSEKMSKeyId: f.get(
      'sseKmsKeyId',
      (o, v) => {
        const id = check<string>('sseKmsKeyId')(o, v);
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
    StorageClass: option<StorageClass | undefined>(f, 'storageClass', undefined),
    Tagging: option<string | undefined>(f, 'tags', undefined),
    Metadata: f.get('metadata', check<Record<string, string> | undefined>('metadata'), undefined),
  };

  // Each format has its default layout (Parquet: hour partitions).
  const layout = (template: string) => new KeyTemplate(template, { prefix, filePrefix, timeZone });
  const defaultKeys = layout(defaultKeyTemplate(format, signal));
  const resolved = {
    signal,
    bucket: f.required('bucket', (o, v) =>
      rule.bucket(
        o,
        v,
        'the name of an existing bucket (a non-empty string without "/" or spaces), in the options or OTEL_EXPORTER_S3_BUCKET',
      ),
    ),
    prefix,
    region: option<string | undefined>(f, 'region', undefined),
    endpoint,
    forcePathStyle: option<boolean>(f, 'forcePathStyle', defaultForcePathStyle(endpoint)),
    credentials: option<Credentials | undefined>(f, 'credentials', undefined),
    s3Client,
    format,
    compression,
    compressionLevel: f.get(
      'compressionLevel',
      (o, v) => rule.integer(o, v, levels.min, levels.max, levelUnit(compression)),
      levels.default,
    ),
    maxBatchBytes,
    maxBatchAgeMillis: f.get(
      'maxBatchAgeMillis',
      check<number>('maxBatchAgeMillis'),
      FORMAT_ROWS[format].maxBatchAgeMillis,
    ),
    maxBufferedBytes,
    uploadConcurrency: option<number>(f, 'uploadConcurrency', DEFAULTS.uploadConcurrency),
    requestTimeoutMillis: option<number>(f, 'requestTimeoutMillis', DEFAULTS.requestTimeoutMillis),
    flushTimeoutMillis: option<number>(f, 'flushTimeoutMillis', DEFAULTS.flushTimeoutMillis),
    temporalityPreference: option<TemporalityPreference>(
      f,
      'temporalityPreference',
      DEFAULTS.temporalityPreference,
    ),
    conditionalWrites: option<boolean>(f, 'conditionalWrites', DEFAULTS.conditionalWrites),
    startupCheck: option<boolean>(f, 'startupCheck', DEFAULTS.startupCheck),
    requestChecksumCalculation: option<ChecksumMode>(
      f,
      'requestChecksumCalculation',
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
      // The spool must hold a batch: a larger maxBatchBytes raises the default with it.
      Math.max(DEFAULTS.maxSpoolBytes, maxBatchBytes),
    ),
    spoolTimeoutMillis: option<number>(f, 'spoolTimeoutMillis', DEFAULTS.spoolTimeoutMillis),
    journalSyncMillis: option<number>(f, 'journalSyncMillis', DEFAULTS.journalSyncMillis),
    spoolFileSystem: option<SpoolFileSystem | undefined>(f, 'spoolFileSystem', undefined),
    spoolLock: lockTimingOf(code),
    keys: f.get(
      'keyTemplate',
      // KeyTemplate validates the template itself, whatever its type.
      (o, v) => {
        const template = layout(v as string);
        warnAmbiguousTokens(template);
        return namesSignal(o, v, template, signal);
      },
      defaultKeys,
    ),
    partitionTime: option<PartitionTime>(f, 'partitionTime', DEFAULTS.partitionTime),
    putObject: Object.fromEntries(
      Object.entries(putObject).filter(([, v]) => v !== undefined),
    ) as ResolvedConfig['putObject'],
    userAgent: f.get(
      'userAgent',
      (o, v) => {
        const agent = check<string>('userAgent')(o, v);
        // The caller's client sends its own user agent: the word would reach no request.
        if (s3Client !== undefined)
          throw new InvalidOptionError(
            o,
            v,
            "no s3Client: your own S3Client sends its own user agent (set the client's customUserAgent)",
          );
        return agent;
      },
      undefined,
    ),
  };
  // A spool file an earlier run left may name the key of another format's default layout (a
  // deploy that changed the format, keyTemplate unset): it is uploaded as it was written.
  const spoolKeys =
    resolved.keys === defaultKeys
      ? [
          defaultKeys,
          ...[...new Set(FORMATS.map((other) => defaultKeyTemplate(other, signal)))]
            .filter((template) => template !== defaultKeyTemplate(format, signal))
            .map(layout),
        ]
      : [resolved.keys];
  return { ...resolved, spoolKeys };
}

/**
 * `template`, once its object names are known to say `signal`: the reader and the compactor tell
 * an object's signal by the word before its UUID (`traces_…`), and a name without one is metrics'
 * (as custom templates were before spans and log records). A span exporter writing `metrics_…`
 * would have its objects read, compacted and deleted as metrics.
 */
function namesSignal(
  option: string,
  value: unknown,
  template: KeyTemplate,
  signal: SignalName,
): KeyTemplate {
  const sample = template.render({
    time: new Date(0),
    attributes: {},
    extension: '.json',
    id: ANY_ID,
  });
  const named = signalOfKeyName(sample);
  if (named === signal) return template;
  throw new InvalidOptionError(
    option,
    value,
    `an object name that says ${signal} (\`${signal}_{uuid}\`), as the reader and compaction tell signals by it; this template's name says ${named}${signal === 'metrics' ? '' : ' (or nothing, which is metrics)'}: give each signal its own template (OTEL_EXPORTER_S3_${signal.toUpperCase()}_KEY_TEMPLATE)`,
  );
}

/** The levels `compression` takes (none: any, see ANY_LEVEL). */
const levelsOf = (compression: Compression): CompressionLevels =>
  COMPRESSION_ROWS[compression].levels ?? ANY_LEVEL;

/** Whether `level` is one of `compression`'s levels. */
function levelFits(compression: Compression, level: unknown): boolean {
  const { min, max } = levelsOf(compression);
  return typeof level === 'number' && Number.isInteger(level) && level >= min && level <= max;
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

/** How a compression's level reads in a message: `(zstd level)`; for 'none', what it takes. */
function levelUnit(compression: Compression): string {
  if (COMPRESSION_ROWS[compression].levels !== undefined) return `(${compression} level)`;
  const leveled = (Object.keys(COMPRESSION_ROWS) as Compression[]).filter(
    (c) => COMPRESSION_ROWS[c].levels !== undefined,
  );
  return `(a level of ${leveled.join(' or ')}, ignored with compression '${compression}')`;
}

/** Each signal's exporter, as an option of one signal only names it. */
const EXPORTER_OF: Readonly<Record<SignalName, string>> = {
  metrics: 'the metric exporter (S3MetricExporter)',
  traces: 'the span exporter (S3SpanExporter)',
  logs: 'the log record exporter (S3LogRecordExporter)',
};

/** An option of another signal's exporter is no typo: say whose it is, not just "unknown". */
function rejectOtherSignals(code: Readonly<Record<string, unknown>>, signal: SignalName): void {
  for (const row of optionsOf('exporter')) {
    if (row.signals === undefined || row.signals.includes(signal)) continue;
    if (code[row.name] === undefined) continue;
    const owners = row.signals.map((s) => EXPORTER_OF[s]).join(' or ');
    throw new InvalidOptionError(
      row.name,
      undefined,
      `an option of ${owners} only`,
      undefined,
      `unknown option ${row.name} for ${EXPORTER_OF[signal]}: it is an option of ${owners} only`,
    );
  }
}

/**
 * maxBatchBytes and maxBufferedBytes, which must agree: the bound holds at least one batch.
 * The value the user chose is blamed (raising only maxBatchBytes collides with the default
 * bound), and a value from the environment gives way to one passed in code.
 */
function batchAndBuffer(f: Fields): [number, number] {
  let batch = option<number>(f, 'maxBatchBytes', DEFAULTS.maxBatchBytes);
  let buffered = option<number>(f, 'maxBufferedBytes', DEFAULTS.maxBufferedBytes);
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
  // The default, cut to the bound: the value the warning names is the one used.
  batch = f.reject(
    'maxBatchBytes',
    `at most maxBufferedBytes (${bound}); raise maxBufferedBytes as well`,
    Math.min(DEFAULTS.maxBatchBytes, buffered),
  );
  return [Math.min(batch, buffered), buffered];
}

/** An option its row's rule checks alone: from code, else the environment, else `fallback`. */
function option<T>(f: Fields, name: OptionName, fallback: T): T {
  return f.get(name, check<T>(name), fallback);
}

function prefixed(o: Record<string, unknown>, prefix: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [prefix + k, v]));
}
