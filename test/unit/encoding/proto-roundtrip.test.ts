import type { HrTime } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { hrTimeToNanosParts, hrTimeToNanosString } from '../../../src/encoding/hrtime.js';
import { decodeOtlpProto, ProtoDecodeError } from '../../../src/encoding/otlp-proto-decode.js';
import { FIELD } from '../../../src/encoding/otlp-schema.js';
import { ProtoWriter } from '../../../src/encoding/proto-writer.js';
import { prng } from '../../support/prng.js';

const MiB = 1024 * 1024;
const AV = FIELD.AnyValue;
const ARR = FIELD.ArrayValue;
const KV = FIELD.KeyValue;

// ---- an independent reference encoder, built by concatenation -------------------------------

function refVarint(value: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (v > 127n) {
    out.push(Number(v & 127n) | 128);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

const refTag = (field: number, wire: number) => refVarint(field * 8 + wire);

function refLen(field: number, body: Uint8Array): Buffer {
  return Buffer.concat([refTag(field, 2), refVarint(body.length), body]);
}

const refString = (field: number, value: string) => refLen(field, Buffer.from(value, 'utf8'));

function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.length).toBe(expected.length);
  // Buffer.equals instead of toEqual: a multi-MiB diff would be unreadable.
  expect(Buffer.from(actual).equals(Buffer.from(expected))).toBe(true);
}

function expectDecodeError(bytes: Uint8Array, message: Parameters<typeof decodeOtlpProto>[1]) {
  let thrown: unknown;
  try {
    decodeOtlpProto(bytes, message);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ProtoDecodeError);
  expect((thrown as Error).name).toBe('ProtoDecodeError');
  expect((thrown as Error).message).toMatch(/^invalid OTLP protobuf at byte \d+: /);
}

// ---- tests ----------------------------------------------------------------------------------

describe('AnyValue defaults written with keepDefault', () => {
  test("stringValue '' is written and decodes as present", () => {
    const w = new ProtoWriter();
    w.string(AV.stringValue, '', true);
    const bytes = w.finish();
    expectBytes(bytes, Buffer.from([0x0a, 0x00]));
    expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ stringValue: '' });
  });

  test('boolValue false is written and decodes as present', () => {
    const w = new ProtoWriter();
    w.bool(AV.boolValue, false, true);
    const bytes = w.finish();
    expectBytes(bytes, Buffer.from([0x10, 0x00]));
    expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ boolValue: false });
  });

  test('intValue 0 is written and decodes as present', () => {
    const w = new ProtoWriter();
    w.int64(AV.intValue, 0, true);
    const bytes = w.finish();
    expectBytes(bytes, Buffer.from([0x18, 0x00]));
    expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ intValue: 0 });
  });

  test('bytesValue empty is written and decodes as present', () => {
    const w = new ProtoWriter();
    w.bytes(AV.bytesValue, new Uint8Array(0), true);
    const bytes = w.finish();
    expectBytes(bytes, refLen(AV.bytesValue, Buffer.alloc(0)));
    expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ bytesValue: '' });
  });

  test('without keepDefault the same defaults are omitted', () => {
    const w = new ProtoWriter();
    w.string(AV.stringValue, '');
    w.bool(AV.boolValue, false);
    w.bytes(AV.bytesValue, new Uint8Array(0));
    w.int64(AV.intValue, 0);
    w.uint(FIELD.Resource.droppedAttributesCount, 0);
    w.sint32(FIELD.Buckets.offset, 0);
    const bytes = w.finish();
    expect(bytes.length).toBe(0);
    expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({});
  });

  test('boolValue true decodes as true', () => {
    const w = new ProtoWriter();
    w.bool(AV.boolValue, true);
    expect(decodeOtlpProto(w.finish(), 'AnyValue')).toEqual({ boolValue: true });
  });
});

