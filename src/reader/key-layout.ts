import {
  DEFAULTS,
  PARTITION_TIMES,
  type PartitionTime,
  type PartitionTimeZone,
  TIME_ZONES,
} from '../config/options.js';
import * as rule from '../config/rules.js';
import {
  encodingOfExtension,
  FORMAT_ROWS,
  FORMATS,
  type Format,
  type ObjectEncoding,
} from '../formats.js';
import { KeyTemplate, type ParsedKey } from '../upload/key-template.js';
import { type KeyRange, listingRange, type PartitionLag } from './listing-range.js';

/** The OpenTelemetry SDK's export interval variable, read by PeriodicExportingMetricReader. */
export const EXPORT_INTERVAL_VARIABLE = 'OTEL_METRIC_EXPORT_INTERVAL';
/** The OpenTelemetry SDK's default export interval. */
export const DEFAULT_EXPORT_INTERVAL_MILLIS = 60_000;

/**
 * How the exporter named its objects, with the exporter's option names and defaults: give the
 * reader what the exporter was given (they come from the same OTEL_EXPORTER_S3_* variables).
 */
export interface KeyLayoutOptions {
  /**
   * The exporter's format. It only picks the default keyTemplate (Parquet's has hour
   * partitions); objects of every format are read. Default `'otlp-json'`.
   */
  format?: Format;
  /** The exporter's keyTemplate; the format's when unset. Default `year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuid}`. */
  keyTemplate?: string;
  /** The exporter's filePrefix. Default `''`. */
  filePrefix?: string;
  /** The exporter's partitionTimeZone. Default `'UTC'`. */
  partitionTimeZone?: PartitionTimeZone;
  /** The exporter's partitionTime. Default `'upload'`. */
  partitionTime?: PartitionTime;
  /** The exporter's maxBatchAgeMillis; with partitionTime 'data' it widens the listing. Default: the format's (60000, Parquet 600000). */
  maxBatchAgeMillis?: number;
  /** The metric reader's export interval (OTEL_METRIC_EXPORT_INTERVAL), as maxBatchAgeMillis. Default 60000. */
  exportIntervalMillis?: number;
}

type Layout = Required<KeyLayoutOptions>;

/** The validator of each layout option: the exporter's own rules, shared with the CLI. */
export const LAYOUT_RULES: {
  readonly [K in keyof Layout]: (option: string, value: unknown) => Layout[K];
} = {
  format: (option, value) => rule.oneOf(option, value, FORMATS),
  keyTemplate: (_option, value) => {
    // KeyTemplate checks the template (and throws InvalidOptionError naming keyTemplate).
    new KeyTemplate(value as string, { prefix: '', filePrefix: '', timeZone: 'UTC' });
    return value as string;
  },
  filePrefix: rule.filePrefix,
  partitionTimeZone: (option, value) => rule.oneOf(option, value, TIME_ZONES),
  partitionTime: (option, value) => rule.oneOf(option, value, PARTITION_TIMES),
  maxBatchAgeMillis: (option, value) => rule.millis(option, value),
  exportIntervalMillis: (option, value) => rule.millis(option, value),
};

export const LAYOUT_OPTION_NAMES = Object.keys(LAYOUT_RULES) as (keyof KeyLayoutOptions)[];

/** What a key in the layout says about its object. */
export interface MetricKey extends ParsedKey {
  /** Format and compression, from the extension. */
  encoding: ObjectEncoding;
}

/** The exporter's key layout under one prefix, as the reader uses it. */
export interface KeyLayout {
  readonly prefix: string;
  /** The key's object, or undefined for a key this layout and prefix could not have written. */
  parse(key: string): MetricKey | undefined;
  /** A prefix deeper than this one under which `key` is in the layout, if there is one. */
  deeperPrefix(key: string): string | undefined;
  /** The keys to list for objects sealed in [from, to). */
  range(from: Date | undefined, to: Date | undefined): KeyRange;
}

/** Validates the layout options (InvalidOptionError naming the option) and fills in defaults. */
export function resolveKeyLayout(prefix: string, options: KeyLayoutOptions): KeyLayout {
  const get = <K extends keyof Layout>(option: K, fallback: Layout[K]): Layout[K] => {
    const value = options[option];
    return value === undefined ? fallback : LAYOUT_RULES[option](option, value);
  };
  const format = get('format', DEFAULTS.format);
  const templateText = get('keyTemplate', FORMAT_ROWS[format].keyTemplate);
  const filePrefix = get('filePrefix', DEFAULTS.filePrefix);
  const lag: PartitionLag = {
    partitionTimeZone: get('partitionTimeZone', DEFAULTS.partitionTimeZone),
    partitionTime: get('partitionTime', DEFAULTS.partitionTime),
    maxBatchAgeMillis: get('maxBatchAgeMillis', FORMAT_ROWS[format].maxBatchAgeMillis),
    exportIntervalMillis: get('exportIntervalMillis', DEFAULT_EXPORT_INTERVAL_MILLIS),
  };
  const templateAt = (at: string) =>
    new KeyTemplate(templateText, { prefix: at, filePrefix, timeZone: lag.partitionTimeZone });
  const template = templateAt(prefix);
  const anywhere = templateAt('');
  const withEncoding = (parsed: ParsedKey | undefined): MetricKey | undefined => {
    const encoding = parsed === undefined ? undefined : encodingOfExtension(parsed.extension);
    return parsed === undefined || encoding === undefined ? undefined : { ...parsed, encoding };
  };
  return {
    prefix,
    parse: (key) => withEncoding(template.parse(key)),
    deeperPrefix(key) {
      // Keys are listed under `prefix/`: a deeper prefix ends at a later "/".
      for (let at = key.indexOf('/', prefix.length + 1); at > 0; at = key.indexOf('/', at + 1)) {
        if (withEncoding(anywhere.parse(key.slice(at + 1))) !== undefined) return key.slice(0, at);
      }
      return undefined;
    },
    range: (from, to) => listingRange(template, templateText, { prefix, lag, from, to }),
  };
}

/**
 * A parser of keys the exporter wrote with these options: `parse(key)` gives the object's seal
 * time (`sealedAt`, the UUIDv7's timestamp), its partition, the values of the template's
 * attribute tokens, and its format and compression; undefined for any other key. Throws
 * InvalidOptionError for a bad option.
 */
export function metricKeyParser(
  options: KeyLayoutOptions & { prefix?: string } = {},
): (key: string) => MetricKey | undefined {
  const layout = resolveKeyLayout(rule.normalizePrefix(options.prefix), options);
  return (key) => layout.parse(key);
}
