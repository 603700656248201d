import { check, optionRow } from '../config/option-table.js';
import {
  DEFAULTS,
  type PartitionTime,
  type PartitionTimeZone,
  READ_DEFAULTS,
} from '../config/options.js';
import * as rule from '../config/rules.js';
import {
  defaultKeyTemplate,
  encodingOfExtension,
  FORMAT_ROWS,
  FORMATS,
  type Format,
  type ObjectEncoding,
  SIGNAL_NAMES,
  type SignalName,
  signalOfKeyName,
  signalWordOfKey,
} from '../layout/formats.js';
import { KeyTemplate, type ParsedKey, warnAmbiguousTokens } from '../layout/key-template.js';
import {
  compareKeys,
  type KeyRange,
  listingRange,
  type PartitionLag,
  partitionMarginMillis,
  rangeGroups,
  unionOfRanges,
  withHourOutputs,
} from '../layout/listing-range.js';
import { INTERNAL_AREA, outputNames } from '../layout/outputs.js';

/** The OpenTelemetry SDK's export interval variable, read by PeriodicExportingMetricReader. */
export const EXPORT_INTERVAL_VARIABLE = optionRow('exportIntervalMillis').variable as string;
/** The OpenTelemetry SDK's default export interval. */
export const DEFAULT_EXPORT_INTERVAL_MILLIS = READ_DEFAULTS.exportIntervalMillis;

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

/** The validator of each layout option: the option table's rules, shared with the CLI. */
export const LAYOUT_RULES: {
  readonly [K in keyof Layout]: (option: string, value: unknown) => Layout[K];
} = {
  format: check('format'),
  keyTemplate: check('keyTemplate'),
  filePrefix: check('filePrefix'),
  partitionTimeZone: check('partitionTimeZone'),
  partitionTime: check('partitionTime'),
  maxBatchAgeMillis: check('maxBatchAgeMillis'),
  exportIntervalMillis: check('exportIntervalMillis'),
};

export const LAYOUT_OPTION_NAMES = Object.keys(LAYOUT_RULES) as (keyof KeyLayoutOptions)[];

/** What a key in the layout says about its object. */
export interface MetricKey extends ParsedKey {
  /**
   * The signal the object holds: the word of the default layout that names it (`metrics_`,
   * `traces_`, `logs_`), or, read under a keyTemplate for several signals, the word in its name.
   */
  signal: SignalName;
  /** Format and compression, from the extension. */
  encoding: ObjectEncoding;
  /**
   * A compaction output (`….compacted.parquet` in the Parquet hour layout, whatever the
   * template): its metadata lists the objects it replaces (see docs/parquet.md, Compaction).
   */
  compacted?: true;
}

/**
 * The layout options under which a key the reader skipped would have been read: another format's
 * default layout, another filePrefix, or both (what `otel-s3` turns into the flag to give).
 */
export interface LayoutHint {
  format?: Format;
  filePrefix?: string;
}

/** The exporter's key layout under one prefix, as the reader uses it. */
export interface KeyLayout {
  readonly prefix: string;
  /** The signals whose objects it reads. */
  readonly signals: readonly SignalName[];
  /**
   * The key's object, or undefined for a key this layout and prefix could not have written for
   * one of its signals.
   */
  parse(key: string): MetricKey | undefined;
  /**
   * The signal of a key that parse() does not take but that is another signal's object: in
   * that signal's default layout, or with that signal's word before a UUIDv7 in its name (a
   * `traces_` object among metrics). Such a key is no key out of the layout.
   */
  otherSignal(key: string): SignalName | undefined;
  /** True for a key of the package's own bookkeeping under the prefix (see INTERNAL_AREA). */
  internal(key: string): boolean;
  /**
   * Another prefix under which `key` is in the layout, if there is one: a deeper one, or one
   * above this one (a prefix given as the table folder of spans' or log records' Parquet files,
   * `prod/traces`, whose keys are in the layout under `prod`).
   */
  otherPrefix(key: string): string | undefined;
  /** Options under which the reader would have read `key`, if any. */
  hint(key: string): LayoutHint | undefined;
  /**
   * The keys to list for objects sealed in [from, to), as listings that are each narrow (see
   * rangeGroups), in key order: the layouts of spans' OTLP objects (`year=…`) and of their
   * Parquet files (`traces/year=…`) share no leading part, so one listing of both would run to
   * the end of the prefix.
   */
  ranges(from: Date | undefined, to: Date | undefined): KeyRange[];
  /**
   * As ranges(), from the directory of the first hour, for its compaction outputs.
   */
  rangeWithOutputs(from: Date | undefined, to: Date | undefined): KeyRange[];
}

