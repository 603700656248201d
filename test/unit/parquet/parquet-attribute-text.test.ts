import { describe, expect, test } from 'vitest';
import { jsValueText, otlpValueText } from '../../../src/parquet/attribute-text.js';

/**
 * The Parquet table stores attribute values as text, as the OpenTelemetry Collector's ClickHouse
 * exporter does: with pdata's `pcommon.Value.AsString()`. The expected strings below are written
 * by hand from the Collector's source (opentelemetry-collector at 934999f, August 2026):
 * - pdata/pcommon/value.go `AsString`: Str as is; Bool `strconv.FormatBool`; Int
 *   `strconv.FormatInt(v, 10)`; Double `float64AsString` (NaN, Infinity, -Infinity, else
 *   `strconv.AppendFloat(f, 'f' or 'e', -1, 64)` with 'e' below 1e-6 and from 1e21, "e-09"
 *   trimmed to "e-9"); Bytes `base64.StdEncoding`; Map and Slice `marshalJSONNoHTMLEscape` of
 *   `AsRaw()` (encoding/json with SetEscapeHTML(false)); Empty "".
 * - Go's encoding/json (go 1.26, the pdata module's go.mod): map keys sorted as byte strings,
 *   a repeated key keeps its last value (AsRaw fills a Go map); strings escape `"`, `\`, \b \f \n
 *   \r \t, other controls as \u00xx, U+2028 and U+2029; []byte as base64; float64 as above; an
 *   int64 in decimal; nil as null.
 * - pdata/pcommon/value_test.go `TestValueAsString` (cases quoted where they are the same).
 * Two deliberate differences (docs/parquet.md, "What the table does not keep"): an empty value is
 * null (Go: ""), and NaN or an infinity inside an array or map is a JSON string (Go's encoder
 * fails there, and AsString returns "" for the whole value).
 */

const kv = (key: string, value: object) => ({ key, value });
const array = (...values: object[]) => ({ arrayValue: { values } });
const kvlist = (...values: object[]) => ({ kvlistValue: { values } });