describe('int64 intValue', () => {
  for (const value of [-1, -(2 ** 40), Number.MIN_SAFE_INTEGER, -(2 ** 31), -129]) {
    test(`negative ${value} takes ten bytes of two's complement and round-trips`, () => {
      const w = new ProtoWriter();
      w.int64(AV.intValue, value);
      const bytes = w.finish();
      expectBytes(bytes, Buffer.concat([refTag(AV.intValue, 0), refVarint(value)]));
      expect(bytes.length).toBe(11);
      expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ intValue: value });
    });
  }

  for (const value of [1, 127, 128, 2 ** 31, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER]) {
    test(`positive ${value} round-trips with a minimal varint`, () => {
      const w = new ProtoWriter();
      w.int64(AV.intValue, value);
      const bytes = w.finish();
      expectBytes(bytes, Buffer.concat([refTag(AV.intValue, 0), refVarint(value)]));
      expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ intValue: value });
    });
  }

  test('an int64 beyond the safe range decodes to its exact decimal string', () => {
    const bytes = Buffer.concat([refTag(AV.intValue, 0), refVarint(-(2n ** 63n))]);
    expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ intValue: '-9223372036854775808' });
  });
});

describe('strings', () => {
  const unicode = [
    'plain ascii',
    'métriques — ünïcödé',
    '指标 / メトリクス / 지표',
    '📈🚀👩🏽‍💻 emoji with ZWJ',
    '\u0000 NUL and \u007f DEL',
  ];
  for (const value of unicode) {
    test(`round-trips ${JSON.stringify(value)} with its UTF-8 byte length as prefix`, () => {
      const w = new ProtoWriter();
      w.string(AV.stringValue, value);
      const bytes = w.finish();
      expectBytes(bytes, refString(AV.stringValue, value));
      expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ stringValue: value });
    });
  }

  // 42/43: the reserved worst case (3 bytes per unit) crosses 127 while the string does not.
  // 127/128 and 16383/16384: the length prefix grows from 1 to 2 and from 2 to 3 bytes.
  const lengths = [1, 42, 43, 127, 128, 5461, 5462, 16383, 16384, 20_000, 3 * MiB];
  for (const length of lengths) {
    test(`an ASCII string of ${length} characters has an exact length prefix and round-trips`, () => {
      const value = 'abcdefghij'.repeat(Math.ceil(length / 10)).slice(0, length);
      const w = new ProtoWriter();
      w.string(AV.stringValue, value);
      const bytes = w.finish();
      expectBytes(bytes, refString(AV.stringValue, value));
      expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ stringValue: value });
    });
  }

  for (const chars of [42, 43, 5461, 5462, 700_000]) {
    test(`a CJK string of ${chars} three-byte characters round-trips`, () => {
      const value = '指'.repeat(chars);
      const w = new ProtoWriter();
      w.string(AV.stringValue, value);
      const bytes = w.finish();
      expectBytes(bytes, refString(AV.stringValue, value));
      expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ stringValue: value });
    });
  }

  test('fields before and after a shifted string are intact', () => {
    const key = 'k'.repeat(43); // reserved prefix is 2 bytes, actual is 1: the body moves back
    const w = new ProtoWriter();
    w.string(KV.key, key);
    w.fork(KV.value);
    w.string(AV.stringValue, 'after');
    w.join();
    const bytes = w.finish();
    expectBytes(
      bytes,
      Buffer.concat([refString(KV.key, key), refLen(KV.value, refString(AV.stringValue, 'after'))]),
    );
    expect(decodeOtlpProto(bytes, 'KeyValue')).toEqual({ key, value: { stringValue: 'after' } });
  });
});

