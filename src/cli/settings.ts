import { constants } from 'node:buffer';
import { resolve } from 'node:path';
import { InvalidOptionError, isBucketName, isHttpUrl, normalizePrefix } from '../config.js';
import { parseBooleanText } from '../env.js';
import { BYTE_SIZE_HELP, parseByteSize } from '../reader/byte-size.js';
import type { ReadLimitOptions } from '../reader/read-limits.js';
import { DEFAULT_READ_CONCURRENCY, MAX_READ_CONCURRENCY } from '../reader/read-options.js';
import { CONFIG_FILE_NAME, type ConfigFile, loadConfigFile } from './config-file.js';
import { DURATION_HELP, parseDuration, parseTime, TIME_HELP } from './duration.js';
import { UsageError } from './exit-codes.js';

/** The global options as commander parsed them (strings, unvalidated). */
export interface GlobalFlags {
  bucket?: string;
  prefix?: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
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

/** The environment variables the CLI reads, OTel style (as the exporter's options). */
export const ENV = {
  bucket: 'OTEL_EXPORTER_S3_BUCKET',
  prefix: 'OTEL_EXPORTER_S3_PREFIX',
  region: 'OTEL_EXPORTER_S3_REGION',
  endpoint: 'OTEL_EXPORTER_S3_ENDPOINT',
  forcePathStyle: 'OTEL_EXPORTER_S3_FORCE_PATH_STYLE',
} as const;

export type Source =
  | { kind: 's3'; bucket: string; endpoint?: string; region?: string; forcePathStyle?: boolean }
  | { kind: 'dir'; dir: string };

/** Everything a command needs to know about where and what to read. */
export interface Settings {
  source: Source;
  prefix: string;
  from: Date | undefined;
  to: Date | undefined;
  concurrency: number;
  /** Size limits; unset ones take the reader's defaults. */
  limits: ReadLimitOptions;
  /** `--no-progress` turns the progress bar off; it is only ever shown on a terminal. */
  progress: boolean;
  /** Where each value came from (`--bucket`, `OTEL_EXPORTER_S3_BUCKET`, `.otel-s3.json`). */
  origins: Partial<Record<'bucket' | 'dir' | 'endpoint' | 'region' | 'prefix', string>>;
  /** E.g. `s3://metrics/prod/` or `/home/me/mirror/prod/`. */
  where: string;
}

type Env = Readonly<Record<string, string | undefined>>;

interface Picked<T> {
  value: T;
  origin: string;
}

/**
 * Resolves the global options: each setting from its flag, else its environment variable, else
 * `.otel-s3.json`. A bad value is a UsageError that names where it came from and what is allowed.
 */
export function resolveSettings(
  flags: GlobalFlags,
  env: Env,
  cwd: string,
  now = Date.now(),
): Settings {
  const config =
    flags.config !== undefined
      ? loadConfigFile(resolve(cwd, flags.config), true)
      : loadConfigFile(resolve(cwd, CONFIG_FILE_NAME), false);
  const fromConfig = (key: string) => `${config?.path ?? CONFIG_FILE_NAME} "${key}"`;

  function pick<K extends keyof typeof ENV & keyof ConfigFile>(key: K): Picked<string> | undefined {
    const flag = flags[key];
    if (flag !== undefined) return { value: String(flag), origin: `--${kebab(key)}` };
    const fromEnv = env[ENV[key]];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, origin: ENV[key] };
    const fromFile = config?.[key];
    if (fromFile !== undefined) return { value: String(fromFile), origin: fromConfig(key) };
    return undefined;
  }

  const origins: Settings['origins'] = {};
  const source = resolveSource(flags, env, config, cwd, origins, pick);

  const prefixPick = pick('prefix');
  let prefix = '';
  if (prefixPick !== undefined) {
    origins.prefix = prefixPick.origin;
    try {
      prefix = normalizePrefix(prefixPick.value, prefixPick.origin);
    } catch (error) {
      if (error instanceof InvalidOptionError) {
        throw new UsageError(error.detail);
      }
      throw error;
    }
  }

  const { from, to } = timeRange(flags, now);
  const concurrency = concurrencyOf(flags, config);
  const limits: ReadLimitOptions = {};
  for (const key of ['maxObjectBytes', 'maxDecompressedBytes'] as const) {
    const value = byteSizeOf(key, flags, config);
    if (value !== undefined) limits[key] = value;
  }
  const root = source.kind === 's3' ? `s3://${source.bucket}/` : `${source.dir}/`;
  return {
    source,
    prefix,
    from,
    to,
    concurrency,
    limits,
    progress: flags.progress !== false,
    origins,
    where: prefix === '' ? root : `${root}${prefix}/`,
  };
}

