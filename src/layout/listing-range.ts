import {
  type KeyTemplate,
  type PartitionTime,
  type PartitionTimeZone,
  TIME_TOKEN_LENGTH,
} from './key-template.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Time tokens from the most significant down; TIME_TOKEN_LENGTH says what each renders to. */
const ORDER = ['%Y', '%m', '%d', '%H', '%M', '%S'] as const;
const WIDTH: Readonly<Record<string, number>> = TIME_TOKEN_LENGTH;
/** Any id: only the leading part of the rendered key is kept. */
export const ANY_ID = '00000000-0000-7000-8000-000000000000';

/** What decides how far a key's partition can precede its seal time. */
export interface PartitionLag {
  partitionTime: PartitionTime;
  partitionTimeZone: PartitionTimeZone;
  maxBatchAgeMillis: number;
  exportIntervalMillis: number;
}

/**
 * How far before its seal time (the UUIDv7) an object's partition can be. With partitionTime
 * 'upload' the partition is the seal time itself; the minute keeps objects of earlier versions
 * (named after compression) and clocks read across a minute boundary. With 'data' it is the
 * batch's oldest data point: up to maxBatchAgeMillis (the batch's age at sealing) plus one export
 * interval (the age of the oldest point when it was exported) earlier. A local time zone adds an
 * hour: when clocks go back, an hour of wall-clock times repeats, so keys stop sorting in time
 * order for that long.
 */
export function partitionMarginMillis(lag: PartitionLag): number {
  let margin = MINUTE;
  if (lag.partitionTime === 'data') margin += lag.maxBatchAgeMillis + lag.exportIntervalMillis;
  if (lag.partitionTimeZone === 'local') margin += HOUR;
  return margin;
}

/** The keys to list for objects sealed in [from, to). */
export interface KeyRange {
  /** ListObjectsV2 `StartAfter`: every key of an earlier partition sorts before it. */
  startAfter: string | undefined;
  /**
   * Set when the listing starts early, at the hour's directory, to find the compaction outputs
   * filed there (they sort before the hour's minutes): keys up to this one are read only if they
   * are outputs.
   */
  outputsOnlyUntil?: string;
  /**
   * A listing of compaction outputs' hours only (KeyLayout.rangeWithOutputs): its other keys are
   * another listing's to read and count.
   */
  outputsOnly?: boolean;
  /**
   * The last partition that can hold an object of the range, as the leading part of its keys:
   * a key that sorts after it without starting with it is past the range, and so are all later ones.
   */
  lastPartition: string | undefined;
}

/** True when `key`, and so every key listed after it, is past the range. */
export function isPastRange(key: string, range: KeyRange): boolean {
  const last = range.lastPartition;
  return last !== undefined && compareKeys(key, last) > 0 && !key.startsWith(last);
}

/**
 * The listing range for [from, to). Keys sort by time only as far as the template's leading
 * parts are literal text and time tokens from the year down (`year=%Y/month=%m/...`,
 * `%Y/%m/%d/{service.name}/...`): those parts, rendered at from − margin and at to, bound the
 * listing. A template that starts otherwise (an attribute, `%j`, `%d` before `%m`) gets no
 * bounds: everything under the prefix is listed and filtered by seal time.
 */
