import type { OtlpObject } from '../encoding/otlp-proto-decode.js';

/**
 * A stored Parquet table's column values read back as OTLP/JSON values, for every signal's table
 * (the metrics' and the flat tables of spans and log records): a row as a reader returns it
 * (INT64 and timestamps as bigint, MAP columns as [{ key, value }] entries, in order (or as a
 * plain object), lists as arrays).
 */
export type Row = Record<string, unknown>;

/**
 * A MAP<STRING, STRING> as OTLP attributes: every value is text, a null one an empty value. Its
 * entries as stored, in order: a key "__proto__" is a key like any other, and two equal keys (no
 * writer of this package writes them, another's may) are both kept, as in an OTLP object that
 * repeats a key; its rows keep the last (signals/plain-values.ts), as JSON.parse does.
 */
export function mapAttributes(map: unknown): OtlpObject[] {
  if (typeof map !== 'object' || map === null) return [];
  const entries: [string, unknown][] = Array.isArray(map)
    ? map.map((e: { key: string; value: unknown }) => [e.key, e.value])
    : Object.entries(map as Record<string, unknown>);
  return entries.map(
    ([key, value]): OtlpObject => ({
      key,
      value: value === null || value === undefined ? {} : { stringValue: String(value) },
    }),
  );
}

/** A column's text ('' for none). */
export const text = (v: unknown): string => (typeof v === 'string' ? v : '');
