import { uuidv7 } from 'uuidv7';

const pad2 = (n: number) => String(n).padStart(2, '0');

export interface KeyParts {
  /** Normalized prefix (no leading or trailing slash), may be empty. */
  prefix: string;
  filePrefix: string;
  /** Partition time, rendered in UTC. */
  time: Date;
  /** Format extension followed by compression extension, e.g. `.json.zst`. */
  extension: string;
  /** Unique, time-ordered id; a fresh UUIDv7 unless given. */
  id?: string;
}

/**
 * The default layout, compatible with the OTel Collector's awss3receiver:
 * `{prefix}/year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuidv7}{extension}`.
 * A key is computed once per batch and reused by every retry.
 */
export function objectKey(parts: KeyParts): string {
  const t = parts.time;
  const partition =
    `year=${t.getUTCFullYear()}/month=${pad2(t.getUTCMonth() + 1)}/day=${pad2(t.getUTCDate())}` +
    `/hour=${pad2(t.getUTCHours())}/minute=${pad2(t.getUTCMinutes())}`;
  const name = `${parts.filePrefix}metrics_${parts.id ?? uuidv7()}${parts.extension}`;
  return parts.prefix === '' ? `${partition}/${name}` : `${parts.prefix}/${partition}/${name}`;
}

/** Matches keys of the default layout; groups: prefix, year..minute, filePrefix, id, extension. */
export const OBJECT_KEY_PATTERN =
  /^(?:(.+)\/)?year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\/minute=(\d{2})\/([^/]*)metrics_([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})((?:\.json|\.binpb)(?:\.zst|\.gz)?)$/;