describe('nested messages (fork/join)', () => {
  /** A string length s such that an AnyValue { stringValue } body is exactly `body` bytes. */
  function stringLengthForBody(body: number): number {
    for (let s = body - 2; s > 0; s--) {
      if (1 + refVarint(s).length + s === body) return s;
    }
    throw new Error(`no string length gives an AnyValue body of ${body} bytes`);
  }

  const bodies = [127, 128, 16383, 16384, 2 * MiB + 5];
  for (const body of bodies) {
    test(`a nested message with a ${body}-byte body gets an exact length prefix`, () => {
      const value = 'x'.repeat(stringLengthForBody(body));
      const w = new ProtoWriter();
      w.fork(ARR.values);
      w.string(AV.stringValue, value);
      w.join();
      w.fork(ARR.values);
      w.int64(AV.intValue, 7);
      w.join();
      const bytes = w.finish();
      const first = refString(AV.stringValue, value);
      expect(first.length).toBe(body);
      expectBytes(
        bytes,
        Buffer.concat([
          refLen(ARR.values, first),
          refLen(ARR.values, Buffer.concat([refTag(AV.intValue, 0), refVarint(7)])),
        ]),
      );
      expect(decodeOtlpProto(bytes, 'ArrayValue')).toEqual({
        values: [{ stringValue: value }, { intValue: 7 }],
      });
    });
  }

  test('doubly nested messages that both need multi-byte lengths are shifted correctly', () => {
    const big = 'y'.repeat(2 * MiB + 100);
    const w = new ProtoWriter();
    w.fork(ARR.values); // AnyValue
    w.fork(AV.arrayValue); // ArrayValue
    w.fork(ARR.values); // AnyValue
    w.string(AV.stringValue, big);
    w.join();
    w.fork(ARR.values);
    w.bool(AV.boolValue, true);
    w.join();
    w.join();
    w.join();
    w.fork(ARR.values);
    w.string(AV.stringValue, 'tail');
    w.join();
    const bytes = w.finish();
    const inner = Buffer.concat([
      refLen(ARR.values, refString(AV.stringValue, big)),
      refLen(ARR.values, Buffer.from([0x10, 0x01])),
    ]);
    expectBytes(
      bytes,
      Buffer.concat([
        refLen(ARR.values, refLen(AV.arrayValue, inner)),
        refLen(ARR.values, refString(AV.stringValue, 'tail')),
      ]),
    );
    expect(decodeOtlpProto(bytes, 'ArrayValue')).toEqual({
      values: [
        { arrayValue: { values: [{ stringValue: big }, { boolValue: true }] } },
        { stringValue: 'tail' },
      ],
    });
  });

  test('an empty nested message is written with length 0 and decodes as {}', () => {
    const w = new ProtoWriter();
    w.string(KV.key, 'k');
    w.fork(KV.value);
    w.join();
    const bytes = w.finish();
    expectBytes(bytes, Buffer.concat([refString(KV.key, 'k'), Buffer.from([0x12, 0x00])]));
    expect(decodeOtlpProto(bytes, 'KeyValue')).toEqual({ key: 'k', value: {} });
  });

  test('join() without fork() throws', () => {
    expect(() => new ProtoWriter().join()).toThrow('join() without fork()');
  });
});

