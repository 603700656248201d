import { uuidv7 } from 'uuidv7';
import { BOOKKEEPING_DIR } from '../reader/compacted.js';

/**
 * The keys of the compactor's own objects, all under `{outPrefix}/_otel_s3_compaction/` (see
 * BOOKKEEPING_DIR: engines and this package's reader pass over it):
 *   leases/year=…/month=…/day=…/hour=…/{generation}.json   who compacts an hour, until when
 *   skipped/year=…/month=…/day=…/hour=….json               inputs of an hour that cannot be read
 *   probe/{uuid}.json                                       the conditional-write test, deleted
 *   tmp/                                                    a local directory's files being written
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

export const leaseDirectory = (outPrefix: string, hour: Date) =>
  bookkeepingKey(outPrefix, `leases/${hourPath(hour)}`);

export const skipRecordKey = (outPrefix: string, hour: Date) =>
  bookkeepingKey(outPrefix, `skipped/${hourPath(hour)}.json`);

export const probeKey = (outPrefix: string) => bookkeepingKey(outPrefix, `probe/${uuidv7()}.json`);

export const tmpDirectory = (outPrefix: string) => bookkeepingKey(outPrefix, 'tmp');
