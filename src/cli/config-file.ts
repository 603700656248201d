import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MAX_READ_CONCURRENCY } from '../reader/read-options.js';
import { UsageError } from './exit-codes.js';

/** The file the CLI reads defaults from, in the current directory. */
export const CONFIG_FILE_NAME = '.otel-s3.json';

/** Defaults for the CLI; flags and environment variables win over them. No secrets here. */
export interface ConfigFile {
  /** Where the file is, for messages. */
  path: string;
  bucket?: string;
  prefix?: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
  /** A directory laid out like the bucket; relative to the file's own directory. */
  dir?: string;
  concurrency?: number;
  /** A number of bytes, or a size like "128MiB" (validated with the flags). */
  maxObjectBytes?: number | string;
  maxDecompressedBytes?: number | string;
}

const STRING_KEYS = ['bucket', 'prefix', 'endpoint', 'region', 'dir'] as const;
const SIZE_KEYS = ['maxObjectBytes', 'maxDecompressedBytes'] as const;
const KNOWN = new Set<string>([
  ...STRING_KEYS,
  ...SIZE_KEYS,
  'forcePathStyle',
  'concurrency',
  '$comment',
]);

/**
 * Reads a config file. A missing file is fine unless it was asked for by name (`--config`); a
 * file that is there must be valid: an unknown key or a wrong type is a usage error naming it.
 */
export function loadConfigFile(path: string, required: boolean): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (!required && (error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `${path}: expected a JSON object like {"bucket": "metrics", "prefix": "prod"}`,
    );
  }
  const raw = value as Record<string, unknown>;
  const config: ConfigFile = { path };
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) {
      const secret = /secret|key|token|password|credential/i.test(key)
        ? ' (credentials never go in this file: use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)'
        : '';
      throw new UsageError(
        `${path}: unknown key "${key}"${secret}; allowed: ${[...KNOWN].filter((k) => k !== '$comment').join(', ')}`,
      );
    }
  }
  for (const key of STRING_KEYS) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') {
      throw new UsageError(
        `${path}: "${key}" must be a non-empty string, not ${JSON.stringify(v)}`,
      );
    }
    config[key] = key === 'dir' ? resolve(dirname(path), v) : v;
  }
  if (raw.forcePathStyle !== undefined) {
    if (typeof raw.forcePathStyle !== 'boolean') {
      throw new UsageError(
        `${path}: "forcePathStyle" must be true or false, not ${JSON.stringify(raw.forcePathStyle)}`,
      );
    }
    config.forcePathStyle = raw.forcePathStyle;
  }
  if (raw.concurrency !== undefined) {
    if (typeof raw.concurrency !== 'number') {
      throw new UsageError(
        `${path}: "concurrency" must be an integer from 1 to ${MAX_READ_CONCURRENCY}, not ${JSON.stringify(raw.concurrency)}`,
      );
    }
    config.concurrency = raw.concurrency;
  }
  for (const key of SIZE_KEYS) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' && typeof v !== 'string') {
      throw new UsageError(
        `${path}: "${key}" must be a number of bytes or a size like "128MiB", not ${JSON.stringify(v)}`,
      );
    }
    config[key] = v;
  }
  return config;
}
