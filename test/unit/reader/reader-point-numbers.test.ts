import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  dataPointRows,
  decodeStoredObject,
  decodeStoredObjectAsync,
  ObjectDecodeError,
  type OtlpObject,
  readMetrics,
  type UnreadableObject,
} from '../../../src/reader.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { decodeJsonExact, encodeProtobuf } from '../../support/otlp-reference.js';
import { collect, keyAt, writeAtKey } from '../../support/reader-fixtures.js';
import { READER_T0, timesAfter } from '../../support/time.js';

// Hand-written OTLP/JSON requests whose data points hold a number field that is no number.
// Before: each read as a row with 0 in that field.

const at = timesAfter(READER_T0);
const KEY = 'p/metrics_0190a6c4-8f00-7000-8000-000000000000.json';

/** A request of one metric `m` of `type`, with one data point. */
function request(type: string, point: Record<string, unknown>, name = 'm'): OtlpObject {
  return {
    resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name, [type]: { dataPoints: [point] } }] }] }],
  } as OtlpObject;
}

const bytes = (r: OtlpObject) => Buffer.from(JSON.stringify(r));

/** The decode error's message for a request, or 'read' when it decodes. */
function decodeProblem(r: OtlpObject): string {
  try {
    decodeStoredObject(KEY, bytes(r));
    return 'read';
  } catch (error) {
    expect(error).toBeInstanceOf(ObjectDecodeError);
    return (error as Error).message;
  }
}

const NUMBER = 'a number, or its decimal text, NaN or ±Infinity';
const DOUBLE = `a double: ${NUMBER}`;
const INT64 = 'an int64: a whole number from -2^63 to 2^63 - 1, or its decimal text';
// Counts are uint64s, a scale and an offset int32s (reader-histogram-integers.test.ts).
const UINT64 = 'a uint64: a whole number from 0 to 2^64 - 1';
const INT32 = 'an int32: a whole number from -2^31 to 2^31 - 1';

const CASES: [string, OtlpObject, string, string?][] = [
  ['histogram', request('histogram', { count: 'abc' }), `count "abc"`, UINT64],
  ['histogram', request('histogram', { count: {} }), 'count {}', UINT64],
  ['histogram', request('histogram', { count: true }), 'count true', UINT64],
  ['histogram', request('histogram', { count: '5', sum: 'x' }), 'sum "x"', DOUBLE],
  ['histogram', request('histogram', { count: '5', min: [1] }), 'min [1]', DOUBLE],
  ['histogram', request('histogram', { count: '5', max: false }), 'max false', DOUBLE],
  [
    'histogram',
    request('histogram', { explicitBounds: [1, '2x'], bucketCounts: ['1', '2', '3'] }),
    'an explicit bound "2x"',
    DOUBLE,
  ],
  [
    'histogram',
    request('histogram', { explicitBounds: [1], bucketCounts: ['1', 'lots'] }),
    'a bucket count "lots"',
    UINT64,
  ],
  ['exponential', request('exponentialHistogram', { scale: 'two' }), 'scale "two"', INT32],
  ['exponential', request('exponentialHistogram', { zeroCount: {} }), 'zeroCount {}', UINT64],
  [
    'exponential',
    request('exponentialHistogram', { positive: { offset: 'x', bucketCounts: ['1'] } }),
    `the positive buckets' offset "x"`,
    INT32,
  ],
  [
    'exponential',
    request('exponentialHistogram', { negative: { offset: 0, bucketCounts: [true] } }),
    'a negative bucket count true',
    UINT64,
  ],
  ['summary', request('summary', { count: 'n/a' }), 'count "n/a"', UINT64],
  ['summary', request('summary', { count: '1', sum: {} }), 'sum {}', DOUBLE],
  ['gauge', request('gauge', { asInt: 'abc' }), 'asInt "abc"', INT64],
  ['sum', request('sum', { asDouble: true }), 'asDouble true', DOUBLE],
  ['gauge', request('gauge', { asInt: '0x10' }), 'asInt "0x10"', INT64],
];