describe('packed repeated fields', () => {
  test('packed fixed64 bucketCounts round-trip values above 2^32', () => {
    const counts = [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER];
    const w = new ProtoWriter();
    w.packedFixed64(FIELD.HistogramDataPoint.bucketCounts, counts);
    const bytes = w.finish();
    const body = Buffer.alloc(counts.length * 8);
    counts.forEach((c, i) => {
      body.writeBigUInt64LE(BigInt(c), i * 8);
    });
    expectBytes(bytes, refLen(FIELD.HistogramDataPoint.bucketCounts, body));
    expect(decodeOtlpProto(bytes, 'HistogramDataPoint')).toEqual({ bucketCounts: counts });
  });

  test('a fixed64 beyond 2^53 decodes to its exact decimal string', () => {
    const body = Buffer.alloc(8);
    body.writeBigUInt64LE(2n ** 64n - 1n);
    const bytes = refLen(FIELD.HistogramDataPoint.bucketCounts, body);
    expect(decodeOtlpProto(bytes, 'HistogramDataPoint')).toEqual({
      bucketCounts: ['18446744073709551615'],
    });
  });

  test('packed doubles round-trip, with NaN and infinities as strings', () => {
    const bounds = [-1.5, 0, 2.5, 1e-300, 1e300, Number.NaN, Infinity, -Infinity];
    const w = new ProtoWriter();
    w.packedDouble(FIELD.HistogramDataPoint.explicitBounds, bounds);
    const bytes = w.finish();
    const body = Buffer.alloc(bounds.length * 8);
    bounds.forEach((b, i) => {
      body.writeDoubleLE(b, i * 8);
    });
    expectBytes(bytes, refLen(FIELD.HistogramDataPoint.explicitBounds, body));
    expect(decodeOtlpProto(bytes, 'HistogramDataPoint')).toEqual({
      explicitBounds: [-1.5, 0, 2.5, 1e-300, 1e300, 'NaN', 'Infinity', '-Infinity'],
    });
  });

  test('packed varints round-trip values above 2^32', () => {
    const counts = [
      0,
      1,
      127,
      128,
      16384,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 35 + 17,
      Number.MAX_SAFE_INTEGER,
    ];
    const w = new ProtoWriter();
    w.sint32(FIELD.Buckets.offset, -3);
    w.packedVarint(FIELD.Buckets.bucketCounts, counts);
    const bytes = w.finish();
    expectBytes(
      bytes,
      Buffer.concat([
        refTag(FIELD.Buckets.offset, 0),
        refVarint(5), // zigzag(-3)
        refLen(FIELD.Buckets.bucketCounts, Buffer.concat(counts.map(refVarint))),
      ]),
    );
    expect(decodeOtlpProto(bytes, 'Buckets')).toEqual({ offset: -3, bucketCounts: counts });
  });

  test('packed varints from 2^53 to 2^64 take up to ten bytes and decode exactly', () => {
    const counts = [2 ** 53 + 2, 2 ** 63 - 1024, 2 ** 63, 2 ** 64 - 2048];
    const w = new ProtoWriter();
    w.packedVarint(FIELD.Buckets.bucketCounts, counts);
    const bytes = w.finish();
    const big = counts.map((c) => BigInt(c));
    expectBytes(bytes, refLen(FIELD.Buckets.bucketCounts, Buffer.concat(big.map(refVarint))));
    expect(decodeOtlpProto(bytes, 'Buckets')).toEqual({
      bucketCounts: big.map((c) => c.toString()),
    });
  });

  test('a packed varint body long enough for a 2-byte length round-trips', () => {
    const counts = Array.from({ length: 200 }, (_, i) => i * 1_000_003);
    const w = new ProtoWriter();
    w.packedVarint(FIELD.Buckets.bucketCounts, counts);
    expect(decodeOtlpProto(w.finish(), 'Buckets')).toEqual({ bucketCounts: counts });
  });

  test('empty packed arrays are omitted', () => {
    const w = new ProtoWriter();
    w.packedFixed64(FIELD.HistogramDataPoint.bucketCounts, []);
    w.packedDouble(FIELD.HistogramDataPoint.explicitBounds, []);
    w.packedVarint(FIELD.Buckets.bucketCounts, []);
    expect(w.finish().length).toBe(0);
  });

  test('unpacked repeated scalars are accepted too', () => {
    const bytes = Buffer.concat([
      refTag(FIELD.Buckets.bucketCounts, 0),
      refVarint(3),
      refTag(FIELD.Buckets.bucketCounts, 0),
      refVarint(2 ** 33),
    ]);
    expect(decodeOtlpProto(bytes, 'Buckets')).toEqual({ bucketCounts: [3, 2 ** 33] });
  });

  for (const [label, value] of [
    ['-1', -1],
    ['-2^31', -(2 ** 31)],
    ['2^31-1', 2 ** 31 - 1],
  ] as const) {
    test(`sint32 ${label} round-trips`, () => {
      const w = new ProtoWriter();
      w.sint32(FIELD.Buckets.offset, value);
      expect(decodeOtlpProto(w.finish(), 'Buckets')).toEqual({ offset: value });
    });
  }
});

