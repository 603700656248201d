import { escapeRegExp } from '../base/text.js';
import { type PlainValue, valueText } from '../signals/plain-values.js';
import type { SpanRow } from '../signals/traces/rows.js';
import { UsageError } from './exit-codes.js';
import type { CsvFields } from './format.js';

/** Exact names, or patterns with `*`; every name when there are none. */
export function wildcardFilter(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => true;
  // 's': a `*` also matches line breaks, which names and values may hold.
  const regexes = patterns.map(
    (p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`, 's'),
  );
  return (name) => regexes.some((r) => r.test(name));
}

/**
 * `--attribute key=value` (`*` a wildcard in the value) or `--attribute key` (has the key), each
 * matched against the item's attributes, then its resource's; every one must match. A value is
 * compared as text: numbers as written in JSON, `true`, lists and maps as JSON, bytes as the
 * standard padded base64 a row holds (a row cannot tell them from a string of that text, so the
 * value given is never rewritten: a URL-safe or unpadded one finds no bytes).
 */
export function attributeFilter(
  specs: readonly string[],
): (attributes: Record<string, PlainValue>, resource: Record<string, PlainValue>) => boolean {
  const tests = specs.map((spec) => {
    const at = spec.indexOf('=');
    const key = at < 0 ? spec : spec.slice(0, at);
    if (key === '') {
      throw new UsageError(
        `--attribute ${JSON.stringify(spec)}: give key=value (* matches anything) or a key alone`,
      );
    }
    const value = at < 0 ? undefined : wildcardFilter([spec.slice(at + 1)]);
    return (attributes: Record<string, PlainValue>) => {
      if (!Object.hasOwn(attributes, key)) return undefined;
      return value === undefined || value(valueText(attributes[key]));
    };
  });
  return (attributes, resource) =>
    tests.every((test) => test(attributes) ?? test(resource) ?? false);
}

/** What the row filters shared by `otel-s3 spans` and `otel-s3 logs` read of a row. */
export interface FilteredRow {
  traceId: string;
  service: string;
  attributes: Record<string, PlainValue>;
  resource: Record<string, PlainValue>;
}

/**
 * The filters every row command shares: `--trace-id` (lower case), `--service` patterns and
 * `--attribute` specs; a row passes when it matches all of them.
 */
export function commonRowFilter(options: {
  traceId?: string | undefined;
  service: readonly string[];
  attribute: readonly string[];
}): (row: FilteredRow) => boolean {
  const service = wildcardFilter(options.service);
  const attributes = attributeFilter(options.attribute);
  const traceId = options.traceId;
  return (row) =>
    (traceId === undefined || row.traceId.toLowerCase() === traceId) &&
    service(row.service) &&
    attributes(row.attributes, row.resource);
}

/**
 * A trace id as given on the command line: 32 hex digits, not all zero (W3C Trace Context's
 * invalid id, which no recorded span has), in lower case; UsageError otherwise.
 */
export function traceIdOption(flag: string, value: string): string {
  const example = 'e.g. 4bf92f3577b34da6a3ce929d0e0e4736';
  if (!/^[0-9a-fA-F]{32}$/.test(value)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: a trace id is 32 hex digits, ${example}`,
    );
  }
  if (/^0+$/.test(value)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: all zeros is no trace's id (W3C: invalid), ${example}`,
    );
  }
  return value.toLowerCase();
}

/** A span id: 16 hex digits, not all zero (as a trace id), in lower case. */
export function spanIdOption(flag: string, value: string): string {
  const example = 'e.g. 00f067aa0ba902b7';
  if (!/^[0-9a-fA-F]{16}$/.test(value)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: a span id is 16 hex digits, ${example}`,
    );
  }
  if (/^0+$/.test(value)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: all zeros is no span's id (W3C: invalid), ${example}`,
    );
  }
  return value.toLowerCase();
}

/** Decimal digits of a nanosecond count in one of each unit. */
const DURATION_DIGITS: Readonly<Record<string, number>> = { ns: 0, us: 3, ms: 6, s: 9 };

/**
 * `250ms`, `1.5s`, `800us`, `100ns` or a number of milliseconds, as whole nanoseconds, from the
 * decimal text (a double's 9e-3 is not 9 us); a fraction of a nanosecond rounds up ("at least").
 */
export function spanDurationOption(flag: string, value: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?(ns|us|ms|s)?$/.exec(value.trim());
  if (match === null) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: give a duration such as 250ms, 1.5s, 800us or 100ns`,
    );
  }
  const digits = DURATION_DIGITS[match[3] ?? 'ms'] as number;
  const fraction = (match[2] ?? '').padEnd(digits, '0');
  const nanos = BigInt(`${match[1]}${fraction.slice(0, digits)}`);
  return /[1-9]/.test(fraction.slice(digits)) ? nanos + 1n : nanos;
}

/** A row's time (ISO 8601 with up to 9 fraction digits) as nanoseconds since 1970; 0 for ''. */
export function isoNanos(iso: string): bigint {
  if (iso === '') return 0n;
  const dot = iso.lastIndexOf('.');
  if (dot < 0) return BigInt(Date.parse(iso)) * 1_000_000n;
  const seconds = BigInt(Date.parse(`${iso.slice(0, dot)}Z`) / 1000);
  return seconds * 1_000_000_000n + BigInt(iso.slice(dot + 1, -1).padEnd(9, '0'));
}

/**
 * A span's parent id in lower case; '' for a root. All zeros (the invalid span id, which some
 * writers store for a root instead of nothing; OTLP and Parquet alike) is no parent either.
 */
export function parentOf(span: Pick<SpanRow, 'parentSpanId'>): string {
  const parent = span.parentSpanId.toLowerCase();
  return /^0+$/.test(parent) ? '' : parent;
}

/** Milliseconds for people: exact below 10 s (`20.5 ms`, `1.000123 ms`), else seconds (`12.35 s`). */
export function durationText(ms: number): string {
  if (Math.abs(ms) < 10_000) return `${ms} ms`;
  return `${Number((ms / 1000).toFixed(2))} s`;
}

/** The table's time: `2026-11-30 04:00:00.005` (UTC, to the millisecond). */
export const tableTime = (iso: string): string =>
  iso === '' ? '' : `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;

/** A CSV line: every field of `row` in `columns`, objects as JSON text. */
export function csvLine<Row extends object>(
  row: Row,
  columns: readonly (keyof Row & string)[],
  fields: CsvFields,
): string {
  return columns
    .map((column) => {
      const v: unknown = row[column];
      if (v === undefined || v === null) return '';
      if (typeof v === 'string') return fields.text(v);
      if (typeof v === 'object') return fields.plain(JSON.stringify(v));
      return fields.plain(String(v));
    })
    .join(',');
}

/** `k=v k2=v2`, values as text. */
export function keyValues(values: Record<string, PlainValue>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${valueText(v)}`)
    .join(' ');
}