describe('a data point number field that is no number: the object is refused, naming it', () => {
  test.each(CASES.map(([type, r, field, allowed]) => [type, field, r, allowed ?? NUMBER] as const))(
    '%s: %s',
    (_, field, r, allowed) => {
      expect(decodeProblem(r)).toBe(`${KEY}: metric "m": ${field} is not ${allowed}`);
    },
  );

  test('dataPointRows of such a request throws, naming the field, instead of a row of 0', () => {
    expect(() => dataPointRows(request('histogram', { count: 'abc' }, 'h'))).toThrow(
      `metric "h": count "abc" is not ${UINT64}`,
    );
  });

  test('integers as decimal text, doubles as text, and unset fields (absent or null) are read', () => {
    const histogram = request('histogram', {
      count: '12',
      sum: '7.5',
      min: null,
      max: 'Infinity',
      explicitBounds: [1, '2.5'],
      bucketCounts: ['3', 9],
    });
    expect(decodeProblem(histogram)).toBe('read');
    const [row] = dataPointRows(histogram);
    expect(row).toMatchObject({
      count: 12,
      sum: 7.5,
      max: Number.POSITIVE_INFINITY,
      buckets: { explicitBounds: [1, 2.5], bucketCounts: [3, 9] },
    });
    expect(row && 'min' in row).toBe(false);
    const exponential = request('exponentialHistogram', {
      count: '4',
      scale: '-2',
      zeroCount: '1',
      positive: { offset: '-3', bucketCounts: ['2', '1'] },
    });
    expect(decodeProblem(exponential)).toBe('read');
    expect(dataPointRows(exponential)[0]?.buckets).toEqual({
      scale: -2,
      zeroCount: 1,
      positive: { offset: -3, bucketCounts: [2, 1] },
      negative: { offset: 0, bucketCounts: [] },
    });
    expect(dataPointRows(request('gauge', { asInt: '-42' }))[0]?.value).toBe(-42);
  });
});

describe('an asInt that is no int64 (not whole, or outside -2^63 to 2^63 - 1) is refused', () => {
  // proto3's JSON mapping, as @bufbuild/protobuf's fromJson (decodeJsonExact) reads an sfixed64:
  // a whole number in range, a JSON number or decimal text; it refuses each of these ("1e3" and
  // "1.0": text with an exponent or a point). Before: each was a row's value (1.5, 1000, NaN).
  test.each([
    1.5,
    '1.5',
    '1.0',
    '1e3',
    '9223372036854775808',
    '-9223372036854775809',
    'NaN',
    'Infinity',
  ])('%j', (v) => {
    for (const type of ['gauge', 'sum']) {
      const r = request(type, { asInt: v });
      expect(() => decodeJsonExact(JSON.stringify(r))).toThrow('(int64)');
      expect(decodeProblem(r)).toBe(
        `${KEY}: metric "m": asInt ${JSON.stringify(v)} is not ${INT64}`,
      );
      expect(() => dataPointRows(r)).toThrow(`asInt ${JSON.stringify(v)} is not ${INT64}`);
    }
  });

  test('a whole JSON number past the range is read as written: opentelemetry-js writes one', () => {
    // The reference refuses it; refusing it would refuse the whole object it is in.
    const r = request('gauge', { asInt: 1e21 });
    expect(() => decodeJsonExact(JSON.stringify(r))).toThrow('(int64)');
    expect(decodeProblem(r)).toBe('read');
    expect(dataPointRows(r)[0]?.value).toBe(1e21);
  });

  test.each([
    ['1e0', '1', 1],
    ['"-12"', '-12', -12],
    ['"9223372036854775807"', '9223372036854775807', 2 ** 63],
    ['-9223372036854775808', '-9223372036854775808', -(2 ** 63)],
  ])('%s is read, as the reference reads it (%s)', (v, reference, value) => {
    const text = JSON.stringify(request('gauge', { asInt: 'HERE' })).replace('"HERE"', v);
    const canonical = decodeJsonExact(text) as {
      resourceMetrics: { scopeMetrics: { metrics: { gauge: { dataPoints: unknown[] } }[] }[] }[];
    };
    expect(canonical.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.gauge.dataPoints).toEqual([
      { asInt: reference },
    ]);
    // A row's value is a double: an int64 past 2^53 is the nearest one (docs/reading.md).
    const { request: decoded } = decodeStoredObject(KEY, Buffer.from(text));
    expect(dataPointRows(decoded)[0]?.value).toBe(value);
  });
});