/** A key template the reader recognises, with the formats whose default it is. */
interface Recognised {
  templateText: string;
  /** The signal of its objects; undefined for a keyTemplate read for several (the name's word says). */
  signal: SignalName | undefined;
  /** The formats whose default layout this is (none for a keyTemplate given). */
  formats: readonly Format[];
  /** How long a batch of these formats stays open: it widens the listing (partitionTime 'data'). */
  maxBatchAgeMillis: number;
}

/**
 * Every format's default layout for each of `signals`, each once (the OTLP formats share the
 * minute partitions, Parquet has hour partitions): what the reader recognises when neither format
 * nor keyTemplate is given, so a bucket written with the defaults needs no flag.
 */
export function defaultLayouts(signals: readonly SignalName[]): Recognised[] {
  return signals.flatMap((signal) =>
    FORMATS.reduce<Recognised[]>((layouts, format) => {
      const { maxBatchAgeMillis } = FORMAT_ROWS[format];
      const keyTemplate = defaultKeyTemplate(format, signal);
      const i = layouts.findIndex((l) => l.templateText === keyTemplate);
      const seen = layouts[i];
      if (seen === undefined)
        layouts.push({ templateText: keyTemplate, signal, formats: [format], maxBatchAgeMillis });
      else {
        layouts[i] = {
          ...seen,
          formats: [...seen.formats, format],
          maxBatchAgeMillis: Math.max(seen.maxBatchAgeMillis, maxBatchAgeMillis),
        };
      }
      return layouts;
    }, []),
  );
}

/** The metrics' default layouts (see defaultLayouts). */
export const DEFAULT_LAYOUTS: readonly Recognised[] = defaultLayouts(['metrics']);

/**
 * Validates the layout options (InvalidOptionError naming the option) and fills in defaults: the
 * layout of `signals`' objects (metrics' unless told), each signal with its word in the default
 * templates; a keyTemplate given is read for all of them.
 */