describe('fixed64 timestamps (nanos)', () => {
  test('1796011526139000123 decodes to its exact decimal string', () => {
    const time: HrTime = [1796011526, 139000123];
    const { lo, hi } = hrTimeToNanosParts(time);
    const w = new ProtoWriter();
    w.fixed64Parts(FIELD.NumberDataPoint.timeUnixNano, lo, hi);
    const bytes = w.finish();
    const body = Buffer.alloc(8);
    body.writeBigUInt64LE(1796011526139000123n);
    expectBytes(bytes, Buffer.concat([refTag(FIELD.NumberDataPoint.timeUnixNano, 1), body]));
    expect(decodeOtlpProto(bytes, 'NumberDataPoint')).toEqual({
      timeUnixNano: '1796011526139000123',
    });
    expect(hrTimeToNanosString(time)).toBe('1796011526139000123');
  });

  test('small and zero timestamps are still strings', () => {
    const w = new ProtoWriter();
    const start = hrTimeToNanosParts([0, 0]);
    const time = hrTimeToNanosParts([0, 5]);
    w.fixed64Parts(FIELD.NumberDataPoint.startTimeUnixNano, start.lo, start.hi);
    w.fixed64Parts(FIELD.NumberDataPoint.timeUnixNano, time.lo, time.hi);
    expect(decodeOtlpProto(w.finish(), 'NumberDataPoint')).toEqual({
      startTimeUnixNano: '0',
      timeUnixNano: '5',
    });
  });

  test('hrTimeToNanosString and hrTimeToNanosParts agree with BigInt arithmetic', () => {
    const random = prng(0x5eed);
    const times: HrTime[] = [
      [0, 0],
      [0, 1],
      [0, 999_999_999],
      [1, 0],
      [1, 999_999_999],
      [2 ** 31 - 1, 999_999_999],
      [2 ** 32 - 1, 999_999_999],
      [1796011526, 139000123],
    ];
    for (let i = 0; i < 5000; i++) {
      times.push([Math.floor(random() * 2 ** 32), Math.floor(random() * 1e9)]);
    }
    for (const time of times) {
      const expected = BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
      expect(hrTimeToNanosString(time), String(time)).toBe(expected.toString());
      const { lo, hi } = hrTimeToNanosParts(time);
      expect(lo >= 0 && lo < 2 ** 32 && Number.isInteger(lo), `lo of ${time}`).toBe(true);
      expect(hi >= 0 && hi < 2 ** 32 && Number.isInteger(hi), `hi of ${time}`).toBe(true);
      expect((BigInt(hi) << 32n) | BigInt(lo), String(time)).toBe(expected);
    }
  });

  test('random timestamps round-trip through the writer and decoder', () => {
    const random = prng(42);
    for (let i = 0; i < 500; i++) {
      const time: HrTime = [Math.floor(random() * 2 ** 32), Math.floor(random() * 1e9)];
      const { lo, hi } = hrTimeToNanosParts(time);
      const w = new ProtoWriter();
      w.fixed64Parts(FIELD.Exemplar.timeUnixNano, lo, hi);
      expect(decodeOtlpProto(w.finish(), 'Exemplar')).toEqual({
        timeUnixNano: hrTimeToNanosString(time),
      });
    }
  });

  test('sfixed64 asInt round-trips negative and large values', () => {
    for (const value of [
      -1,
      -(2 ** 40),
      Number.MIN_SAFE_INTEGER,
      2 ** 32 + 5,
      Number.MAX_SAFE_INTEGER,
    ]) {
      const w = new ProtoWriter();
      w.fixed64(FIELD.NumberDataPoint.asInt, value);
      expect(decodeOtlpProto(w.finish(), 'NumberDataPoint'), String(value)).toEqual({
        asInt: value,
      });
    }
  });

  test('sfixed64 asInt and fixed64 count are exact beyond 2^53, to the ends of their range', () => {
    const asInts = [2 ** 53 + 2, -(2 ** 53) - 2, 2 ** 60 + 4096, 2 ** 63 - 1024, -(2 ** 63)];
    for (const value of asInts) {
      const w = new ProtoWriter();
      w.fixed64(FIELD.NumberDataPoint.asInt, value);
      expect(decodeOtlpProto(w.finish(), 'NumberDataPoint'), String(value)).toEqual({
        asInt: BigInt(value).toString(),
      });
    }
    const counts = [2 ** 53 + 2, 2 ** 63, 2 ** 64 - 2048];
    const w = new ProtoWriter();
    w.packedFixed64(FIELD.HistogramDataPoint.bucketCounts, counts);
    expect(decodeOtlpProto(w.finish(), 'HistogramDataPoint')).toEqual({
      bucketCounts: counts.map((c) => BigInt(c).toString()),
    });
  });

  test('fixed64 count round-trips a value above 2^32', () => {
    const w = new ProtoWriter();
    w.fixed64(FIELD.HistogramDataPoint.count, 2 ** 45 + 9);
    expect(decodeOtlpProto(w.finish(), 'HistogramDataPoint')).toEqual({ count: 2 ** 45 + 9 });
  });
});