describe('a gauge or sum point with neither asInt nor asDouble has no value, in every format', () => {
  // OTLP's NumberDataPoint.value is a oneof that may be unset (a point flagged
  // NO_RECORDED_VALUE, flags 1, has none). Parquet stores it as a null Value (docs/parquet.md);
  // the rows leave `value` out, as they do an unrecorded min or max. Before: a value of 0, in
  // OTLP/JSON and protobuf objects alike.
  const BINPB = KEY.replace('.json', '.binpb');

  test.each([
    ['gauge', { timeUnixNano: '1000', flags: 1 }],
    ['sum', { timeUnixNano: '1000' }],
    ['gauge', { timeUnixNano: '1000', asInt: null, asDouble: null }],
  ])('%s %j', (type, point) => {
    const r = request(type, point);
    const protobuf = encodeProtobuf(JSON.parse(JSON.stringify(r)));
    // The reference reads no value from either format.
    const reference = decodeJsonExact(JSON.stringify(r)) as {
      resourceMetrics: {
        scopeMetrics: { metrics: Record<string, { dataPoints: unknown[] }>[] }[];
      }[];
    };
    const [p] = reference.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.[type]?.dataPoints ?? [];
    expect(p).not.toHaveProperty('asInt');
    expect(p).not.toHaveProperty('asDouble');
    for (const [key, bytes] of [
      [KEY, Buffer.from(JSON.stringify(r))],
      [BINPB, protobuf],
    ] as const) {
      const [row] = dataPointRows(decodeStoredObject(key, bytes).request);
      expect(row?.time).toBe('1970-01-01T00:00:00.000001000Z');
      expect(row).not.toHaveProperty('value');
    }
  });

  test('the same from a Parquet file, whose Value is null', async () => {
    const builders = new MetricColumnBuilders();
    builders.appendRequest(
      request('gauge', {
        timeUnixNano: '1000',
        flags: 1,
      }) as unknown as Parameters<MetricColumnBuilders['appendRequest']>[0],
    );
    const file = await encodeParquet(builders.seal(), { compression: 'none' });
    const { request: decoded } = await decodeStoredObjectAsync(
      KEY.replace('.json', '.parquet'),
      file,
    );
    const [row] = dataPointRows(decoded);
    expect(row?.type).toBe('gauge');
    expect(row).not.toHaveProperty('value');
  });

  test('a point with a value of 0 keeps it', () => {
    for (const point of [{ asInt: '0' }, { asDouble: 0 }]) {
      const r = request('gauge', point);
      expect(dataPointRows(r)[0]?.value).toBe(0);
      const protobuf = encodeProtobuf(JSON.parse(JSON.stringify(r)));
      const decoded = decodeStoredObject(KEY.replace('.json', '.binpb'), protobuf).request;
      expect(dataPointRows(decoded)[0]?.value).toBe(0);
    }
  });
});

describe('readMetrics skips such an object, reports it to onError and counts it', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'otel-s3-point-numbers-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('the bad object is reported with its key and field; the good one is read', async () => {
    const bad = keyAt('p', at(0), '.json');
    const good = keyAt('p', at(1), '.json');
    await writeAtKey(dir, bad, bytes(request('histogram', { count: 'abc' }, 'h')));
    await writeAtKey(dir, good, bytes(request('histogram', { count: '3' }, 'h')));
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({ dir, prefix: 'p', onError: (p) => problems.push(p) });
    const read = await collect(stream);
    expect(read.map((o) => o.key)).toEqual([good]);
    expect(problems.map((p) => [p.key, p.stage, p.error.message])).toEqual([
      [bad, 'decode', `${bad}: metric "h": count "abc" is not ${UINT64}`],
    ]);
    expect(stream.stats.objectsUnreadable).toBe(1);
  });
});
