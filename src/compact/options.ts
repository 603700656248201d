import { InvalidOptionError } from '../base/invalid-option.js';
import { requireZstdEngine } from '../compression/zstd-engine.js';
import { check, type OptionName } from '../config/option-table.js';
import { COMPACTION_DEFAULTS, DEFAULTS } from '../config/options.js';
import * as rule from '../config/rules.js';
import {
  type Compression,
  defaultKeyTemplate,
  FORMAT_ROWS,
  type Format,
  type SignalName,
} from '../layout/formats.js';
import { hourLeadingChars } from '../layout/listing-range.js';
import {
  DEFAULT_EXPORT_INTERVAL_MILLIS,
  type KeyLayout,
  type KeyLayoutOptions,
  LAYOUT_OPTION_NAMES,
  resolveKeyLayout,
} from '../reader/key-layout.js';
import {
  type ReadLimitOptions,
  type ReadLimits,
  resolveReadLimits,
} from '../reader/read-limits.js';
import {
  type ListMetricObjectsOptions,
  resolveConcurrency,
  resolveRange,
} from '../reader/read-options.js';
import type { CompactionEvent } from './report.js';

/** Options of compactMetrics() and `otel-s3 compact`, beyond the reader's. */
export interface CompactionOptions {
  /** Where outputs go (the Parquet hour layout under it). Default: `prefix`. */
  outPrefix?: string;
  /**
   * How long after an hour's end it is compacted: later objects are late data, merged by a later
   * run. Default: maxBatchAgeMillis (the format's) + flushTimeoutMillis + 5 minutes, plus the
   * export interval with partitionTime 'data' (see settleMillisOf()).
   */
  settleMillis?: number;
  /** Output files are cut near this size. Default 128 MiB. */
  targetFileBytes?: number;
  /** Codec of the outputs' column chunks. Default `'zstd'`. */
  compression?: Compression;
  /** Plan only: list and report, write nothing. */
  dryRun?: boolean;
  /** Also delete the OTLP objects an output replaces (Parquet inputs are always deleted). */
  deleteInputs?: boolean;
  /** Only the hours of this shard: hour number (hours since 1970) modulo `count` is `index`. */
  shard?: { index: number; count: number };
  /** Hours compacted at once (each bounded as one: memory adds up). Default 1. */
  partitionConcurrency?: number;
  /** Objects fetched ahead while one is read (1-64). Default 8. */
  concurrency?: number;
  /**
   * Run without conditional writes (a server that has none): nothing keeps two compactors
   * apart, so only when this is the only one. Default false: such a server makes the run refuse.
   */
  singleWriter?: boolean;
  /** How long a partition's lease lasts; it is renewed while the work goes on. Default 10 min. */
  leaseMillis?: number;
  /**
   * How far apart the clocks of compactors may be: another's expired lease is taken over only
   * this long after its expiry. Default 60 s.
   */
  leaseClockSkewMillis?: number;
  /** Progress: the plan, each partition's start, each input read, each partition's end. */
  onProgress?: (event: CompactionEvent) => void;
}

export type CompactMetricsOptions = ListMetricObjectsOptions & ReadLimitOptions & CompactionOptions;

/** Added to the batch age and the flush deadline in the default settle time. */
export const SETTLE_MARGIN_MILLIS = 5 * 60_000;
/**
 * The smallest sorted run: below it, encoding costs more per row than it saves (each run is at
 * least a row group of every column), and it fits in the memory bound's 100 MB beside the file.
 */
export const MIN_RUN_BYTES = 8 * 1024 * 1024;

/** Everything a run needs, checked. */
export interface CompactionSettings {
  /** The signal compacted: its objects are read, its outputs written. */
  signal: SignalName;
  /**
   * Where the signal's hour partitions start under a prefix in the Parquet layout: '' for
   * metrics, `traces/` and `logs/` for the others (defaultKeyTemplate). Its leases and skip
   * records are filed under it too.
   */
  partitionRoot: string;
  /**
   * The input layout: the options' keyTemplate, or every format's default layout (OTLP's
   * minute partitions and Parquet's hours), whatever the format says.
   */
  layout: KeyLayout;
  prefix: string;
  outPrefix: string;
  filePrefix: string;
  from: Date | undefined;
  to: Date | undefined;
  settleMillis: number;
  targetFileBytes: number;
  /**
   * Builders' memory before a sorted run is encoded: a quarter of the target, at least
   * MIN_RUN_BYTES. With half, a heavy hour peaked above the memory bound (docs/performance.md).
   */
  runBytes: number;
  compression: Compression;
  limits: ReadLimits;
  dryRun: boolean;
  deleteInputs: boolean;
  shard: { index: number; count: number };
  partitionConcurrency: number;
  concurrency: number;
  singleWriter: boolean;
  leaseMillis: number;
  leaseClockSkewMillis: number;
}

/**
 * Checks every option (InvalidOptionError naming it) and fills in the defaults, for compacting
 * `signal`, whose hours wait for the batch age of `settleFormat` (default: the options' format).
 */