export function resolveKeyLayout(
  prefix: string,
  options: KeyLayoutOptions,
  signals: readonly SignalName[] = ['metrics'],
): KeyLayout {
  if (signals.length === 0) throw new RangeError('resolveKeyLayout: no signal to read');
  const get = <K extends keyof Layout>(option: K, fallback: Layout[K]): Layout[K] => {
    const value = options[option];
    return value === undefined ? fallback : LAYOUT_RULES[option](option, value);
  };
  const format = get('format', DEFAULTS.format);
  const filePrefix = get('filePrefix', DEFAULTS.filePrefix);
  const timeZone = get('partitionTimeZone', DEFAULTS.partitionTimeZone);
  const partitionTime = get('partitionTime', DEFAULTS.partitionTime);
  const givenAge =
    options.maxBatchAgeMillis === undefined ? undefined : get('maxBatchAgeMillis', 0);
  const exportIntervalMillis = get('exportIntervalMillis', DEFAULT_EXPORT_INTERVAL_MILLIS);
  const lag = (maxBatchAgeMillis: number): PartitionLag => ({
    partitionTimeZone: timeZone,
    partitionTime,
    maxBatchAgeMillis: givenAge ?? maxBatchAgeMillis,
    exportIntervalMillis,
  });
  const ofFormat = (signal: SignalName): Recognised => ({
    templateText: defaultKeyTemplate(format, signal),
    signal,
    formats: [format],
    maxBatchAgeMillis: FORMAT_ROWS[format].maxBatchAgeMillis,
  });
  const defaults = defaultLayouts(signals);
  // A keyTemplate, or a format, names one layout per signal; without either, every default is read.
  const layouts: readonly Recognised[] =
    options.keyTemplate !== undefined
      ? [
          {
            ...ofFormat(signals[0] as SignalName),
            templateText: get('keyTemplate', ''),
            signal: signals.length === 1 ? signals[0] : undefined,
            formats: [],
          },
        ]
      : options.format !== undefined
        ? signals.map(ofFormat)
        : defaults;
  const others = SIGNAL_NAMES.filter((s) => !signals.includes(s));
  const otherDefaults = defaultLayouts(others);

  const templates = new Map<string, KeyTemplate>();
  const templateOf = (text: string, at: string, withFilePrefix: string): KeyTemplate => {
    const id = `${text}\u0000${at}\u0000${withFilePrefix}`;
    let template = templates.get(id);
    if (template === undefined) {
      template = new KeyTemplate(text, { prefix: at, filePrefix: withFilePrefix, timeZone });
      templates.set(id, template);
    }
    return template;
  };
  // A template whose attribute values do not parse back is said now, once.
  for (const { templateText } of layouts)
    warnAmbiguousTokens(templateOf(templateText, prefix, filePrefix));
  /** The key's object under the first of `among` it is in (at prefix `at`), if any. */
  const parseIn = (
    among: readonly Recognised[],
    key: string,
    at = prefix,
    withFilePrefix = filePrefix,
  ): MetricKey | undefined => {
    for (const { templateText, signal } of among) {
      const parsed = templateOf(templateText, at, withFilePrefix).parse(key);
      const encoding = parsed === undefined ? undefined : encodingOfExtension(parsed.extension);
      if (parsed !== undefined && encoding !== undefined) {
        return { ...parsed, signal: signal ?? signalOfKeyName(key), encoding };
      }
    }
    return undefined;
  };
  /** The key's object if it is one of this layout's signals. */
  const parseOwn = (key: string): MetricKey | undefined => {
    const parsed = parseIn(layouts, key);
    return parsed !== undefined && signals.includes(parsed.signal) ? parsed : undefined;
  };
  const internalArea = prefix === '' ? INTERNAL_AREA : `${prefix}/${INTERNAL_AREA}`;

  // Compaction outputs are read under any layout: they replace objects of this one.
  const outputs = signals.map((signal) => ({
    signal,
    names: outputNames(prefix, filePrefix, signal),
  }));
  const asOutput = (key: string): MetricKey | undefined => {
    for (const { signal, names } of outputs) {
      const parsed = names.parse(key);
      if (parsed === undefined) continue;
      const encoding: ObjectEncoding = { format: 'parquet', compression: 'none' };
      return { ...parsed, signal, encoding, compacted: true };
    }
    return undefined;
  };
  const rangeOf = (from: Date | undefined, to: Date | undefined, outputsToo: boolean) =>
    layouts.map(({ templateText, maxBatchAgeMillis }) => {
      const template = templateOf(templateText, prefix, filePrefix);
      const partitionLag = lag(maxBatchAgeMillis);
      const range = listingRange(template, templateText, { prefix, lag: partitionLag, from, to });
      if (!outputsToo) return range;
      const start =
        from === undefined ? undefined : from.getTime() - partitionMarginMillis(partitionLag);
      return withHourOutputs(range, template, templateText, { prefix, timeZone, start });
    });
  /**
   * A signal's outputs are in its Parquet hour layout (`traces/year=…`), in UTC, whatever layout
   * its objects are read in. A UTC layout that starts as that one does, up to the hour, lists
   * them from its hour's directory (withHourOutputs); otherwise (another signal's directory, a
   * local zone, a custom template) their hours are listed on their own, for outputs only, with
   * the widest lag of the layouts whose objects they replace: first, so that the reader knows
   * what they replace before it meets those objects (replaced-inputs.ts).
   */
  const outputRanges = (from: Date | undefined, to: Date | undefined): KeyRange[] => {
    const widest = lag(Math.max(...layouts.map((l) => l.maxBatchAgeMillis)));
    return signals.flatMap((signal) => {
      const text = defaultKeyTemplate('parquet', signal);
      const hour = text.slice(0, text.indexOf('%H') + 2);
      if (timeZone === 'UTC' && layouts.some((l) => l.templateText.startsWith(hour))) return [];
      const template = new KeyTemplate(text, { prefix, filePrefix, timeZone: 'UTC' });
      const utc: PartitionLag = { ...widest, partitionTimeZone: 'UTC' };
      return [
        { ...listingRange(template, text, { prefix, lag: utc, from, to }), outputsOnly: true },
      ];
    });
  };

  return {
    prefix,
    signals,
    // An output first: under a template that ends in an attribute (`{uuid}{a}`), an output's name
    // also reads as an object's, with the value `.compacted`; the exporter writes no such name.
    parse: (key) => asOutput(key) ?? parseOwn(key),
    otherSignal(key) {
      const word = signalWordOfKey(key);
      if (word !== undefined && !signals.includes(word)) return word;
      return parseIn(otherDefaults, key)?.signal;
    },
    internal: (key) => key.startsWith(internalArea),
    otherPrefix(key) {
      // Keys are listed under `prefix/`: a deeper prefix ends at a later "/".
      for (let at = key.indexOf('/', prefix.length + 1); at > 0; at = key.indexOf('/', at + 1)) {
        const deeper = parseIn(layouts, key.slice(at + 1), '');
        if (deeper !== undefined && signals.includes(deeper.signal)) return key.slice(0, at);
      }
      // A prefix above, the nearest first: `prod` for `prod/traces` (the bucket's top, which no
      // --prefix names, is not offered).
      for (let at = prefix.lastIndexOf('/'); at > 0; at = prefix.lastIndexOf('/', at - 1)) {
        const shorter = prefix.slice(0, at);
        const above = parseIn(layouts, key, shorter);
        if (above !== undefined && signals.includes(above.signal)) return shorter;
        // Or a compaction output (of a compacted hour, where nothing else is left).
        if (signals.some((s) => outputNames(shorter, filePrefix, s).parse(key))) return shorter;
      }
      return undefined;
    },
    hint(key) {
      // The default templates end in {filePrefix}metrics_{uuid}: the name shows its filePrefix.
      const name = key.slice(key.lastIndexOf('/') + 1);
      const at = Math.max(...signals.map((signal) => name.lastIndexOf(`${signal}_`)));
      const named = at < 0 ? filePrefix : name.slice(0, at);
      const filePrefixes =
        named === filePrefix || !isFilePrefix(named) ? [filePrefix] : [filePrefix, named];
      for (const candidate of filePrefixes) {
        if (candidate !== filePrefix && parseIn(layouts, key, prefix, candidate) !== undefined) {
          return { filePrefix: candidate };
        }
        for (const other of defaults) {
          if (parseIn([other], key, prefix, candidate) === undefined) continue;
          const hint: LayoutHint = { format: other.formats[0] as Format };
          if (candidate !== filePrefix) hint.filePrefix = candidate;
          return hint;
        }
      }
      return undefined;
    },
    ranges: (from, to) => rangeGroups(rangeOf(from, to, false)).map(unionOfRanges),
    rangeWithOutputs: (from, to) => [
      ...outputRanges(from, to),
      ...rangeGroups(rangeOf(from, to, true)).map((ranges) => {
        const union = unionOfRanges(ranges);
        // Keys before a layout's own start are read only if they are outputs, unless another
        // layout's range reads them anyway.
        const early = ranges.map((r) => r.outputsOnlyUntil);
        if (early.some((e) => e === undefined)) return union;
        const until = (early as string[]).reduce((a, b) => (compareKeys(a, b) < 0 ? a : b));
        return { ...union, outputsOnlyUntil: until };
      }),
    ],
  };
}

/** True when `text` passes the exporter's filePrefix rule. */
function isFilePrefix(text: string): boolean {
  try {
    rule.filePrefix('filePrefix', text);
    return true;
  } catch {
    return false;
  }
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
