import { InvalidOptionError } from '../base/invalid-option.js';
import { check } from '../config/option-table.js';
import { READ_DEFAULTS } from '../config/options.js';
import type { SignalName } from '../layout/formats.js';
import { type KeyLayout, type KeyLayoutOptions, resolveKeyLayout } from './key-layout.js';
import type { ReaderConnectionOptions } from './s3-source.js';

/**
 * Which objects to read: the exporter's prefix and key layout, and a time range of the objects'
 * seal times (the timestamp of the UUIDv7 in each key, whatever the partition it is filed under).
 */
export interface ReadRangeOptions extends KeyLayoutOptions {
  /** Key prefix, as given to the exporter (normalized the same way). Default `''`. */
  prefix?: string;
  /** Objects sealed at or after this time. Default: the earliest. */
  from?: Date;
  /** Objects sealed before this time (exclusive). Default: no end. */
  to?: Date;
  /** Aborts listing and downloads; iteration then throws the signal's reason. */
  signal?: AbortSignal;
}

/** Read from an S3 bucket... */
export interface S3Location extends ReaderConnectionOptions {
  bucket: string;
  dir?: undefined;
}

/** ...or from a local directory laid out like one (`{dir}/{key}`), e.g. an `aws s3 sync` mirror. */
export interface DirLocation {
  dir: string;
  bucket?: undefined;
}

/** Where and what to list: the options of every listing and reading function. */
export type ListObjectsOptions = ReadRangeOptions & (S3Location | DirLocation);
/** The options of listMetricObjects (a ListObjectsOptions). */
export type ListMetricObjectsOptions = ListObjectsOptions;

export interface ResolvedRange {
  layout: KeyLayout;
  from: Date | undefined;
  to: Date | undefined;
}

/**
 * Validates the location and range; throws InvalidOptionError naming the option. The layout is
 * that of `signals`' objects.
 */
export function resolveRange(
  options: ListObjectsOptions,
  signals: readonly SignalName[] = ['metrics'],
): ResolvedRange {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', options, 'an object with { bucket } or { dir }');
  }
  if ((options.bucket === undefined) === (options.dir === undefined)) {
    throw new InvalidOptionError(
      'bucket',
      options.bucket,
      'either bucket (read from S3) or dir (read a local directory), not both',
    );
  }
  if (options.bucket !== undefined) {
    for (const option of ['bucket', 'endpoint', 'region', 'forcePathStyle'] as const) {
      if (option === 'bucket' || options[option] !== undefined)
        check(option)(option, options[option]);
    }
  } else if (typeof options.dir !== 'string' || options.dir === '') {
    throw new InvalidOptionError('dir', options.dir, 'a directory path');
  }
  const from = time('from', options.from);
  const to = time('to', options.to);
  if (from !== undefined && to !== undefined && to.getTime() < from.getTime()) {
    throw new InvalidOptionError(
      'to',
      options.to,
      `a time not before from (${from.toISOString()})`,
    );
  }
  const prefix = check<string>('prefix')('prefix', options.prefix ?? '');
  const layout = resolveKeyLayout(prefix, options, signals);
  return { layout, from, to };
}

export function resolveConcurrency(value: unknown): number {
  if (value === undefined) return READ_DEFAULTS.concurrency;
  return check<number>('concurrency')('concurrency', value);
}

function time(option: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidOptionError(option, value, 'a valid Date');
  }
  return value;
}
