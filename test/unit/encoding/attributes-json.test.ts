import { describe, expect, test } from 'vitest';
import { jsonAttributesField } from '../../../src/encoding/any-value-json.js';
import { JsonWriter, Spelling } from '../../../src/encoding/json-writer.js';

const FIELD = new Spelling(',"attributes":[');

/** The OTLP/JSON of `attrs` as jsonAttributesField writes it. */
function written(attrs: Record<string, unknown> | undefined): string {
  const w = new JsonWriter();
  jsonAttributesField(w, FIELD, attrs);
  return w.finish().toString('utf8');
}

/** The expected text, spelled by hand from OTLP/JSON's rules for these value types. */
function expected(pairs: [string, string | number | boolean][]): string {
  if (pairs.length === 0) return '';
  const value = (v: string | number | boolean) =>
    typeof v === 'string'
      ? `{"stringValue":${JSON.stringify(v)}}`
      : typeof v === 'boolean'
        ? `{"boolValue":${v}}`
        : `{"intValue":${v}}`;
  return `,"attributes":[${pairs.map(([k, v]) => `{"key":${JSON.stringify(k)},"value":${value(v)}}`).join(',')}]`;
}

describe('jsonAttributesField', () => {
  test('objects that share their first key but not the rest are each written with their own keys', () => {
    // The heads of an object's keys are remembered per first key: each of these differs from
    // the one before after the first key (fewer, more, other, reordered keys).
    const objects: [string, string | number | boolean][][] = [
      [
        ['http.route', '/a'],
        ['http.method', 'GET'],
        ['status', 200],
      ],
      [
        ['http.route', '/b'],
        ['http.method', 'PUT'],
      ],
      [
        ['http.route', '/c'],
        ['http.method', 'GET'],
        ['status', 404],
        ['extra', true],
      ],
      [
        ['http.route', '/d'],
        ['other', 'x'],
        ['status', 500],
      ],
      [
        ['http.route', '/e'],
        ['status', 201],
        ['http.method', 'POST'],
      ],
      [
        ['http.route', '/f'],
        ['http.method', 'GET'],
        ['status', 200],
      ],
      [['solo', 1]],
      [],
    ];
    for (const pairs of objects) {
      expect(written(Object.fromEntries(pairs))).toBe(expected(pairs));
    }
  });

  test('inherited enumerable keys are not attributes (as Object.keys leaves them out)', () => {
    const attrs = Object.create({ inherited: 'no' }) as Record<string, unknown>;
    attrs.own = 'yes';
    expect(written(attrs)).toBe(expected([['own', 'yes']]));
    expect(written(Object.create({ inherited: 'no' }))).toBe('');
    expect(written(undefined)).toBe('');
  });

  test('integer-like keys come first, ascending, as Object.keys orders them', () => {
    const attrs: Record<string, unknown> = { b: 1, 10: 2, a: 3, 2: 4 };
    expect(written(attrs)).toBe(expected(Object.keys(attrs).map((k) => [k, attrs[k] as number])));
  });
});
