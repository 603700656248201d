/**
 * The signals, as the word in object names (`metrics_`, `traces_`, `logs_`, as the Collector's
 * awss3exporter names them): part of the key contract.
 */
export const SIGNAL_NAMES = ['metrics', 'traces', 'logs'] as const;
export type SignalName = (typeof SIGNAL_NAMES)[number];

const SIGNAL_IN_NAME =
  /(metrics|traces|logs)_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[^/]*$/;

/**
 * The signal an object holds, from its name: the word before its UUID (`…/traces_0193….json.zst`),
 * as every default layout names objects; metrics for a name without one (a key template that
 * leaves the word out).
 */
export function signalOfKey(key: string): SignalName {
  return signalWordOfKey(key) ?? 'metrics';
}

/** The signal's word before the UUIDv7 in an object's name, if it has one. */
export function signalWordOfKey(key: string): SignalName | undefined {
  return SIGNAL_IN_NAME.exec(key)?.[1] as SignalName | undefined;
}

/**
 * Whose object a key names by its name alone: the signal word in it, else metrics. Every
 * default template names its signal; a name without one comes from a custom key template, which
 * only metrics had before spans and log records had objects.
 */
export function signalOfKeyName(key: string): SignalName {
  return signalWordOfKey(key) ?? 'metrics';
}

/**
 * The one table of formats and compressions: how each is named and typed, what body a batch
 * becomes, and each format's defaults. What a format's exports become and how its objects decode
 * is each signal's (src/signals/). Adding a format is a row here plus its own module (see
 * docs/architecture.md).
 */

export interface FormatRow {
  /** Object name suffix (before any compression suffix). */
  extension: string;
  contentType: string;
  /**
   * 'framed': exports are encoded into records, joined and compressed as a whole. 'parquet':
   * exports are appended to column builders, and the worker encodes the sealed columns
   * (src/body/parquet-body.js).
   */
  body: 'framed' | 'parquet';
  /**
   * True when `compression` works inside the object (Parquet column chunks): the object keeps its
   * own name and content type. False when it wraps the whole object (`.json.zst`).
   */
  compressedInside: boolean;
  /**
   * What a batch is stored as when its body cannot be made: the records as they are (Parquet:
   * its items as OTLP/JSON).
   */
  fallback: { extension: string; contentType: string };
  /**
   * The time partitions of the default key layout: a minute's (awss3exporter's), or an hour's
   * (what Athena partition projection, Glue and Hive-style engines expect).
   */
  partitions: 'minute' | 'hour';
  /** maxBatchAgeMillis when it is not set. */
  maxBatchAgeMillis: number;
}

export interface CompressionRow {
  /** Suffix of a wrapped object; '' for none. */
  extension: string;
  /** Content-Type of a wrapped object; undefined keeps the format's own. */
  contentType: string | undefined;
  /** The Parquet codec of column chunks. */
  parquetCodec: 'ZSTD' | 'GZIP' | 'UNCOMPRESSED';
  /** compressionLevel: its range and default; undefined where there is no level to choose. */
  levels: CompressionLevels | undefined;
}

export interface CompressionLevels {
  min: number;
  max: number;
  default: number;
}

const JSON_NAME = { extension: '.json', contentType: 'application/json' };

export const FORMAT_ROWS = {
  'otlp-json': {
    ...JSON_NAME,
    body: 'framed',
    compressedInside: false,
    fallback: JSON_NAME,
    partitions: 'minute',
    maxBatchAgeMillis: 60_000,
  },
  'otlp-proto': {
    extension: '.binpb',
    contentType: 'application/x-protobuf',
    body: 'framed',
    compressedInside: false,
    fallback: { extension: '.binpb', contentType: 'application/x-protobuf' },
    partitions: 'minute',
    maxBatchAgeMillis: 60_000,
  },
  parquet: {
    extension: '.parquet',
    contentType: 'application/vnd.apache.parquet',
    body: 'parquet',
    compressedInside: true,
    // Exports go into column builders; when a file cannot be made, OTLP/JSON.
    fallback: JSON_NAME,
    partitions: 'hour',
    // Engines pay a fixed cost per file (open, footer): files must hold enough points to beat
    // OTLP/JSON, which a minute of points does not (measured in docs/parquet.md, "Batch size").
    maxBatchAgeMillis: 600_000,
  },
} as const satisfies Record<string, FormatRow>;

export type Format = keyof typeof FORMAT_ROWS;
export const FORMATS = Object.keys(FORMAT_ROWS) as Format[];