function resolveSource(
  flags: GlobalFlags,
  env: Env,
  config: ConfigFile | undefined,
  cwd: string,
  origins: Settings['origins'],
  pick: (key: 'bucket' | 'endpoint' | 'region' | 'forcePathStyle') => Picked<string> | undefined,
): Source {
  if (flags.dir !== undefined && flags.bucket !== undefined) {
    throw new UsageError('--dir and --bucket name two sources: give one of them');
  }
  const bucketFromEnv = env[ENV.bucket] !== undefined && env[ENV.bucket] !== '';
  let kind: 's3' | 'dir';
  if (flags.dir !== undefined) kind = 'dir';
  else if (flags.bucket !== undefined || bucketFromEnv) kind = 's3';
  else if (config?.dir !== undefined && config.bucket !== undefined) {
    throw new UsageError(`${config.path}: give "bucket" or "dir", not both`);
  } else if (config?.dir !== undefined) kind = 'dir';
  else if (config?.bucket !== undefined) kind = 's3';
  else {
    throw new UsageError(
      `nothing to read: give --bucket <name> (or set ${ENV.bucket}) to read S3, or --dir <path> to read a local copy`,
    );
  }

  if (kind === 'dir') {
    const dir = flags.dir !== undefined ? resolve(cwd, flags.dir) : (config?.dir as string);
    origins.dir = flags.dir !== undefined ? '--dir' : `${config?.path} "dir"`;
    return { kind: 'dir', dir };
  }

  const bucket = pick('bucket') as Picked<string>;
  origins.bucket = bucket.origin;
  if (!isBucketName(bucket.value)) {
    throw new UsageError(
      `invalid ${bucket.origin} ${JSON.stringify(bucket.value)}: expected a bucket name without "/" or spaces`,
    );
  }
  const source: Source = { kind: 's3', bucket: bucket.value };
  const endpoint = pick('endpoint');
  if (endpoint !== undefined) {
    origins.endpoint = endpoint.origin;
    if (!isHttpUrl(endpoint.value)) {
      throw new UsageError(
        `invalid ${endpoint.origin} ${JSON.stringify(endpoint.value)}: expected an absolute http:// or https:// URL, e.g. http://127.0.0.1:9000`,
      );
    }
    source.endpoint = endpoint.value;
  }
  const region = pick('region');
  if (region !== undefined) {
    origins.region = region.origin;
    source.region = region.value;
  }
  const pathStyle = pick('forcePathStyle');
  if (pathStyle !== undefined) {
    const value = parseBooleanText(pathStyle.value);
    if (value === undefined) {
      throw new UsageError(
        `invalid ${pathStyle.origin} ${JSON.stringify(pathStyle.value)}: expected true or false`,
      );
    }
    source.forcePathStyle = value;
  }
  return source;
}

function timeRange(flags: GlobalFlags, now: number): { from?: Date; to?: Date } {
  if (flags.since !== undefined && flags.from !== undefined) {
    throw new UsageError('--since and --from both set the start of the range: give one of them');
  }
  let from: Date | undefined;
  if (flags.since !== undefined) {
    const millis = parseDuration(flags.since);
    if (millis === undefined) {
      throw new UsageError(
        `invalid --since ${JSON.stringify(flags.since)}: expected ${DURATION_HELP}`,
      );
    }
    from = new Date(now - millis);
  } else if (flags.from !== undefined) {
    from = parseTime(flags.from);
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

function concurrencyOf(flags: GlobalFlags, config: ConfigFile | undefined): number {
  const [raw, origin] =
    flags.concurrency !== undefined
      ? [flags.concurrency, '--concurrency']
      : [config?.concurrency, `${config?.path} "concurrency"`];
  if (raw === undefined) return DEFAULT_READ_CONCURRENCY;
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_READ_CONCURRENCY) {
    throw new UsageError(
      `invalid ${origin} ${JSON.stringify(raw)}: expected an integer from 1 to ${MAX_READ_CONCURRENCY}`,
    );
  }
  return n;
}

/** A size limit from its flag (`128MiB`), else the config file (a number of bytes or the same text). */
function byteSizeOf(
  key: 'maxObjectBytes' | 'maxDecompressedBytes',
  flags: GlobalFlags,
  config: ConfigFile | undefined,
): number | undefined {
  const [raw, origin] =
    flags[key] !== undefined
      ? [flags[key], `--${kebab(key)}`]
      : [config?.[key], `${config?.path} "${key}"`];
  if (raw === undefined) return undefined;
  const bytes = typeof raw === 'number' ? raw : parseByteSize(raw);
  if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes < 1) {
    throw new UsageError(`invalid ${origin} ${JSON.stringify(raw)}: expected ${BYTE_SIZE_HELP}`);
  }
  if (bytes > constants.MAX_LENGTH) {
    throw new UsageError(
      `invalid ${origin} ${JSON.stringify(raw)}: expected at most ${constants.MAX_LENGTH} bytes, the largest Buffer of this Node.js`,
    );
  }
  return bytes;
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
