import { constants } from 'node:buffer';
import { COMPRESSIONS, FORMATS, type SignalName } from '../layout/formats.js';
import { KeyTemplate, PARTITION_TIMES, TIME_ZONES } from '../layout/key-template.js';
import { CHECKSUM_MODES } from '../s3/client-settings.js';
import { TEMPORALITIES } from '../signals/metrics/temporalities.js';
import {
  COMPACTION_DEFAULTS,
  DEFAULTS,
  READ_DEFAULTS,
  type RetryOptions,
  type S3MetricExporterOptions,
  SSE_MODES,
  STORAGE_CLASSES,
} from './options.js';
import * as rule from './rules.js';

/**
 * The one table of options: for each, who reads it (the exporter, the reader, the compactor, the
 * CLI), its environment variable, its CLI flag, whether `.otel-s3.json` may set it, the rule that
 * checks a value, its default and one line of docs. Every consumer takes its names, variables,
 * flags and rules from here; docs/configuration.md and docs/reading.md are held to it by a test
 * (test/unit/config/docs-options.test.ts). A rule checks a value alone; what depends on another
 * option (a compression's level range, maxBufferedBytes ≥ maxBatchBytes) is checked by the
 * consumer that resolves them together.
 */

export type Consumer = 'exporter' | 'reader' | 'compactor' | 'cli';

/**
 * How text (an environment variable, a flag, a `.otel-s3.json` string) spells a value: as it
 * is, a non-negative integer, true/false, `k=v,k2=v2`, a byte size (`128MiB`), or one of a list
 * (case-insensitive).
 */
export type TextKind = 'string' | 'integer' | 'boolean' | 'map' | 'bytes' | readonly string[];

export interface OptionRow {
  /** The option's name in code (`retry.maxDelayMillis` for a nested one); its `.otel-s3.json` key. */
  readonly name: string;
  readonly for: readonly Consumer[];
  /** The signals whose exporters take it (every signal's when not given). */
  readonly signals?: readonly SignalName[];
  /** The environment variable that sets it, for every consumer that reads it. */
  readonly variable?: string;
  /** How its text reads. */
  readonly text: TextKind;
  /** The CLI's flag for it. */
  readonly flag?: string;
  /** `.otel-s3.json` may set it (the CLI's settings). */
  readonly file?: boolean;
  /** Checks one value: returns it, or throws InvalidOptionError naming the option. */
  readonly rule: (option: string, value: unknown) => unknown;
  /**
   * The default: a value, or what decides it when it depends on something else (then in words,
   * as the docs give it).
   */
  readonly default: string | number | boolean | { readonly computed: string } | undefined;
  readonly doc: string;
}

const computed = (text: string) => ({ computed: text });
const ms = (option: string, value: unknown) => rule.millis(option, value);
const bytes = (option: string, value: unknown) => rule.bytes(option, value);
const count = (min: number, max: number) => (option: string, value: unknown) =>
  rule.integer(option, value, min, max, 'count');
const oneOf =
  (values: readonly string[]) =>
  (option: string, value: unknown): string =>
    rule.oneOf(option, value, values);
const keyTemplate = (_option: string, value: unknown): string => {
  // KeyTemplate checks the template itself (and throws InvalidOptionError naming keyTemplate);
  // here its shape only: the filePrefix is not known yet, so a word stands for it.
  new KeyTemplate(value as string, { prefix: '', filePrefix: 'x', timeZone: 'UTC' });
  return value as string;
};
const object = (what: string) => (option: string, value: unknown) =>
  rule.object(option, value, what);

const KiB = 1024;

const EXPORTER = ['exporter'] as const;
const EVERYONE = ['exporter', 'reader', 'compactor', 'cli'] as const;
const READERS = ['reader', 'compactor', 'cli'] as const;
const LAYOUT = ['exporter', 'reader', 'compactor', 'cli'] as const;
const COMPACTOR = ['compactor', 'cli'] as const;