/**
 * The key layout of a format's objects when keyTemplate is not set (after the prefix, without
 * the extension), awss3exporter-compatible: `year=…/hour=…[/minute=…]/{filePrefix}metrics_{uuid}`
 * with the signal's word (`metrics_`, `traces_`, `logs_`). Parquet spans and log records start
 * with a folder of their own (`traces/`, `logs/`): a table in Athena, Trino or Hive is a location,
 * and the three signals' tables under one prefix must not share one (metrics keep the top, as
 * they did before spans and log records had Parquet).
 */
export function defaultKeyTemplate(format: Format, signal: SignalName): string {
  const minute = FORMAT_ROWS[format].partitions === 'minute' ? '/minute=%M' : '';
  const table = format === 'parquet' && signal !== 'metrics' ? `${signal}/` : '';
  return `${table}year=%Y/month=%m/day=%d/hour=%H${minute}/{filePrefix}${signal}_{uuid}`;
}

export const COMPRESSION_ROWS = {
  zstd: {
    extension: '.zst',
    contentType: 'application/zstd',
    parquetCodec: 'ZSTD',
    // Level 3 is zstd's own default; above 19 ("ultra") a window needs far more memory.
    levels: { min: 1, max: 19, default: 3 },
  },
  gzip: {
    extension: '.gz',
    contentType: 'application/gzip',
    parquetCodec: 'GZIP',
    levels: { min: 1, max: 9, default: 6 }, // zlib's range; 6 is its default
  },
  none: {
    extension: '',
    contentType: undefined,
    parquetCodec: 'UNCOMPRESSED',
    levels: undefined,
  },
} as const satisfies Record<string, CompressionRow>;

export type Compression = keyof typeof COMPRESSION_ROWS;
export const COMPRESSIONS = Object.keys(COMPRESSION_ROWS) as Compression[];

/** A stored object's format and compression. */
export interface ObjectEncoding {
  format: Format;
  compression: Compression;
}

/** How an object of this format and compression is named and typed. */
export function objectName(
  format: Format,
  compression: Compression,
): { extension: string; contentType: string } {
  const f: FormatRow = FORMAT_ROWS[format];
  const c: CompressionRow = COMPRESSION_ROWS[compression];
  if (f.compressedInside || c.extension === '') return f;
  return { extension: f.extension + c.extension, contentType: c.contentType ?? f.contentType };
}

/** Every name suffix this exporter writes, and its encoding: built once, read for every key. */
const ENCODING_OF_EXTENSION: ReadonlyMap<string, ObjectEncoding> = (() => {
  const map = new Map<string, ObjectEncoding>();
  for (const format of FORMATS) {
    for (const compression of COMPRESSIONS) {
      // Compressed inside: one name whatever the codec; read as 'none' on the outside.
      if (FORMAT_ROWS[format].compressedInside && compression !== 'none') continue;
      const { extension } = objectName(format, compression);
      if (!map.has(extension)) map.set(extension, { format, compression });
    }
  }
  return map;
})();

/** The longest name suffix this exporter writes (`.binpb.zst`), for the key length bound. */
export const MAX_EXTENSION_LENGTH = Math.max(
  ...[...ENCODING_OF_EXTENSION.keys()].map((extension) => extension.length),
);

/** The name ending of a compaction output (see outputs.ts). */
export const OUTPUT_EXTENSION = '.compacted.parquet';

/**
 * Every name ending a key of this package's layouts has: the objects' and the compaction
 * outputs'. A key template's last token can be a resource attribute, whose value may hold dots:
 * the ending is told from it by being one of these.
 */
export const KEY_EXTENSIONS: readonly string[] = [
  ...ENCODING_OF_EXTENSION.keys(),
  OUTPUT_EXTENSION,
];

/** Format and compression of an object from its name's suffix (`.json.zst`, `.parquet`, ...). */
export function encodingOfExtension(extension: string): ObjectEncoding | undefined {
  const encoding = ENCODING_OF_EXTENSION.get(extension);
  return encoding === undefined ? undefined : { ...encoding };
}

/** Every Content-Type this exporter sets. */
export const CONTENT_TYPES: ReadonlySet<string> = new Set(
  [...Object.values(FORMAT_ROWS), ...Object.values(COMPRESSION_ROWS)].flatMap(
    (k: { contentType: string | undefined }) =>
      k.contentType === undefined ? [] : [k.contentType],
  ),
);