describe('doubles', () => {
  for (const [value, decoded] of [
    [Number.NaN, 'NaN'],
    [Infinity, 'Infinity'],
    [-Infinity, '-Infinity'],
    [1.5, 1.5],
    [0, 0],
    [-Number.MAX_VALUE, -Number.MAX_VALUE],
    [Number.MIN_VALUE, Number.MIN_VALUE],
  ] as const) {
    test(`doubleValue ${value} decodes to ${JSON.stringify(decoded)}`, () => {
      const w = new ProtoWriter();
      w.double(AV.doubleValue, value);
      const bytes = w.finish();
      expect(bytes.length).toBe(9); // doubles are always written, even 0
      expect(decodeOtlpProto(bytes, 'AnyValue')).toEqual({ doubleValue: decoded });
    });
  }
});

describe('decoder robustness', () => {
  test('skips unknown fields of every wire type', () => {
    const w = new ProtoWriter();
    w.uint(90, 300); // varint
    w.string(KV.key, 'k');
    w.double(91, 2.5); // i64
    w.string(92, 'unknown'); // len
    w.fork(93); // len holding a message
    w.string(1, 'nested unknown');
    w.join();
    w.fork(KV.value);
    w.uint(94, 2 ** 40); // unknown field inside a known nested message
    w.string(AV.stringValue, 'v');
    w.join();
    const i32 = Buffer.concat([refTag(95, 5), Buffer.from([1, 2, 3, 4])]);
    const bytes = Buffer.concat([w.finish(), i32]);
    expect(decodeOtlpProto(bytes, 'KeyValue')).toEqual({ key: 'k', value: { stringValue: 'v' } });
  });

  test('bytesValue decodes as base64', () => {
    const w = new ProtoWriter();
    w.bytes(AV.bytesValue, Uint8Array.from([0, 1, 254, 255]));
    expect(decodeOtlpProto(w.finish(), 'AnyValue')).toEqual({ bytesValue: 'AAH+/w==' });
  });

  test('a string whose length runs past the end of the input throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x0a, 0x05, 0x61]), 'AnyValue');
  });

  test('a nested message whose length runs past the end of the input throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x12, 0x10, 0x0a, 0x01, 0x61]), 'KeyValue');
  });

  test('a field running past the end of its enclosing message throws ProtoDecodeError', () => {
    // ArrayValue { values: AnyValue (length 3) { stringValue (length 3) } } + 2 trailing bytes
    expectDecodeError(Buffer.from([0x0a, 0x03, 0x0a, 0x03, 0x61, 0x62, 0x63]), 'ArrayValue');
  });

  test('a truncated varint throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x18, 0x80]), 'AnyValue');
    expectDecodeError(Buffer.from([0x80]), 'AnyValue');
  });

  test('a truncated fixed64 or double throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x21, 0, 0, 0, 0, 0, 0, 0xf8]), 'AnyValue');
    expectDecodeError(Buffer.from([0x19, 1, 2, 3]), 'NumberDataPoint');
  });

  test('an unknown field truncated mid-value throws ProtoDecodeError', () => {
    expectDecodeError(
      Buffer.concat([refTag(99, 2), refVarint(10), Buffer.from('abc')]),
      'KeyValue',
    );
    expectDecodeError(Buffer.concat([refTag(99, 5), Buffer.from([1, 2])]), 'KeyValue');
  });

  test('a varint longer than 10 bytes throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x18, ...Array(10).fill(0xff), 0x01]), 'AnyValue');
  });

  test('a known field with the wrong wire type throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x08, 0x01]), 'AnyValue'); // stringValue as varint
  });

  test('a group wire type throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x0b]), 'ExportMetricsServiceRequest'); // field 1, wire 3
  });

  test('every truncation inside a real message either throws ProtoDecodeError or yields a prefix', () => {
    const w = new ProtoWriter();
    w.string(KV.key, 'host.name');
    w.fork(KV.value);
    w.string(AV.stringValue, 'x'.repeat(300));
    w.join();
    const full = w.finish();
    const fieldEnds = new Set([0, refString(KV.key, 'host.name').length, full.length]);
    for (let n = 0; n < full.length; n++) {
      const cut = full.subarray(0, n);
      if (fieldEnds.has(n)) expect(() => decodeOtlpProto(cut, 'KeyValue')).not.toThrow();
      else expectDecodeError(cut, 'KeyValue');
    }
  });

  test('a packed fixed64 whose length is not a multiple of 8 throws ProtoDecodeError', () => {
    // bucketCounts claims 4 bytes; decoding 8 would swallow the flags fields that follow.
    const bytes = Buffer.concat([
      refLen(FIELD.HistogramDataPoint.bucketCounts, Buffer.from([1, 0, 0, 0])),
      Buffer.from([0x50, 0x01, 0x50, 0x02, 0x50, 0x03]),
    ]);
    expectDecodeError(bytes, 'HistogramDataPoint');
  });

  test('invalid UTF-8 in a string field throws ProtoDecodeError', () => {
    expectDecodeError(Buffer.from([0x0a, 0x02, 0xc3, 0x28]), 'AnyValue');
  });

  test('decodes a Uint8Array view at a non-zero byteOffset', () => {
    const w = new ProtoWriter();
    w.string(AV.stringValue, 'offset');
    const bytes = w.finish();
    const padded = new Uint8Array(bytes.length + 7);
    padded.set(bytes, 7);
    expect(decodeOtlpProto(padded.subarray(7), 'AnyValue')).toEqual({ stringValue: 'offset' });
  });
});

