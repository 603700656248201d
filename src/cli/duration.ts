const UNIT_MILLIS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

export const DURATION_HELP = 'a duration like 30s, 15m, 1h, 2d, 1w or 1h30m';
export const TIME_HELP =
  'an ISO 8601 time like 2026-11-30T04:00:00Z or 2026-11-30 (UTC when no zone is given)';

/**
 * `15m`, `1h30m`, `2d` → milliseconds; undefined when not a positive duration. With `zero`, a
 * duration of no time (`0s`, `0h0m`) is 0 instead.
 */
export function parseDuration(text: string, { zero = false } = {}): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d|w))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of trimmed.matchAll(/(\d+(\.\d+)?)(ms|s|m|h|d|w)/g)) {
    total += Number(amount) * (UNIT_MILLIS[unit ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(total) && (total > 0 || (zero && total === 0)) ? total : undefined;
}

/**
 * A time of `parseTime` without a zone, given one for an example (`2026-11-30T13:00+02:00`);
 * undefined when it names its zone.
 */
export function withExampleZone(text: string): string | undefined {
  const match = TIME_PATTERN.exec(text.trim());
  if (match === null || match[3] !== undefined) return undefined;
  return match[2] === undefined ? `${match[1]}T00:00+02:00` : `${text.trim()}+02:00`;
}

const TIME_PATTERN =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time; undefined when it is not one. Without a zone it is UTC (the
 * partitions are UTC), unlike `Date.parse`, which takes a zoneless date-time as local time.
 * A fraction past the millisecond rounds up to the next millisecond.
 */
export function parseTime(text: string): Date | undefined {
  const trimmed = text.trim();
  const match = TIME_PATTERN.exec(trimmed);
  if (match === null) return undefined;
  const [, date, clock, zone] = match;
  const iso = clock === undefined ? `${date}T00:00:00Z` : `${date}T${clock}${zone ?? 'Z'}`;
  const parsed = Date.parse(iso.replace(/(\.\d{3})\d+/, '$1'));
  if (Number.isNaN(parsed)) return undefined;
  // A Date holds milliseconds, as do the objects' seal times: a time past the millisecond is
  // the next one, which keeps `>= from` and `< to` true of the same objects (truncated, an
  // object of that millisecond would fall on the wrong side of either bound).
  const ms = /\.\d{3}\d*[1-9]/.test(clock ?? '') ? parsed + 1 : parsed;
  // Reject dates Date.parse rolls over (2026-02-30), with a zone or without: the calendar date
  // as written, not the UTC date it falls on.
  const day = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(day) || new Date(day).toISOString().slice(0, 10) !== date) return undefined;
  return new Date(ms);
}
