import { describe, expect, test } from 'vitest';
import { JsonWriter } from '../../../src/encoding/json-writer.js';

/** What the writer produced, as text. */
const text = (w: JsonWriter) => w.finish().toString('latin1');

/** A writer holding `values` written by uints(). */
function intsOf(values: number[]): JsonWriter {
  const w = new JsonWriter();
  w.uints(values);
  return w;
}

describe('JsonWriter', () => {
  test('doubles are spelled as JSON.stringify spells them, -0 with its sign, non-finite ones as OTLP strings', () => {
    const values = [
      0,
      7,
      -7,
      10,
      99,
      100,
      2 ** 31,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
      2 ** 53,
      2 ** 60,
      -(2 ** 63),
      1e21,
      0.1,
      -1.5e-7,
      5e-324,
      1.7976931348623157e308,
    ];
    for (const v of values) {
      const w = new JsonWriter();
      w.double(v);
      expect(text(w), String(v)).toBe(JSON.stringify(v));
    }
    const w = new JsonWriter();
    w.double(-0);
    expect(Object.is(JSON.parse(text(w)), -0), '-0').toBe(true);
    w.double(Number.NaN);
    w.double(Number.POSITIVE_INFINITY);
    w.double(Number.NEGATIVE_INFINITY);
    expect(text(w)).toBe('"NaN""Infinity""-Infinity"');
  });

  test('double() of a value that is no number spells the double protobuf writes for it', () => {
    const protobufDouble = (v: unknown) => {
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, v as number); // what ProtoWriter.double() does with it
      return view.getFloat64(0);
    };
    for (const v of [undefined, null, '2.5', true, {}]) {
      const w = new JsonWriter();
      w.double(v as number);
      const expected = new JsonWriter();
      expected.double(protobufDouble(v));
      expect(text(w), String(v)).toBe(text(expected));
    }
    const w = new JsonWriter();
    w.double(undefined as unknown as number);
    expect(text(w)).toBe('"NaN"');
  });

  test('int() writes a safe integer as a number, -0 as 0, and beyond 2^53 the exact decimal in quotes', () => {
    const safe = [0, 1, -1, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const large = [2 ** 53, -(2 ** 53), 2 ** 53 + 2, 2 ** 60 + 2 ** 12, 2 ** 63 - 1024, -(2 ** 63)];
    const w = new JsonWriter();
    for (const v of [...safe, -0, ...large]) {
      w.int(v);
      w.char(0x20);
    }
    const exact = (v: number) => BigInt(v).toString(); // every digit of the double's value
    const expected = [...safe.map(exact), '0', ...large.map((v) => `"${exact(v)}"`)];
    expect(text(w)).toBe(`${expected.join(' ')} `);
  });

  test('int() writes a value that is no integer as the double it is', () => {
    const w = new JsonWriter();
    for (const v of [1.5, -2.5, Number.NaN, Number.NEGATIVE_INFINITY]) {
      w.int(v);
      w.char(0x20);
    }
    expect(text(w)).toBe('1.5 -2.5 "NaN" "-Infinity" ');
  });

  test('uints() writes a count beyond 2^53 as its exact decimal in quotes', () => {
    const counts = [0, 5, 12, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 2 ** 64 - 2048];
    expect(JSON.parse(`[${text(intsOf(counts))}]`)).toEqual(
      counts.map((c) => (Number.isSafeInteger(c) ? c : BigInt(c).toString())),
    );
  });

  test('string() writes a lone surrogate as U+FFFD, the character UTF-8 and protobuf carry', () => {
    const utf8 = (s: string) => new TextDecoder().decode(new TextEncoder().encode(s));
    for (const s of ['\ud800', 'a\udc00b', '\udbff\ud83d\ude00', '"\udfff"', '😀 \ud800 \n']) {
      const w = new JsonWriter();
      w.string(s);
      const json = w.finish();
      expect(JSON.parse(json.toString('utf8')), JSON.stringify(s)).toBe(utf8(s));
      expect(json.toString('latin1'), JSON.stringify(s)).not.toMatch(/\\u[dD][89a-fA-F]/);
    }
  });

  test('uints() stays correct when a long value makes the buffer grow part-way through', () => {
    // Every offset from the buffer's end, so that some call grows it inside the slow branch.
    const filler = 'x'.repeat(256 * 1024);
    const values = [1.2345678901234567e-100, 1, 2, 3, -4, 12345, 0.5, 6];
    const expected = values.map((v) => JSON.stringify(v)).join(',');
    for (let room = 0; room < 300; room++) {
      const w = new JsonWriter();
      w.raw(filler.slice(room));
      w.uints(values);
      const out = w.finish();
      // Only what uints() wrote is read back: decoding the filler each time is most of the cost.
      expect(out.subarray(256 * 1024 - room).toString('latin1'), `room ${room}`).toBe(expected);
      expect(out.length, `room ${room}`).toBe(256 * 1024 - room + expected.length);
    }
  });

  test('reset() forgets a half-written output', () => {
    const w = new JsonWriter();
    w.raw('{"half":');
    w.reset();
    w.raw('{}');
    expect(text(w)).toBe('{}');
  });
});