export function listingRange(
  template: KeyTemplate,
  templateText: string,
  options: { prefix: string; lag: PartitionLag; from: Date | undefined; to: Date | undefined },
): KeyRange {
  const { prefix, lag, from, to } = options;
  // Without an end, the keys past the template's literal start (`traces/`) are past the range.
  const literal = /^[^%{]*/.exec(templateText)?.[0] ?? '';
  const ownKeys = literal === '' ? undefined : `${prefix === '' ? '' : `${prefix}/`}${literal}`;
  const leading = sortableLeadingChars(templateText);
  if (leading === undefined) return { startAfter: undefined, lastPartition: ownKeys };
  const keep = (prefix === '' ? 0 : prefix.length + 1) + leading;
  const render = (ms: number): string | undefined => {
    const time = new Date(ms);
    const year = lag.partitionTimeZone === 'UTC' ? time.getUTCFullYear() : time.getFullYear();
    // Outside four-digit years %Y changes width and keys no longer sort as times.
    if (!(year >= 1000 && year <= 9999)) return undefined;
    return template.render({ time, attributes: {}, extension: '', id: ANY_ID }).slice(0, keep);
  };
  // `to` is exclusive: the last object is sealed at to − 1 ms, and its partition is no later.
  // Under a local zone that went back an hour since, that partition can sort an hour later.
  const late = lag.partitionTimeZone === 'local' ? HOUR : 0;
  return {
    startAfter:
      from === undefined ? undefined : render(from.getTime() - partitionMarginMillis(lag)),
    lastPartition: to === undefined ? ownKeys : render(to.getTime() - 1 + late),
  };
}

/**
 * The keys to list for several layouts at once: from the earliest start, and past the range only
 * when a key is past every layout's range. A key past their longest common leading part is past
 * each of them (every one starts with it), so that part bounds the union.
 */
export function unionOfRanges(ranges: readonly KeyRange[]): KeyRange {
  const [first, ...rest] = ranges;
  if (first === undefined) return { startAfter: undefined, lastPartition: undefined };
  let { startAfter, lastPartition } = first;
  for (const range of rest) {
    startAfter =
      startAfter === undefined || range.startAfter === undefined
        ? undefined
        : compareKeys(range.startAfter, startAfter) < 0
          ? range.startAfter
          : startAfter;
    lastPartition =
      lastPartition === undefined || range.lastPartition === undefined
        ? undefined
        : commonLeadingPart(lastPartition, range.lastPartition);
  }
  return { startAfter, lastPartition };
}

/**
 * Several layouts' ranges as the listings that keep each one narrow, in key order: ranges that
 * overlap go into one group (listed once, as their union); a range that starts past another's
 * last partition starts a group of its own. Layouts whose leading parts differ (`year=…` and
 * `traces/year=…`) would otherwise be one listing from the earliest start to the end of the
 * prefix. Listed one after the other, the groups give the keys in the order one listing would.
 */
export function rangeGroups(ranges: readonly KeyRange[]): KeyRange[][] {
  const sorted = ranges.toSorted((a, b) =>
    a.startAfter === undefined
      ? b.startAfter === undefined
        ? 0
        : -1
      : b.startAfter === undefined
        ? 1
        : compareKeys(a.startAfter, b.startAfter),
  );
  const groups: KeyRange[][] = [];
  let union: KeyRange | undefined;
  for (const range of sorted) {
    const group = groups[groups.length - 1];
    if (
      group === undefined ||
      union === undefined ||
      (range.startAfter !== undefined && isPastRange(range.startAfter, union))
    ) {
      groups.push([range]);
      union = range;
    } else {
      group.push(range);
      union = unionOfRanges(group);
    }
  }
  return groups;
}

function commonLeadingPart(a: string, b: string): string {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return a.slice(0, n);
}

/**
 * The listing range, started early enough to see the compaction outputs of the hour where the
 * listing starts (`start`, from − the partition margin; see KeyRange.outputsOnlyUntil). Outputs
 * are filed in UTC hours, so only UTC layouts whose leading time tokens reach the hour and go
 * finer (the default minute layout) change.
 */
export function withHourOutputs(
  range: KeyRange,
  template: KeyTemplate,
  templateText: string,
  options: { prefix: string; timeZone: PartitionTimeZone; start: number | undefined },
): KeyRange {
  const { prefix, timeZone, start } = options;
  const leading = hourLeadingChars(templateText);
  if (start === undefined || range.startAfter === undefined || timeZone !== 'UTC') return range;
  if (leading === undefined) return range;
  const keep = (prefix === '' ? 0 : prefix.length + 1) + leading;
  const hour = new Date(start - (((start % HOUR) + HOUR) % HOUR));
  const year = hour.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return range;
  const directory = template
    .render({ time: hour, attributes: {}, extension: '', id: ANY_ID })
    .slice(0, keep);
  if (compareKeys(range.startAfter, directory) <= 0) return range;
  return { ...range, startAfter: directory, outputsOnlyUntil: range.startAfter };
}

/** Characters of the leading parts up to and with %H, when they sort as time and reach it. */
export function hourLeadingChars(templateText: string): number | undefined {
  const hourAt = templateText.indexOf('%H');
  if (hourAt < 0) return undefined;
  const leading = sortableLeadingChars(templateText.slice(0, hourAt + 2));
  return leading !== undefined && templateText.slice(0, hourAt + 2).includes('%d')
    ? leading
    : undefined;
}

/**
 * How many characters the template's leading literal text and time tokens render to, up to the
 * last time token, when they sort as time does: each time token is the next finer one or repeats
 * a coarser one. Undefined when no time token leads, or they do not sort.
 */
export function sortableLeadingChars(templateText: string): number | undefined {
  let chars = 0;
  let untilLastToken = 0;
  let next = 0;
  // A `{` always opens a token (KeyTemplate rejects a lone one): the leading parts end there.
  for (let i = 0; i < templateText.length && templateText[i] !== '{'; ) {
    if (templateText[i] !== '%') {
      chars++;
      i++;
      continue;
    }
    const token = templateText.slice(i, i + 2);
    i += 2;
    chars += WIDTH[token] ?? 0;
    if (token === '%%') continue;
    const rank = (ORDER as readonly string[]).indexOf(token);
    if (rank < 0 || rank > next) return undefined; // %j, or a finer unit before a coarser one
    if (rank === next) next++;
    untilLastToken = chars;
  }
  return next === 0 ? undefined : untilLastToken;
}

/** Orders keys as S3 lists them: by their UTF-8 bytes. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