export const OPTION_TABLE = [
  // ---- where: the bucket and how to reach it (every consumer)
  {
    name: 'bucket',
    for: EVERYONE,
    variable: 'OTEL_EXPORTER_S3_BUCKET',
    text: 'string',
    flag: '--bucket',
    file: true,
    rule: (o, v) => rule.bucket(o, v, 'a bucket name without "/" or spaces'),
    default: undefined,
    doc: 'The bucket; it must exist.',
  },
  {
    name: 'prefix',
    for: EVERYONE,
    variable: 'OTEL_EXPORTER_S3_PREFIX',
    text: 'string',
    flag: '--prefix',
    file: true,
    rule: (o, v) => rule.normalizePrefix(v, o),
    default: DEFAULTS.prefix,
    doc: 'Key prefix, e.g. prod/checkout.',
  },
  {
    name: 'region',
    for: EVERYONE,
    variable: 'OTEL_EXPORTER_S3_REGION',
    text: 'string',
    flag: '--region',
    file: true,
    rule: rule.region,
    default: computed('AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1'),
    doc: 'AWS region.',
  },
  {
    name: 'endpoint',
    for: EVERYONE,
    variable: 'OTEL_EXPORTER_S3_ENDPOINT',
    text: 'string',
    flag: '--endpoint',
    file: true,
    rule: rule.endpoint,
    default: computed('AWS S3'),
    doc: 'URL of an S3-compatible server.',
  },
  {
    name: 'forcePathStyle',
    for: EVERYONE,
    variable: 'OTEL_EXPORTER_S3_FORCE_PATH_STYLE',
    text: 'boolean',
    flag: '--force-path-style',
    file: true,
    rule: rule.bool,
    default: computed('true when endpoint is set'),
    doc: 'Path-style addressing (endpoint/bucket/key).',
  },
  {
    name: 'credentials',
    for: ['exporter', 'reader', 'compactor'],
    text: 'string',
    rule: rule.credentials,
    default: computed("the AWS SDK's default provider chain"),
    doc: 'Static credentials or a provider function.',
  },
  {
    name: 's3Client',
    for: ['exporter', 'reader', 'compactor'],
    text: 'string',
    rule: rule.s3Client,
    default: computed("the exporter's own signed requests; the reader's own client"),
    doc: 'Your own S3Client.',
  },
  {
    name: 'requestChecksumCalculation',
    for: ['exporter', 'reader', 'compactor'],
    variable: 'OTEL_EXPORTER_S3_CHECKSUM',
    text: CHECKSUM_MODES,
    rule: oneOf(CHECKSUM_MODES),
    default: computed("'WHEN_REQUIRED' with endpoint, else 'WHEN_SUPPORTED'"),
    doc: "The AWS SDK's checksum mode of requests.",
  },
  {
    name: 'responseChecksumValidation',
    for: ['reader', 'compactor'],
    text: CHECKSUM_MODES,
    rule: oneOf(CHECKSUM_MODES),
    default: computed("'WHEN_REQUIRED' with endpoint, else 'WHEN_SUPPORTED'"),
    doc: "The AWS SDK's checksum mode of responses.",
  },
  {
    name: 'userAgent',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_USER_AGENT',
    text: 'string',
    rule: (o, v) => rule.printable(o, v, 256),
    default: undefined,
    doc: "Added to the user agent of the exporter's requests.",
  },
  {
    name: 'dir',
    for: READERS,
    text: 'string',
    flag: '--dir',
    file: true,
    rule: rule.nonEmptyString,
    default: undefined,
    doc: 'Read a local directory laid out like the bucket instead of S3.',
  },

  // ---- what: format and compression
  {
    name: 'format',
    for: LAYOUT,
    variable: 'OTEL_EXPORTER_S3_FORMAT',
    text: FORMATS,
    flag: '--object-format',
    file: true,
    rule: oneOf(FORMATS),
    default: DEFAULTS.format,
    doc: "Object format; for readers, only this format's default key template is read.",
  },
  {
    name: 'compression',
    for: ['exporter', 'compactor', 'cli'],
    variable: 'OTEL_EXPORTER_S3_COMPRESSION',
    text: COMPRESSIONS,
    flag: '--compression',
    rule: oneOf(COMPRESSIONS),
    default: DEFAULTS.compression,
    doc: "Object compression (Parquet: the column chunks'); the compactor's outputs' codec.",
  },
  {
    name: 'compressionLevel',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_COMPRESSION_LEVEL',
    text: 'integer',
    rule: count(1, 19),
    default: computed('3 (zstd), 6 (gzip)'),
    doc: 'zstd 1-19, gzip 1-9.',
  },
  {
    name: 'temporalityPreference',
    for: EXPORTER,
    signals: ['metrics'],
    variable: 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
    text: TEMPORALITIES,
    rule: oneOf(TEMPORALITIES),
    default: DEFAULTS.temporalityPreference,
    doc: 'Aggregation temporality per instrument kind, as for the OTLP exporters.',
  },

  // ---- batching, memory and time (the exporter)
  {
    name: 'maxBatchBytes',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_MAX_BATCH_BYTES',
    text: 'integer',
    rule: bytes,
    default: DEFAULTS.maxBatchBytes,
    doc: 'The open batch is sealed when it holds this many bytes.',
  },
  {
    name: 'maxBatchAgeMillis',
    for: LAYOUT,
    variable: 'OTEL_EXPORTER_S3_MAX_BATCH_AGE',
    text: 'integer',
    flag: '--max-batch-age',
    file: true,
    rule: ms,
    default: computed("the format's: 60000, Parquet 600000"),
    doc: "The open batch is sealed this long after its first export; readers widen the listing by it (partitionTime 'data').",
  },
  {
    name: 'maxBufferedBytes',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_MAX_BUFFERED_BYTES',
    text: 'integer',
    rule: bytes,
    default: DEFAULTS.maxBufferedBytes,
    doc: 'Bound over every byte the exporter holds.',
  },
  {
    name: 'uploadConcurrency',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY',
    text: 'integer',
    rule: count(1, 64),
    default: DEFAULTS.uploadConcurrency,
    doc: 'PutObject requests in flight at once.',
  },
  {
    name: 'requestTimeoutMillis',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_TIMEOUT',
    text: 'integer',
    rule: ms,
    default: DEFAULTS.requestTimeoutMillis,
    doc: 'Deadline of each PutObject.',
  },
  {
    name: 'flushTimeoutMillis',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_FLUSH_TIMEOUT',
    text: 'integer',
    rule: ms,
    default: DEFAULTS.flushTimeoutMillis,
    doc: 'Deadline of forceFlush(), and separately of shutdown().',
  },
  {
    name: 'conditionalWrites',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_CONDITIONAL_WRITES',
    text: 'boolean',
    rule: rule.bool,
    default: DEFAULTS.conditionalWrites,
    doc: 'Send If-None-Match: * so a retry can never overwrite an object.',
  },
  {
    name: 'startupCheck',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_STARTUP_CHECK',
    text: 'boolean',
    rule: rule.bool,
    default: DEFAULTS.startupCheck,
    doc: 'At start, a PutObject that stores nothing reports a wrong endpoint, secret, bucket or permission in seconds.',
  },
  {
    name: 'retry',
    for: EXPORTER,
    text: 'string',
    rule: object('an object { initialDelayMillis, maxDelayMillis }'),
    default: undefined,
    doc: 'Backoff of retried uploads.',
  },
  {
    name: 'retry.initialDelayMillis',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY',
    text: 'integer',
    rule: ms,
    default: DEFAULTS.retryInitialDelayMillis,
    doc: 'Bound of the first backoff (full jitter).',
  },
  {
    name: 'retry.maxDelayMillis',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_RETRY_MAX_DELAY',
    text: 'integer',
    rule: ms,
    default: DEFAULTS.retryMaxDelayMillis,
    doc: 'Cap of the backoff bound, and the pace of retries during configuration faults.',
  },

  // ---- durable spool (the exporter)
  {
    name: 'spoolDir',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_SPOOL_DIR',
    text: 'string',
    rule: rule.nonEmptyString,
    default: undefined,
    doc: 'Directory of the durable disk spool (off by default).',
  },
  {
    name: 'maxSpoolBytes',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_MAX_SPOOL_BYTES',
    text: 'integer',
    rule: bytes,
    default: DEFAULTS.maxSpoolBytes,
    doc: 'Bound of the spool on disk.',
  },
  {
    name: 'spoolTimeoutMillis',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_SPOOL_TIMEOUT',
    text: 'integer',
    rule: ms,
    default: DEFAULTS.spoolTimeoutMillis,
    doc: 'Deadline of every spool operation.',
  },
  {
    name: 'journalSyncMillis',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_JOURNAL_SYNC_INTERVAL',
    text: 'integer',
    rule: (option: string, value: unknown) => rule.millis(option, value, 0),
    default: DEFAULTS.journalSyncMillis,
    doc: "With spoolDir: the open batch's journal is fsynced once per interval, the most a crash loses (0: no journal).",
  },
  {
    name: 'spoolFileSystem',
    for: EXPORTER,
    text: 'string',
    rule: object('an object with the SpoolFileSystem methods'),
    default: computed('node:fs'),
    doc: "The spool's file operations (tests inject failures here).",
  },

  // ---- object keys (the exporter writes them, the readers read them)
  {
    name: 'filePrefix',
    for: LAYOUT,
    variable: 'OTEL_EXPORTER_S3_FILE_PREFIX',
    text: 'string',
    flag: '--file-prefix',
    file: true,
    rule: rule.filePrefix,
    default: DEFAULTS.filePrefix,
    doc: 'Text put before metrics_ in every object name.',
  },
  {
    name: 'keyTemplate',
    for: LAYOUT,
    variable: 'OTEL_EXPORTER_S3_KEY_TEMPLATE',
    text: 'string',
    flag: '--key-template',
    file: true,
    rule: keyTemplate,
    default: computed("the format's"),
    doc: 'Object key after the prefix, without the extension.',
  },
  {
    name: 'partitionTime',
    for: LAYOUT,
    variable: 'OTEL_EXPORTER_S3_PARTITION_TIME',
    text: PARTITION_TIMES,
    flag: '--partition-time',
    file: true,
    rule: oneOf(PARTITION_TIMES),
    default: DEFAULTS.partitionTime,
    doc: 'The time that places an object: its seal, or its oldest item.',
  },
  {
    name: 'partitionTimeZone',
    for: LAYOUT,
    variable: 'OTEL_EXPORTER_S3_PARTITION_TIME_ZONE',
    text: TIME_ZONES,
    flag: '--partition-time-zone',
    file: true,
    rule: oneOf(TIME_ZONES),
    default: DEFAULTS.partitionTimeZone,
    doc: "The time zone of the key's time tokens.",
  },
  {
    name: 'exportIntervalMillis',
    for: READERS,
    variable: 'OTEL_METRIC_EXPORT_INTERVAL',
    text: 'integer',
    flag: '--export-interval',
    file: true,
    rule: ms,
    default: READ_DEFAULTS.exportIntervalMillis,
    doc: "The service's metric export interval; readers widen the listing by it (partitionTime 'data').",
  },

  // ---- object settings (the exporter)
  {
    name: 'serverSideEncryption',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_SSE',
    text: SSE_MODES,
    rule: oneOf(SSE_MODES),
    default: computed("the bucket's default encryption"),
    doc: 'Server-side encryption of every object.',
  },
  {
    name: 'sseKmsKeyId',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_SSE_KMS_KEY_ID',
    text: 'string',
    rule: rule.nonEmptyString,
    default: computed("the account's aws/s3 key"),
    doc: "KMS key id or ARN, with serverSideEncryption 'aws:kms' or 'aws:kms:dsse'.",
  },
  {
    name: 'storageClass',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_STORAGE_CLASS',
    text: STORAGE_CLASSES,
    rule: oneOf(STORAGE_CLASSES),
    default: computed("the bucket's (STANDARD)"),
    doc: 'Storage class of every object.',
  },
  {
    name: 'tags',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_TAGS',
    text: 'map',
    rule: rule.tagging,
    default: undefined,
    doc: 'Tags of every object.',
  },
  {
    name: 'metadata',
    for: EXPORTER,
    variable: 'OTEL_EXPORTER_S3_METADATA',
    text: 'map',
    rule: rule.metadata,
    default: undefined,
    doc: 'User metadata of every object.',
  },

  // ---- reading
  {
    name: 'concurrency',
    for: READERS,
    text: 'integer',
    flag: '--concurrency',
    file: true,
    rule: count(1, 64),
    default: READ_DEFAULTS.concurrency,
    doc: 'Objects downloaded at once (together at most 32 MiB as listed, or one object).',
  },
  {
    name: 'maxObjectBytes',
    for: READERS,
    text: 'bytes',
    flag: '--max-object-bytes',
    file: true,
    rule: rule.sizeLimit,
    default: computed('maxDecompressedBytes'),
    doc: 'Objects stored larger than this are skipped unread.',
  },
  {
    name: 'maxDecompressedBytes',
    for: READERS,
    text: 'bytes',
    flag: '--max-decompressed-bytes',
    file: true,
    rule: rule.sizeLimit,
    default: READ_DEFAULTS.maxDecompressedBytes,
    doc: 'Objects that decompress to more than this (or Parquet pages of more values) are skipped.',
  },

  // ---- compaction
  {
    name: 'outPrefix',
    for: COMPACTOR,
    text: 'string',
    flag: '--out-prefix',
    rule: (o, v) => rule.normalizePrefix(v, o),
    default: computed('prefix'),
    doc: 'Where the outputs go (the Parquet hour layout under it).',
  },
  {
    name: 'settleMillis',
    for: COMPACTOR,
    text: 'integer',
    flag: '--settle',
    rule: (o, v) => rule.integer(o, v, 0, 7 * 86_400_000, 'of milliseconds'),
    default: computed('maxBatchAgeMillis + flushTimeoutMillis + 5 minutes'),
    doc: "How long after an hour's end it is compacted.",
  },
  {
    name: 'targetFileBytes',
    for: COMPACTOR,
    text: 'bytes',
    flag: '--target-file-bytes',
    rule: (o, v) => rule.integer(o, v, 64 * KiB, constants.MAX_LENGTH, 'of bytes'),
    default: COMPACTION_DEFAULTS.targetFileBytes,
    doc: 'Output files are cut near this size.',
  },
  {
    name: 'dryRun',
    for: COMPACTOR,
    text: 'boolean',
    flag: '--dry-run',
    rule: rule.bool,
    default: false,
    doc: 'Plan only: list and report, write nothing.',
  },
  {
    name: 'deleteInputs',
    for: COMPACTOR,
    text: 'boolean',
    flag: '--delete-inputs',
    rule: rule.bool,
    default: false,
    doc: 'Also delete the OTLP objects an output replaces.',
  },
  {
    name: 'shard',
    for: COMPACTOR,
    text: 'string',
    flag: '--shard',
    rule: object('{ index, count } with 0 <= index < count'),
    default: computed('0/1'),
    doc: 'Only the hours whose number modulo count is index.',
  },
  {
    name: 'partitionConcurrency',
    for: COMPACTOR,
    text: 'integer',
    flag: '--partitions',
    rule: count(1, 16),
    default: COMPACTION_DEFAULTS.partitionConcurrency,
    doc: 'Hours compacted at once.',
  },
  {
    name: 'singleWriter',
    for: COMPACTOR,
    text: 'boolean',
    flag: '--single-writer',
    rule: rule.bool,
    default: false,
    doc: 'Run without conditional writes: only if no other compactor runs.',
  },
  {
    name: 'leaseMillis',
    for: ['compactor'],
    text: 'integer',
    rule: (o, v) => rule.millis(o, v, 1_000),
    default: COMPACTION_DEFAULTS.leaseMillis,
    doc: "How long a partition's lease lasts; it is renewed while the work goes on.",
  },
  {
    name: 'leaseClockSkewMillis',
    for: ['compactor'],
    text: 'integer',
    rule: (o, v) => rule.integer(o, v, 0, 3_600_000, 'of milliseconds'),
    default: COMPACTION_DEFAULTS.leaseClockSkewMillis,
    doc: "How far apart compactors' clocks may be.",
  },
] as const satisfies readonly OptionRow[];

