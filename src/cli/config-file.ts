import { readFileSync } from 'node:fs';
import { OPTION_TABLE } from '../config/option-table.js';
import { UsageError } from './exit-codes.js';

/** The file the CLI reads defaults from, in the current directory. */
export const CONFIG_FILE_NAME = '.otel-s3.json';

/** The CLI's settings: the option table's rows that the file may set. */
export type ConfigFileKey = Extract<(typeof OPTION_TABLE)[number], { readonly file: true }>['name'];

/** Keys of the config file: the CLI's settings, named as the exporter's and the reader's options. */
export const CONFIG_FILE_KEYS: readonly ConfigFileKey[] = OPTION_TABLE.flatMap((row) =>
  'file' in row && row.file ? [row.name as ConfigFileKey] : [],
);

/**
 * Defaults for the CLI; flags and environment variables win over them. No secrets here. The
 * values are checked where they are used, by the same rules as flags and environment variables.
 */
export interface ConfigFile {
  /** Where the file is, for messages; a relative `dir` is relative to its directory. */
  path: string;
  values: Partial<Record<ConfigFileKey, unknown>>;
}

/**
 * Reads a config file. A missing file is fine unless it was asked for by name (`--config`); a
 * file that is there must be a JSON object of known keys.
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
    // A byte order mark, which some Windows editors save UTF-8 with, is not JSON's: not text.
    value = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `${path}: expected a JSON object like {"bucket": "metrics", "prefix": "prod"}`,
    );
  }
  const values: ConfigFile['values'] = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$comment') continue;
    if (!(CONFIG_FILE_KEYS as readonly string[]).includes(key)) {
      const secret = /secret|access.?key|token|password|credential/i.test(key)
        ? ' (credentials never go in this file: use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)'
        : '';
      throw new UsageError(
        `${path}: unknown key "${key}"${secret}; allowed: ${CONFIG_FILE_KEYS.join(', ')}`,
      );
    }
    values[key as ConfigFileKey] = v;
  }
  return { path, values };
}
