import { dirname, resolve } from 'node:path';
import { BYTE_SIZE_HELP, byteSizeOf } from '../base/byte-size.js';
import { InvalidOptionError } from '../base/invalid-option.js';
import {
  describeUnknownVariable,
  ignoredAwsSwitches,
  unknownVariables,
} from '../config/environment.js';
import { check, optionRow } from '../config/option-table.js';
import { READ_DEFAULTS } from '../config/options.js';
import type { SignalName } from '../layout/formats.js';
import { type KeyLayoutOptions, LAYOUT_OPTION_NAMES } from '../reader/key-layout.js';
import type { ReadLimitOptions } from '../reader/read-limits.js';
import {
  CONFIG_FILE_NAME,
  type ConfigFile,
  type ConfigFileKey,
  loadConfigFile,
} from './config-file.js';
import { DURATION_HELP, parseDuration, parseTime, TIME_HELP, withExampleZone } from './duration.js';
import { UsageError } from './exit-codes.js';
import { SettingSources } from './setting-sources.js';

/** The global options as commander parsed them (strings, unvalidated). */
export interface GlobalFlags {
  bucket?: string;
  prefix?: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  objectFormat?: string;
  keyTemplate?: string;
  filePrefix?: string;
  partitionTimeZone?: string;
  partitionTime?: string;
  maxBatchAge?: string;
  exportInterval?: string;
  dir?: string;
  since?: string;
  from?: string;
  to?: string;
  concurrency?: string;
  maxObjectBytes?: string;
  maxDecompressedBytes?: string;
  config?: string;
  progress?: boolean;
}

export type Source =
  | { kind: 's3'; bucket: string; endpoint?: string; region?: string; forcePathStyle?: boolean }
  | { kind: 'dir'; dir: string };

