import { defaultKeyTemplate, OUTPUT_EXTENSION, type SignalName } from './formats.js';
import { KeyTemplate, type ParsedKey } from './key-template.js';

/**
 * The names of compaction outputs and of the package's own bookkeeping: part of the key contract
 * that the exporter, the reader and the compactor share.
 *
 * An output is a Parquet file of its signal's schema in the Parquet hour layout (always in UTC),
 * named `{filePrefix}metrics_{uuidv7}.compacted.parquet` (`traces_`, `logs_`).
 */

/** The name's ending: engines glob `*.parquet` and read it; this package recognises it by name. */
export { OUTPUT_EXTENSION };

/**
 * Keys under `{prefix}/_otel_s3_…/` are this package's own bookkeeping, never telemetry objects:
 * the reader neither reads them nor counts them as keys out of the layout.
 */
export const INTERNAL_AREA = '_otel_s3_';

/**
 * The compactor's bookkeeping (leases, records of unreadable inputs) lives in this directory
 * under the output prefix. Spark, Hive and Trino skip `_`-prefixed directories; DuckDB's `**`
 * does not, so its objects are named `.lease`, `.skips`: no `*.parquet` or `*.json` glob matches
 * them. It is inside the reader's INTERNAL_AREA (`_otel_s3_`), which it neither reads nor counts.
 */
export const BOOKKEEPING_DIR = '_otel_s3_compaction';

/**
 * Where access is tested: the exporter's startup check (`startup.check`, a PutObject that stores
 * nothing) and `otel-s3 check` (`{uuid}.check`, deleted after). Under the prefix, so a permission
 * granted on `{prefix}/*` covers it, and inside INTERNAL_AREA, so readers pass over it.
 */
export const ACCESS_CHECK_DIR = '_otel_s3_check';

/** `{prefix}/_otel_s3_check/{name}`. */
export function accessCheckKey(prefix: string, name: string): string {
  return prefix === '' ? `${ACCESS_CHECK_DIR}/${name}` : `${prefix}/${ACCESS_CHECK_DIR}/${name}`;
}

/** Names of outputs under one prefix: the Parquet hour layout with the output's ending. */
export interface OutputNames {
  /** The output's partition and UUID, or undefined for a key that is not an output here. */
  parse(key: string): ParsedKey | undefined;
  /** The key of an output of the hour starting at `hour`, with this UUIDv7. */
  render(hour: Date, id: string): string;
}

export function outputNames(prefix: string, filePrefix: string, signal: SignalName): OutputNames {
  const template = new KeyTemplate(defaultKeyTemplate('parquet', signal), {
    prefix,
    filePrefix,
    timeZone: 'UTC',
  });
  return {
    parse(key) {
      if (!key.endsWith(OUTPUT_EXTENSION)) return undefined;
      const parsed = template.parse(key);
      return parsed?.extension === OUTPUT_EXTENSION ? parsed : undefined;
    },
    render: (hour, id) =>
      template.render({ time: hour, attributes: {}, extension: OUTPUT_EXTENSION, id }),
  };
}