export type OptionName = (typeof OPTION_TABLE)[number]['name'];

const BY_NAME: ReadonlyMap<string, OptionRow> = new Map(
  OPTION_TABLE.map((row) => [row.name, row as OptionRow]),
);

/** The row of an option. */
export function optionRow(name: OptionName): OptionRow {
  return BY_NAME.get(name) as OptionRow;
}

/** The rows one consumer reads, in table order; for an exporter, those its signal takes. */
export function optionsOf(consumer: Consumer, signal?: SignalName): OptionRow[] {
  return (OPTION_TABLE as readonly OptionRow[]).filter(
    (row) =>
      row.for.includes(consumer) &&
      (signal === undefined || row.signals === undefined || row.signals.includes(signal)),
  );
}

/** The exporter's option names of a signal, for the unknown-option check. */
export function exporterOptionNames(signal: SignalName): readonly string[] {
  return optionsOf('exporter', signal)
    .map((row) => row.name)
    .filter((name) => !name.startsWith('retry.'));
}

/** The rule of an option, as a function of its value (the option's own name in messages). */
export function check<T = unknown>(name: OptionName): (option: string, value: unknown) => T {
  return optionRow(name).rule as (option: string, value: unknown) => T;
}

type Row = (typeof OPTION_TABLE)[number];
/** The names of the rows `consumer` reads. */
type NamesFor<C extends Consumer> = Row extends infer R
  ? R extends { readonly name: infer N; readonly for: readonly (infer F)[] }
    ? C extends F
      ? N
      : never
    : never
  : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type ExporterNames = NamesFor<'exporter'>;
/** The compiler holds the table's exporter rows and the options' type to one set of names. */
const tableMatchesTypes: [
  Same<Exclude<ExporterNames, `retry.${string}`>, keyof S3MetricExporterOptions>,
  Same<Extract<ExporterNames, `retry.${string}`>, `retry.${keyof RetryOptions}`>,
] = [true, true];
void tableMatchesTypes;

/** The exporter's option names, for the unknown-option check. */
export const OPTION_NAMES = optionsOf('exporter')
  .map((row) => row.name)
  .filter((name) => !name.startsWith('retry.')) as readonly (keyof S3MetricExporterOptions)[];
/** The names inside the exporter's `retry` option. */
export const RETRY_OPTION_NAMES = optionsOf('exporter').flatMap((row) =>
  row.name.startsWith('retry.') ? [row.name.slice('retry.'.length)] : [],
) as readonly (keyof RetryOptions)[];
