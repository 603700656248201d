import { OBJECT_KEY_PATTERN } from '../upload/keys.js';

const MINUTE = 60_000;
const pad2 = (n: number) => String(n).padStart(2, '0');

/** What a key of the exporter's layout says about its object. */
export interface ParsedKey {
  /** The key prefix before `year=` (normalized: no slashes at the ends), `''` when none. */
  prefix: string;
  /** Start of the UTC minute partition the object was filed under. */
  partition: Date;
  /** The UUIDv7's millisecond timestamp: when the batch was sealed. */
  time: Date;
  /** `.json`, `.binpb`, then `.zst`, `.gz` or nothing. */
  extension: string;
}

/** Parses a key of the exporter's layout; undefined for any other key. */
export function parseObjectKey(key: string): ParsedKey | undefined {
  const m = OBJECT_KEY_PATTERN.exec(key);
  if (m === null) return undefined;
  const [, prefix = '', year, month, day, hour, minute, , id = '', extension = ''] = m;
  const partition = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
  );
  return {
    prefix,
    partition: new Date(partition),
    time: new Date(uuidv7Millis(id)),
    extension,
  };
}

/** Unix milliseconds in the first 48 bits of a UUIDv7. */
export function uuidv7Millis(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/**
 * The partition path of the minute holding `time`, as the exporter writes it (without the
 * trailing slash): `{prefix}/year=%Y/month=%m/day=%d/hour=%H/minute=%M`.
 */
export function partitionPath(prefix: string, time: Date): string {
  const t = time;
  const partition =
    `year=${t.getUTCFullYear()}/month=${pad2(t.getUTCMonth() + 1)}/day=${pad2(t.getUTCDate())}` +
    `/hour=${pad2(t.getUTCHours())}/minute=${pad2(t.getUTCMinutes())}`;
  return prefix === '' ? partition : `${prefix}/${partition}`;
}

/**
 * How far a key's partition may precede its UUIDv7 time. Both are the seal time in this
 * exporter; the margin keeps objects of earlier versions (which named them after compression)
 * and of clocks read twice across a minute boundary in range.
 */
export const PARTITION_MARGIN_MILLIS = MINUTE;

/** The key range that can hold objects whose time is in [from, to). */
export interface KeyRange {
  /** ListObjectsV2 `StartAfter`: every key of an earlier partition sorts before it. */
  startAfter: string | undefined;
  /** Every key at or after this one is in a partition past `to`. */
  stopAt: string | undefined;
}

export function keyRange(prefix: string, from?: Date, to?: Date): KeyRange {
  const floorMinute = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE);
  return {
    // A path without its trailing slash sorts before every key filed under it.
    startAfter:
      from === undefined
        ? undefined
        : partitionPath(prefix, floorMinute(from.getTime() - PARTITION_MARGIN_MILLIS)),
    // `to` is exclusive: the last partition that can hold an object is that of to - 1 ms.
    stopAt:
      to === undefined
        ? undefined
        : partitionPath(prefix, new Date(floorMinute(to.getTime() - 1).getTime() + MINUTE)),
  };
}

/** Orders keys as S3 lists them: by their UTF-8 bytes. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
