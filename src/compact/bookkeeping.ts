import { uuidv7 } from 'uuidv7';
import { BOOKKEEPING_DIR } from '../layout/outputs.js';

/**
 * The keys of the compactor's own objects, all under `{outPrefix}/_otel_s3_compaction/` (see
 * BOOKKEEPING_DIR: this package's reader passes over it). They hold JSON, but their names end
 * in neither `.parquet` nor `.json`: DuckDB's `**` globs descend into `_` directories, and
 * neither read_parquet nor a read_json of OTLP objects by such a glob must pick them up.
 *   leases/year=…/month=…/day=…/hour=…/{generation}.lease   who compacts an hour, until when
 *   skipped/year=…/month=…/day=…/hour=….skips               inputs of an hour that cannot be read
 * (the metrics' hours; a signal whose hours are under a directory of their own, `traces/` and
 * `logs/`, has its leases and skip records under the same: leases/traces/year=…, so that the
 * signals' compactions of one hour neither wait for each other nor overwrite each other's record)
 *   probe/{uuid}.probe                                       the conditional-write test, deleted
 *   tmp/                                                     a local directory's files being written
 */
export function bookkeepingKey(outPrefix: string, rest: string): string {
  return outPrefix === ''
    ? `${BOOKKEEPING_DIR}/${rest}`
    : `${outPrefix}/${BOOKKEEPING_DIR}/${rest}`;
}

/** `year=2026/month=12/day=01/hour=05` for the UTC hour starting at `hour`. */
export function hourPath(hour: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `year=${hour.getUTCFullYear()}/month=${pad(hour.getUTCMonth() + 1)}/day=${pad(hour.getUTCDate())}/hour=${pad(hour.getUTCHours())}`;
}

/** `root`: where the signal's hour partitions start ('' for metrics, `traces/`, `logs/`). */
export const leaseDirectory = (outPrefix: string, hour: Date, root = '') =>
  bookkeepingKey(outPrefix, `leases/${root}${hourPath(hour)}`);

export const skipRecordKey = (outPrefix: string, hour: Date, root = '') =>
  bookkeepingKey(outPrefix, `skipped/${root}${hourPath(hour)}.skips`);

export const probeKey = (outPrefix: string) => bookkeepingKey(outPrefix, `probe/${uuidv7()}.probe`);

export const tmpDirectory = (outPrefix: string) => bookkeepingKey(outPrefix, 'tmp');