describe('attribute text as pcommon.Value.AsString() spells it', () => {
  test('strings as they are, booleans, integers in decimal (value_test.go: "string value", 42, true)', () => {
    expect(otlpValueText({ stringValue: 'string value' })).toBe('string value');
    expect(otlpValueText({ stringValue: '<a href="x">&y</a>\n' })).toBe('<a href="x">&y</a>\n');
    expect(otlpValueText({ boolValue: true })).toBe('true');
    expect(otlpValueText({ boolValue: false })).toBe('false');
    expect(otlpValueText({ intValue: 42 })).toBe('42');
    expect(otlpValueText({ intValue: '-42' })).toBe('-42');
    // int64 beyond 2^53 stays exact: the decoders give it as a decimal string.
    expect(otlpValueText({ intValue: '9007199254740993' })).toBe('9007199254740993');
    expect(otlpValueText({ intValue: '-9223372036854775808' })).toBe('-9223372036854775808');
  });

  test("doubles as float64AsString: ES6-like shortest digits, 'e' below 1e-6 and from 1e21, -0 kept", () => {
    expect(otlpValueText({ doubleValue: 1.61803399 })).toBe('1.61803399'); // value_test.go
    expect(otlpValueText({ doubleValue: 0.000000009 })).toBe('9e-9'); // value_test.go
    expect(otlpValueText({ doubleValue: 0.000001 })).toBe('0.000001');
    expect(otlpValueText({ doubleValue: 1.5e-7 })).toBe('1.5e-7');
    expect(otlpValueText({ doubleValue: 1e20 })).toBe('100000000000000000000');
    expect(otlpValueText({ doubleValue: 1e21 })).toBe('1e+21');
    expect(otlpValueText({ doubleValue: 123456789.125 })).toBe('123456789.125');
    expect(otlpValueText({ doubleValue: -0 })).toBe('-0');
    expect(otlpValueText({ doubleValue: 2 })).toBe('2');
    // value_test.go: float64_nan, float64_positive_infinity, float64_negative_infinity.
    expect(otlpValueText({ doubleValue: 'NaN' })).toBe('NaN');
    expect(otlpValueText({ doubleValue: 'Infinity' })).toBe('Infinity');
    expect(otlpValueText({ doubleValue: '-Infinity' })).toBe('-Infinity');
  });

  test('bytes in standard base64 (value_test.go: "String bytes")', () => {
    expect(otlpValueText({ bytesValue: 'U3RyaW5nIGJ5dGVz' })).toBe('U3RyaW5nIGJ5dGVz');
    expect(jsValueText(Buffer.from('String bytes'))).toBe('U3RyaW5nIGJ5dGVz');
  });

  test('maps as JSON with keys sorted, no HTML escaping (value_test.go: simple_map, map_with_html_characters)', () => {
    const map = kvlist(
      kv('strKey', { stringValue: 'strVal' }),
      kv('intKey', { intValue: '7' }),
      kv('floatKey', { doubleValue: 18.6 }),
      kv('boolKey', { boolValue: false }),
      kv('nullKey', {}),
      kv(
        'mapKey',
        kvlist(kv('keyOne', { stringValue: 'valOne' }), kv('keyTwo', { stringValue: 'valTwo' })),
      ),
      kv('arrKey', array({ stringValue: 'strOne' }, { stringValue: 'strTwo' })),
    );
    expect(otlpValueText(map)).toBe(
      '{"arrKey":["strOne","strTwo"],"boolKey":false,"floatKey":18.6,"intKey":7,"mapKey":{"keyOne":"valOne","keyTwo":"valTwo"},"nullKey":null,"strKey":"strVal"}',
    );
    expect(otlpValueText(kvlist(kv('key', { stringValue: '<a href="x">&y</a>' })))).toBe(
      '{"key":"<a href=\\"x\\">&y</a>"}',
    );
    expect(otlpValueText(kvlist())).toBe('{}'); // empty_map
  });

  test('arrays as JSON (value_test.go: simple_array, empty_array, slice_with_html_characters)', () => {
    const slice = array(
      { stringValue: 'strVal' },
      { intValue: 7 },
      { doubleValue: 18.6 },
      { boolValue: false },
      {},
    );
    expect(otlpValueText(slice)).toBe('["strVal",7,18.6,false,null]');
    expect(otlpValueText(array())).toBe('[]');
    expect(
      otlpValueText(array({ stringValue: '<' }, { stringValue: '>' }, { stringValue: '&' })),
    ).toBe('["<",">","&"]');
  });

  test("Go's JSON details: byte-order keys, last value of a repeated key, escapes, bytes and -0 inside", () => {
    // Keys as UTF-8 byte strings: U+FFFF (EF BF BF) before U+1F600 (F0 9F 98 80), which UTF-16 order reverses.
    expect(
      otlpValueText(
        kvlist(kv('😀', { intValue: 1 }), kv('\uffff', { intValue: 2 }), kv('a', { intValue: 3 })),
      ),
    ).toBe('{"a":3,"\uffff":2,"😀":1}');
    expect(otlpValueText(kvlist(kv('k', { intValue: 1 }), kv('k', { intValue: 2 })))).toBe(
      '{"k":2}',
    );
    expect(
      otlpValueText(array({ stringValue: 'q"b\\\b\f\n\r\t\u0001\u001f\u007f\u2028\u2029é' })),
    ).toBe('["q\\"b\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\\u2028\\u2029é"]');
    expect(
      otlpValueText(array({ bytesValue: 'AAE=' }, { doubleValue: -0 }, { doubleValue: 1e-7 })),
    ).toBe('["AAE=",-0,1e-7]');
    expect(otlpValueText(array({ intValue: '9223372036854775807' }))).toBe('[9223372036854775807]');
  });

  test('the deliberate differences: an empty value is null, a NaN inside JSON a string', () => {
    expect(otlpValueText({})).toBeNull(); // Go: ""
    expect(otlpValueText(array({ doubleValue: 'NaN' }, { doubleValue: '-Infinity' }))).toBe(
      '["NaN","-Infinity"]', // Go: "" (json: unsupported value)
    );
  });
});

describe("the SDK's values get the text of what the OTLP encoders write for them", () => {
  test('an integer an int64 holds is an intValue, any other number a doubleValue', () => {
    expect(jsValueText(7)).toBe('7');
    expect(jsValueText(-0)).toBe('0'); // an intValue: int64 has no -0
    expect(jsValueText(2 ** 62)).toBe('4611686018427387904');
    expect(jsValueText(2 ** 63)).toBe('9223372036854776000'); // a double: FormatFloat 'f', -1
    expect(jsValueText(18.6)).toBe('18.6');
    expect(jsValueText(Number.NaN)).toBe('NaN');
    expect(jsValueText(Number.NEGATIVE_INFINITY)).toBe('-Infinity');
  });

  test('strings, booleans, arrays and maps; null, undefined and what OTLP cannot hold are empty', () => {
    expect(jsValueText('a')).toBe('a');
    expect(jsValueText(false)).toBe('false');
    expect(jsValueText(['strVal', 7, 18.6, false, null, undefined])).toBe(
      '["strVal",7,18.6,false,null,null]',
    );
    expect(jsValueText({ b: 1, a: [true], c: { z: 'x', y: -0.5 } })).toBe(
      '{"a":[true],"b":1,"c":{"y":-0.5,"z":"x"}}',
    );
    expect(jsValueText(null)).toBeNull();
    expect(jsValueText(undefined)).toBeNull();
    expect(jsValueText(10n)).toBeNull();
  });
});