export function resolveCompaction(
  options: CompactMetricsOptions,
  signal: SignalName = 'metrics',
  settleFormat?: Format,
): CompactionSettings {
  /** The option's value checked by the option table's rule, or `fallback` when it is unset. */
  const given = <T>(name: OptionName & keyof CompactMetricsOptions, fallback: T): T =>
    options[name] === undefined ? fallback : check<T>(name)(name, options[name]);
  const { layout, from, to } = resolveRange(options, [signal]);
  const format = settleFormat ?? options.format ?? DEFAULTS.format;
  const template = options.keyTemplate ?? defaultKeyTemplate(format, signal);
  if (hourLeadingChars(template) === undefined) {
    throw new InvalidOptionError(
      'keyTemplate',
      template,
      'a template that starts with the year, month, day and hour (e.g. year=%Y/month=%m/day=%d/hour=%H/...): compaction works on hour partitions',
    );
  }
  if ((options.partitionTimeZone ?? DEFAULTS.partitionTimeZone) !== 'UTC') {
    throw new InvalidOptionError(
      'partitionTimeZone',
      options.partitionTimeZone,
      "'UTC': outputs are filed in UTC hours, and local hours can repeat",
    );
  }
  const prefix = layout.prefix;
  const outPrefix = given('outPrefix', prefix);
  if (outPrefix !== prefix && (nested(prefix, outPrefix) || nested(outPrefix, prefix))) {
    throw new InvalidOptionError(
      'outPrefix',
      options.outPrefix,
      `the prefix itself ("${prefix}") or a prefix outside it, not nested in it or around it`,
    );
  }
  const compression = given('compression', COMPACTION_DEFAULTS.compression);
  // Inputs (Parquet pages, .zst objects) need zstd whatever the outputs use.
  requireZstdEngine();
  const targetFileBytes = given('targetFileBytes', COMPACTION_DEFAULTS.targetFileBytes);
  const flag = (name: 'dryRun' | 'deleteInputs' | 'singleWriter') => given(name, false);
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
    throw new InvalidOptionError('onProgress', options.onProgress, 'a function');
  }
  // Without a keyTemplate, every format's default layout, whatever the format says (the reader
  // recognises them all when given neither): a prefix that changed format is compacted whole.
  const input =
    options.keyTemplate === undefined
      ? resolveKeyLayout(prefix, { ...layoutOptions(options), format: undefined }, [signal])
      : layout;
  const partitionRoot = defaultKeyTemplate('parquet', signal).slice(
    0,
    defaultKeyTemplate('parquet', signal).indexOf('year='),
  );
  return {
    signal,
    partitionRoot,
    layout: input,
    prefix,
    outPrefix,
    filePrefix: options.filePrefix ?? DEFAULTS.filePrefix,
    from,
    to,
    settleMillis: given(
      'settleMillis',
      // Without a format or template, every format's objects are inputs: the slowest to seal's.
      settleMillisOf({
        ...options,
        format:
          settleFormat ??
          options.format ??
          (options.keyTemplate === undefined ? SLOWEST_FORMAT : DEFAULTS.format),
      }),
    ),
    targetFileBytes,
    runBytes: Math.max(MIN_RUN_BYTES, Math.floor(targetFileBytes / 4)),
    compression,
    limits: resolveReadLimits(options),
    dryRun: flag('dryRun'),
    deleteInputs: flag('deleteInputs'),
    shard: resolveShard(options.shard),
    partitionConcurrency: given('partitionConcurrency', COMPACTION_DEFAULTS.partitionConcurrency),
    concurrency: resolveConcurrency(options.concurrency),
    singleWriter: flag('singleWriter'),
    leaseMillis: given('leaseMillis', COMPACTION_DEFAULTS.leaseMillis),
    leaseClockSkewMillis: given('leaseClockSkewMillis', COMPACTION_DEFAULTS.leaseClockSkewMillis),
  };
}

/** The format whose batches stay open longest (Parquet's 10 minutes). */
const SLOWEST_FORMAT = (Object.keys(FORMAT_ROWS) as Format[]).reduce((a, b) =>
  FORMAT_ROWS[b].maxBatchAgeMillis > FORMAT_ROWS[a].maxBatchAgeMillis ? b : a,
);

/**
 * The default settle time: the last object of an hour is sealed at most the batch age after it
 * (with partitionTime 'data', its oldest point is up to an export interval older still), and
 * uploaded within the flush deadline; the margin covers retries and clocks.
 */
export function settleMillisOf(options: CompactMetricsOptions): number {
  const format = options.format ?? DEFAULTS.format;
  const batchAge = options.maxBatchAgeMillis ?? FORMAT_ROWS[format].maxBatchAgeMillis;
  const interval =
    options.partitionTime === 'data'
      ? (options.exportIntervalMillis ?? DEFAULT_EXPORT_INTERVAL_MILLIS)
      : 0;
  return batchAge + interval + DEFAULTS.flushTimeoutMillis + SETTLE_MARGIN_MILLIS;
}

function resolveShard(value: unknown): { index: number; count: number } {
  if (value === undefined) return { index: 0, count: 1 };
  const shard = value as { index?: unknown; count?: unknown };
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError('shard', value, '{ index, count } with 0 <= index < count');
  }
  const count = rule.integer('shard.count', shard.count, 1, 10_000, 'count');
  const index = rule.integer('shard.index', shard.index, 0, count - 1, 'index');
  return { index, count };
}

function layoutOptions(options: KeyLayoutOptions): KeyLayoutOptions {
  const out: KeyLayoutOptions = {};
  for (const name of LAYOUT_OPTION_NAMES) {
    if (options[name] !== undefined) Object.assign(out, { [name]: options[name] });
  }
  return out;
}

/** True when keys under `inner` are also under `outer`. */
function nested(outer: string, inner: string): boolean {
  return outer === '' || inner.startsWith(`${outer}/`);
}
