import { valueText } from '../../src/signals/plain-values.js';

/**
 * Attribute values as the Parquet tables store them (docs/parquet.md, "What the table does not
 * keep"): text, spelled as the ClickHouse exporter spells it (`AsString`: JSON for lists and
 * maps, map keys sorted as Go's JSON sorts them), an empty value null. For the format-equality
 * tests, which normalise the OTLP rows' values to it.
 */
export function asText(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, v === null ? null : attributeText(v)]),
  );
}

/** Stands for a whole number inside a list or map until the text is made (see attributeText). */
const BIG = '\u{10FFFE}big:';

/**
 * A plain value as the tables store it. In a row an integer past 2^53 is its decimal text
 * (docs/reading.md), so inside a list or map it would be spelled as a JSON string; the table
 * spells it as the number it was. The tests record no such digits as text, so such a string is
 * written back as a number (by a marker replaced in the text: Node 20 has no JSON.rawJSON).
 */
export function attributeText(v: unknown): string {
  const text = valueText(sortedKeys(v) as never);
  return text.replaceAll(new RegExp(`"${BIG}(-?\\d+)"`, 'gu'), '$1');
}

function sortedKeys(v: unknown, nested = false): unknown {
  if (nested && typeof v === 'string' && /^-?\d{16,}$/.test(v)) return `${BIG}${v}`;
  if (Array.isArray(v)) return v.map((x) => sortedKeys(x, true));
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(
      Object.keys(v)
        .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
        .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k], true)]),
    );
  }
  return v;
}

/** An attribute value of every type, as far as the SDK takes them: what the format tests record. */
export const EVERY_ATTRIBUTE_VALUE = {
  str: 'plain',
  empty: '',
  astral: '𝄞 emoji 😀 ü',
  yes: true,
  no: false,
  int: 42,
  negative: -7,
  big: 2 ** 60,
  bigNegative: -(2 ** 60),
  double: 1.5,
  tiny: 9e-9,
  huge: 1e21,
  nan: Number.NaN,
  inf: Number.POSITIVE_INFINITY,
  negInf: Number.NEGATIVE_INFINITY,
  negZero: -0,
  strings: ['a', '', '𝄞'],
  ints: [1, -2, 2 ** 60],
  doubles: [0.5, Number.NaN],
  bools: [true, false],
  emptyList: [],
};
