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

/**
 * A plain value as the tables store it, spelled here independently of the code under test: Go's
 * JSON for lists and maps (keys sorted by their UTF-8 bytes, U+2028 and U+2029 escaped, a NaN or
 * an infinity as a JSON string), a double's -0 as `-0`. In a row an integer past 2^53 is its
 * decimal text (docs/reading.md), so inside a list or map it would be a JSON string; the table
 * spells it as the number it was. The tests record no such digits as text, so such a string is
 * written as a number.
 */
export function attributeText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  return goJson(v);
}

function goJson(v: unknown): string {
  if (typeof v === 'string') return /^-?\d{16,}$/.test(v) ? v : goString(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return `"${v}"`;
    return Object.is(v, -0) ? '-0' : String(v);
  }
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    // Entries, not an object: an object would put keys like "9" before "10" whatever the sort.
    const entries = Object.entries(v).sort(([a], [b]) =>
      Buffer.compare(Buffer.from(a), Buffer.from(b)),
    );
    return `{${entries.map(([k, x]) => `${goString(k)}:${goJson(x)}`).join(',')}}`;
  }
  return 'null';
}

const goString = (s: string): string =>
  JSON.stringify(s).replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');

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