describe('ProtoWriter buffer reuse', () => {
  function small(w: ProtoWriter): Buffer {
    w.string(KV.key, 'service.name');
    w.fork(KV.value);
    w.string(AV.stringValue, 'checkout');
    w.join();
    return w.finish();
  }

  test('after finish() of a >4 MiB message, small messages are still correct', () => {
    const expected = small(new ProtoWriter());
    const w = new ProtoWriter();
    const big = 'z'.repeat(5 * MiB);
    w.fork(KV.value);
    w.string(AV.stringValue, big);
    w.join();
    const first = w.finish();
    expect(decodeOtlpProto(first, 'KeyValue')).toEqual({ value: { stringValue: big } });
    for (let i = 0; i < 3; i++) expectBytes(small(w), expected);
  });

  test('after the shrink, the writer grows again for a message above its initial capacity', () => {
    const w = new ProtoWriter();
    w.string(AV.stringValue, 'a'.repeat(5 * MiB));
    w.finish();
    const medium = 'm'.repeat(200 * 1024);
    w.fork(ARR.values);
    w.string(AV.stringValue, medium);
    w.join();
    const bytes = w.finish();
    expectBytes(bytes, refLen(ARR.values, refString(AV.stringValue, medium)));
  });

  test('a finished buffer is not changed by later writes', () => {
    const w = new ProtoWriter();
    const first = small(w);
    const copy = Buffer.from(first);
    w.string(KV.key, 'something else entirely');
    w.finish();
    expectBytes(first, copy);
  });

  test('finish() resets the writer, so consecutive messages do not accumulate', () => {
    const w = new ProtoWriter();
    const a = small(w);
    const b = small(w);
    expectBytes(b, a);
  });
});
