import {
  CHECKSUM_MODES,
  COMPRESSIONS,
  FORMATS,
  InvalidOptionError,
  PARTITION_TIMES,
  type ResolvedConfig,
  resolveConfig,
  type S3MetricExporterOptions,
  SSE_MODES,
  STORAGE_CLASSES,
  TEMPORALITIES,
  TIME_ZONES,
} from './config.js';

type Kind = 'string' | 'integer' | 'boolean' | 'map' | readonly string[];

/** Every option settable from the environment, OTel style. Constructor options win. */
export const ENVIRONMENT_VARIABLES = [
  ['OTEL_EXPORTER_S3_BUCKET', 'bucket', 'string'],
  ['OTEL_EXPORTER_S3_PREFIX', 'prefix', 'string'],
  ['OTEL_EXPORTER_S3_FILE_PREFIX', 'filePrefix', 'string'],
  ['OTEL_EXPORTER_S3_REGION', 'region', 'string'],
  ['OTEL_EXPORTER_S3_ENDPOINT', 'endpoint', 'string'],
  ['OTEL_EXPORTER_S3_FORCE_PATH_STYLE', 'forcePathStyle', 'boolean'],
  ['OTEL_EXPORTER_S3_FORMAT', 'format', FORMATS],
  ['OTEL_EXPORTER_S3_COMPRESSION', 'compression', COMPRESSIONS],
  ['OTEL_EXPORTER_S3_COMPRESSION_LEVEL', 'compressionLevel', 'integer'],
  ['OTEL_EXPORTER_S3_MAX_BATCH_BYTES', 'maxBatchBytes', 'integer'],
  ['OTEL_EXPORTER_S3_MAX_BATCH_AGE', 'maxBatchAgeMillis', 'integer'],
  ['OTEL_EXPORTER_S3_MAX_BUFFERED_BYTES', 'maxBufferedBytes', 'integer'],
  ['OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY', 'uploadConcurrency', 'integer'],
  ['OTEL_EXPORTER_S3_TIMEOUT', 'requestTimeoutMillis', 'integer'],
  ['OTEL_EXPORTER_S3_FLUSH_TIMEOUT', 'flushTimeoutMillis', 'integer'],
  ['OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE', 'temporalityPreference', TEMPORALITIES],
  ['OTEL_EXPORTER_S3_CONDITIONAL_WRITES', 'conditionalWrites', 'boolean'],
  ['OTEL_EXPORTER_S3_CHECKSUM', 'requestChecksumCalculation', CHECKSUM_MODES],
  ['OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY', 'retry.initialDelayMillis', 'integer'],
  ['OTEL_EXPORTER_S3_RETRY_MAX_DELAY', 'retry.maxDelayMillis', 'integer'],
  ['OTEL_EXPORTER_S3_SPOOL_DIR', 'spoolDir', 'string'],
  ['OTEL_EXPORTER_S3_MAX_SPOOL_BYTES', 'maxSpoolBytes', 'integer'],
  ['OTEL_EXPORTER_S3_KEY_TEMPLATE', 'keyTemplate', 'string'],
  ['OTEL_EXPORTER_S3_PARTITION_TIME', 'partitionTime', PARTITION_TIMES],
  ['OTEL_EXPORTER_S3_PARTITION_TIME_ZONE', 'partitionTimeZone', TIME_ZONES],
  ['OTEL_EXPORTER_S3_SSE', 'serverSideEncryption', SSE_MODES],
  ['OTEL_EXPORTER_S3_SSE_KMS_KEY_ID', 'sseKmsKeyId', 'string'],
  ['OTEL_EXPORTER_S3_STORAGE_CLASS', 'storageClass', STORAGE_CLASSES],
  ['OTEL_EXPORTER_S3_TAGS', 'tags', 'map'],
  ['OTEL_EXPORTER_S3_METADATA', 'metadata', 'map'],
  ['OTEL_EXPORTER_S3_USER_AGENT', 'userAgent', 'string'],
] as const satisfies readonly (readonly [string, string, Kind])[];

function parse(
  variable: string,
  option: string,
  raw: string,
  kind: Kind,
): string | number | boolean | Record<string, string> {
  if (kind === 'string') return raw;
  if (kind === 'map') return parseMap(variable, option, raw);
  const value = raw.trim();
  if (kind === 'integer') {
    if (!/^\d+$/.test(value))
      throw new InvalidOptionError(option, raw, 'a non-negative integer', variable);
    return Number(value);
  }
  if (kind === 'boolean') {
    const parsed = parseBooleanText(value);
    if (parsed === undefined) throw new InvalidOptionError(option, raw, 'true or false', variable);
    return parsed;
  }
  // Enumerations: OTel's values are case-insensitive (e.g. CUMULATIVE); ours are spelled as listed.
  const match = kind.find((k) => k.toLowerCase() === value.toLowerCase());
  if (match === undefined) {
    throw new InvalidOptionError(
      option,
      raw,
      `one of ${kind.map((k) => `'${k}'`).join(', ')}`,
      variable,
    );
  }
  return match;
}

/** `key=value,key2=value2`, as OTEL_RESOURCE_ATTRIBUTES: values may be percent-encoded. */
function parseMap(variable: string, option: string, raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at < 1 || key === '') {
      throw new InvalidOptionError(option, raw, 'comma-separated key=value pairs', variable);
    }
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new InvalidOptionError(
        option,
        raw,
        'comma-separated key=value pairs (valid percent-encoding)',
        variable,
      );
    }
  }
  return out;
}

/** Options from the environment, and which variable each came from. Empty values count as unset. */
export function optionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): {
  options: S3MetricExporterOptions;
  variables: Map<string, string>;
} {
  const options: Record<string, unknown> = {};
  const retry: Record<string, unknown> = {};
  const variables = new Map<string, string>();
  for (const [variable, option, kind] of ENVIRONMENT_VARIABLES) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    const value = parse(variable, option, raw, kind);
    if (option.startsWith('retry.')) retry[option.slice('retry.'.length)] = value;
    else options[option] = value;
    variables.set(option, variable);
  }
  if (Object.keys(retry).length > 0) options.retry = retry;
  return { options: options as S3MetricExporterOptions, variables };
}

/**
 * Constructor options over environment variables over defaults, validated. An invalid value
 * that came from the environment is reported under its variable's name.
 */
export function configure(
  options: S3MetricExporterOptions,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedConfig {
  const fromEnv = optionsFromEnvironment(env);
  const merged: S3MetricExporterOptions = {
    ...fromEnv.options,
    ...definedOnly(options),
    retry: { ...fromEnv.options.retry, ...definedOnly(options.retry ?? {}) },
  };
  try {
    return resolveConfig(merged);
  } catch (error) {
    if (!(error instanceof InvalidOptionError) || error.variable !== undefined) throw error;
    const variable = fromEnv.variables.get(error.option);
    const userSet = error.option.startsWith('retry.')
      ? options.retry?.[
          error.option.slice(6) as keyof NonNullable<S3MetricExporterOptions['retry']>
        ] !== undefined
      : (options as Record<string, unknown>)[error.option] !== undefined;
    if (variable === undefined || userSet) throw error;
    throw new InvalidOptionError(error.option, error.value, error.expected, variable);
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `true` or `false` in any case, around spaces; anything else is undefined. */
export function parseBooleanText(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : undefined;
}
