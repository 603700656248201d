import { describe, expect, test } from 'vitest';
import type { OtlpObject } from '../../../src/encoding/otlp-proto-decode.js';
import { anyValue, valueText } from '../../../src/signals/plain-values.js';

/**
 * valueText of values read from OTLP objects other writers make (a Collector's, hand-made): the
 * text docs/parquet.md gives for them, spelled here by hand.
 */
describe('valueText of AnyValues an SDK never writes', () => {
  const text = (v: OtlpObject) => valueText(anyValue(v));

  test("a double's -0 is -0, as the tables store it; an intValue -0 is 0", () => {
    expect(text({ doubleValue: -0 })).toBe('-0');
    expect(text({ intValue: '-0' })).toBe('0');
    expect(text({ arrayValue: { values: [{ doubleValue: -0 }, { intValue: '-0' }] } })).toBe(
      '[-0,0]',
    );
  });

  test('a string of digits in a list stays a string; an intValue is a number', () => {
    const digits = '9007199254740993';
    expect(text({ arrayValue: { values: [{ stringValue: digits }, { intValue: digits }] } })).toBe(
      `["${digits}",${digits}]`,
    );
  });

  test('a list or map made elsewhere is spelled as an SDK value: keys sorted, digits as text', () => {
    expect(valueText({ b: ['1152921504606846976', 1e21, Number.NaN], a: -0 })).toBe(
      '{"a":0,"b":["1152921504606846976",1e+21,"NaN"]}',
    );
  });
});
