import { describe, expect, test } from 'vitest';
import { IntField, JsonWriter, Spelling, TimeField } from '../../../src/encoding/json-writer.js';

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

  test('uint() and int() write every count of digits as String() does', () => {
    const values: number[] = [];
    for (let p = 1; p <= 1e15; p *= 10) values.push(p - 1, p, p + 1, 2 * p - 1, 5 * p + 3);
    for (let i = 0; i < 2000; i++) values.push(Math.floor(Math.random() ** 4 * 2 ** 40));
    const w = new JsonWriter();
    for (const v of values) {
      w.uint(v);
      w.char(0x20);
      w.int(-v);
      w.char(0x20);
    }
    expect(text(w)).toBe(values.map((v) => `${v} ${v === 0 ? 0 : -v} `).join(''));
  });

  test('nanos() writes the field and every time as the exact decimal of its nanoseconds', () => {
    const times: [number, number][] = [];
    for (const seconds of [
      1, 9, 1_733_000_000, 1_733_000_001, 1_733_000_000, 18_446_744_072, 1.5, 0,
    ]) {
      for (const nanos of [
        0, 1, 9, 10, 9_999, 10_000, 99_999_999, 100_000_000, 123_456_789, 999_999_999,
      ]) {
        times.push([seconds, nanos]);
      }
    }
    // Two fields written in turn: each keeps the seconds of its own last time.
    const fields = [new TimeField(',"a":'), new TimeField(',"bb":')];
    const w = new JsonWriter();
    times.forEach((t, i) => {
      w.nanos(fields[i % 2] as TimeField, t);
    });
    const exact = ([s, n]: [number, number], i: number) =>
      `${i % 2 ? ',"bb":' : ',"a":'}"${BigInt(Math.trunc(s)) * 1_000_000_000n + BigInt(n)}"`;
    expect(text(w)).toBe(times.map(exact).join(''));
  });

  test('intField() writes the text before, the integer as int() spells it, and the text after', () => {
    const field = new IntField(',"flags":', ',"name":');
    const values = [0, 1, 9, 10, 255, 256, 1023, 1024, 5000, -1, -0, 1.5, 2 ** 53 + 2, 7, 1023, 0];
    const w = new JsonWriter();
    for (const v of values) w.intField(field, v);
    const spelled = (v: number) =>
      Number.isSafeInteger(v) ? String(v) : Number.isInteger(v) ? `"${BigInt(v)}"` : String(v);
    expect(text(w)).toBe(values.map((v) => `,"flags":${spelled(v)},"name":`).join(''));
  });

  test('spell() writes each spelling whole, back to back, at every offset from the end of the buffer', () => {
    const words = [
      '',
      'a',
      '{"',
      ',"x":',
      '{"key":',
      ',"flags":',
      '{"stringValue":',
      ',"observedTimeUnixNano":',
    ];
    const spellings = words.map((t) => new Spelling(t));
    const filler = 'x'.repeat(256 * 1024);
    for (let room = 0; room < 64; room++) {
      const w = new JsonWriter();
      w.raw(filler.slice(room));
      for (const s of spellings) w.spell(s);
      w.char(0x7d);
      const out = w.finish();
      expect(out.subarray(256 * 1024 - room).toString('latin1'), `room ${room}`).toBe(
        `${words.join('')}}`,
      );
    }
  });

  test('string() writes every character code up to 0x17f at every position of an 8-character string as JSON.stringify does', () => {
    for (let code = 0; code <= 0x17f; code++) {
      for (let at = 0; at < 8; at++) {
        const s = `${'abcdefgh'.slice(0, at)}${String.fromCharCode(code)}${'abcdefgh'.slice(at + 1)}`;
        const w = new JsonWriter();
        w.string(s);
        expect(w.finish().toString('utf8'), `code ${code} at ${at}`).toBe(JSON.stringify(s));
      }
    }
  });

  test('string() escapes a character that needs it at any position of a short string', () => {
    for (let length = 1; length <= 12; length++) {
      for (let at = 0; at < length; at++) {
        for (const special of ['"', '\\', '\n', 'é', '\u0001', '😀']) {
          const s = 'abcdefghijkl'.slice(0, at) + special + 'abcdefghijkl'.slice(at + 1, length);
          const w = new JsonWriter();
          w.string(s);
          w.hexId('0af7651916cd43dd8448eb211c80319c');
          expect(w.finish().toString('utf8')).toBe(
            `${JSON.stringify(s)}"0af7651916cd43dd8448eb211c80319c"`,
          );
        }
      }
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
