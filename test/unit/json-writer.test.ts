import { describe, expect, test } from 'vitest';
import { JsonWriter } from '../../src/encoding/json-writer.js';

/** What the writer produced, as text. */
const text = (w: JsonWriter) => w.finish().toString('latin1');

describe('JsonWriter', () => {
  test('numbers are spelled as JSON.stringify spells them (non-finite ones as OTLP strings)', () => {
    const values = [
      0,
      -0,
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
    w.double(Number.NaN);
    w.double(Number.POSITIVE_INFINITY);
    w.double(Number.NEGATIVE_INFINITY);
    expect(text(w)).toBe('"NaN""Infinity""-Infinity"');
  });

  test('int() writes a value that is no safe integer as the double it is', () => {
    const w = new JsonWriter();
    for (const v of [1.5, -2.5, 2 ** 53, Number.NaN]) {
      w.int(v);
      w.char(0x20);
    }
    expect(text(w)).toBe('1.5 -2.5 9007199254740992 "NaN" ');
  });

  test('uints() stays correct when a long value makes the buffer grow part-way through', () => {
    // Every offset from the buffer's end, so that some call grows it inside the slow branch.
    for (let room = 0; room < 300; room++) {
      const w = new JsonWriter();
      w.raw('x'.repeat(256 * 1024 - room));
      const values = [1.2345678901234567e-100, 1, 2, 3, -4, 12345, 0.5, 6];
      w.uints(values);
      const out = text(w);
      expect(out.slice(256 * 1024 - room), `room ${room}`).toBe(
        values.map((v) => JSON.stringify(v)).join(','),
      );
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