/** Everything a command needs to know about where and what to read. */
export interface Settings {
  source: Source;
  prefix: string;
  /** How the exporter named its objects; unset options take the exporter's defaults. */
  layout: KeyLayoutOptions;
  from: Date | undefined;
  to: Date | undefined;
  concurrency: number;
  /** Size limits; unset ones take the reader's defaults. */
  limits: ReadLimitOptions;
  /** `--no-progress` turns the progress bar off; it is only ever shown on a terminal. */
  progress: boolean;
  /** Where each value came from (`flag --bucket`, `environment variable OTEL_EXPORTER_S3_BUCKET`, ...). */
  origins: Partial<Record<ConfigFileKey, string>>;
  /** E.g. `s3://metrics/prod/` or `/home/me/mirror/prod/`. */
  where: string;
  /** What to say before reading, e.g. about a misspelled OTEL_EXPORTER_S3_* variable. */
  warnings: string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Resolves the global options: each setting from its flag, else its environment variable, else
 * `.otel-s3.json`. A bad value is a UsageError that names where it came from and what is allowed.
 */
export function resolveSettings(
  flags: GlobalFlags,
  env: Env,
  cwd: string,
  now = Date.now(),
  signal?: SignalName,
  command?: string,
): Settings {
  const config =
    flags.config !== undefined
      ? loadConfigFile(resolve(cwd, flags.config), true)
      : loadConfigFile(resolve(cwd, CONFIG_FILE_NAME), false);
  const sources = new SettingSources({ ...flags }, env, config, signal);
  const source = resolveSource(sources, config, cwd, command);
  const prefix = sources.get('prefix', check<string>('prefix')) ?? '';
  const layout: KeyLayoutOptions = {};
  for (const option of LAYOUT_OPTION_NAMES) {
    const value = sources.get(option, check(option));
    if (value !== undefined) Object.assign(layout, { [option]: value });
  }
  const { from, to } = timeRange(flags, now);
  const concurrency =
    sources.get('concurrency', check<number>('concurrency')) ?? READ_DEFAULTS.concurrency;
  const limits: ReadLimitOptions = {};
  for (const option of ['maxObjectBytes', 'maxDecompressedBytes'] as const) {
    const value = sources.get(option, byteSize);
    if (value !== undefined) limits[option] = value;
  }
  const root = source.kind === 's3' ? `s3://${source.bucket}/` : `${source.dir}/`;
  return {
    source,
    prefix,
    layout,
    from,
    to,
    concurrency,
    limits,
    progress: flags.progress !== false,
    origins: sources.origins,
    where: prefix === '' ? root : `${root}${prefix}/`,
    // Read or not by the CLI, a misspelled name is a typo in the service's configuration too.
    warnings: [
      ...futureStart(flags, from, now),
      ...unknownVariables(env).map(describeUnknownVariable),
      ...(source.kind === 's3' ? ignoredAwsSwitches(env) : []),
      ...sources.ignored.map(
        (name) =>
          `${name} is one signal's: points, spans, logs and trace read it (for their signal); this command reads the variable for every signal, or its flag`,
      ),
    ],
  };
}

/** What to give when neither a bucket nor a directory is set, in the command's words. */
function noSource(command: string | undefined): string {
  const bucket = `--bucket <name> (or set ${optionRow('bucket').variable})`;
  if (command === 'check') return `otel-s3 check tests S3 access: give ${bucket}`;
  if (command === 'compact') {
    return `nothing to compact: give ${bucket} to compact in S3, or --dir <path> to compact a local copy`;
  }
  return `nothing to read: give ${bucket} to read S3, or --dir <path> to read a local copy`;
}

function resolveSource(
  sources: SettingSources,
  config: ConfigFile | undefined,
  cwd: string,
  command: string | undefined,
): Source {
  const bucketIn = sources.layerOf('bucket');
  const dirIn = sources.layerOf('dir');
  if (bucketIn === 'flag' && dirIn === 'flag') {
    throw new UsageError('--dir and --bucket name two sources: give one of them');
  }
  if (bucketIn === 'file' && dirIn === 'file') {
    throw new UsageError(`${config?.path}: give "bucket" or "dir", not both`);
  }
  if (bucketIn === undefined && dirIn === undefined) throw new UsageError(noSource(command));
  // A flag outranks the environment, which outranks the file.
  if (dirIn === 'flag' || bucketIn === undefined) {
    const dir = sources.get('dir', check<string>('dir')) as string;
    // --dir is relative to the current directory, the file's "dir" to the file.
    const base = dirIn === 'flag' || config === undefined ? cwd : dirname(config.path);
    return { kind: 'dir', dir: resolve(base, dir) };
  }
  const bucket = sources.get('bucket', check<string>('bucket')) as string;
  const source: Source = { kind: 's3', bucket };
  const endpoint = sources.get('endpoint', check<string>('endpoint'));
  if (endpoint !== undefined) source.endpoint = endpoint;
  const region = sources.get('region', check<string>('region'));
  if (region !== undefined) source.region = region;
  const forcePathStyle = sources.get('forcePathStyle', check<boolean>('forcePathStyle'));
  if (forcePathStyle !== undefined) source.forcePathStyle = forcePathStyle;
  return source;
}

/**
 * A size limit from text (`128MiB`) or a number of bytes, checked as the reader checks it: a
 * size too large is out of its range, not misspelled.
 */
function byteSize(option: string, value: unknown): number {
  const limit = check<number>(option as 'maxObjectBytes' | 'maxDecompressedBytes');
  if (typeof value !== 'string') return limit(option, value);
  const bytes = byteSizeOf(value);
  if (bytes === undefined) throw new InvalidOptionError(option, value, BYTE_SIZE_HELP);
  return limit(option, bytes);
}

/**
 * A `--from` after now finds only objects of a clock ahead of this one: most often it is a local
 * time given without its zone, read as UTC, and an empty range would say nothing of it.
 */
function futureStart(flags: GlobalFlags, from: Date | undefined, now: number): string[] {
  if (flags.from === undefined || from === undefined || from.getTime() <= now) return [];
  const zoned = withExampleZone(flags.from);
  const zone = zoned === undefined ? '' : `; a time without a zone is UTC: add the zone (${zoned})`;
  return [
    `--from ${from.toISOString()} is after now (${new Date(now).toISOString()}): only objects sealed by a clock ahead of this one can be in the range${zone}`,
  ];
}

const MAX_SINCE_DAYS = 100_000_000;

function timeRange(flags: GlobalFlags, now: number): { from?: Date; to?: Date } {
  if (flags.since !== undefined && flags.from !== undefined) {
    throw new UsageError('--since and --from both set the start of the range: give one of them');
  }
  let from: Date | undefined;
  if (flags.since !== undefined) {
    const millis = parseDuration(flags.since);
    // A Date reaches 100000000 days either side of 1970: a longer look back is no time at all.
    // A time where a duration goes: the start of the range is --from.
    if (millis === undefined && parseTime(flags.since) !== undefined) {
      throw new UsageError(
        `invalid --since ${JSON.stringify(flags.since)}: --since takes ${DURATION_HELP}, back from now; for a range from a time: --from ${flags.since.trim()}`,
      );
    }
    if (millis === undefined || millis > MAX_SINCE_DAYS * 86_400_000) {
      throw new UsageError(
        `invalid --since ${JSON.stringify(flags.since)}: expected ${DURATION_HELP}, of at most ${MAX_SINCE_DAYS}d`,
      );
    }
    from = new Date(now - millis);
  } else if (flags.from !== undefined) {
    from = parseTime(flags.from);
    if (from === undefined && parseDuration(flags.from) !== undefined) {
      throw new UsageError(
        `invalid --from ${JSON.stringify(flags.from)}: --from takes ${TIME_HELP}; for the last ${flags.from.trim()}: --since ${flags.from.trim()}`,
      );
    }
    if (from === undefined) {
      throw new UsageError(`invalid --from ${JSON.stringify(flags.from)}: expected ${TIME_HELP}`);
    }
  }
  let to: Date | undefined;
  if (flags.to !== undefined) {
    to = parseTime(flags.to);
    if (to === undefined) {
      throw new UsageError(`invalid --to ${JSON.stringify(flags.to)}: expected ${TIME_HELP}`);
    }
    if (from !== undefined && to.getTime() < from.getTime()) {
      throw new UsageError(
        `invalid --to ${JSON.stringify(flags.to)}: it is before the start of the range (${from.toISOString()})`,
      );
    }
  }
  return { from, to };
}
