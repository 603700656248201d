import { describe, expect, test } from 'vitest';
import { dataPointRows, type OtlpObject } from '../../../src/reader.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { decodeProblem, METRICS } from '../../support/otlp-json-requests.js';
import { decodeJsonExact } from '../../support/otlp-reference.js';

// The integer fields of histogram, exponential histogram and summary points: a count, each
// bucket count and a zeroCount are uint64s (fixed64), a scale and a bucket offset sint32s.
// Before: the reader read any number there (1.5, -1, "1e3", NaN, 2^64) as a row's number,
// while the compactor refused the same object (FieldValueError, a damaged part).

const UINT64 = 'a uint64: a whole number from 0 to 2^64 - 1';
const INT32 = 'an int32: a whole number from -2^31 to 2^31 - 1';

type Place = {
  type: 'histogram' | 'exponentialHistogram' | 'summary';
  /** The field as an error names it. */
  field: string;
  /** A point holding `v` in the field. */
  point: (v: unknown) => Record<string, unknown>;
  /** The field's value in the reference's (decodeJsonExact's) point. */
  reference: (p: Record<string, unknown>) => unknown;
  /** The field's value in the reader's row. */
  row: (r: Record<string, unknown>) => unknown;
  allowed: string;
};

const side = (p: Record<string, unknown>, s: string) => p[s] as Record<string, unknown>;
const buckets = (r: Record<string, unknown>) => r.buckets as Record<string, unknown>;
const first = (v: unknown) => (v as unknown[])[0];

const UINT64_PLACES: Place[] = [
  ...(['histogram', 'exponentialHistogram', 'summary'] as const).map((type) => ({
    type,
    field: 'count',
    point: (v: unknown) => ({ count: v }),
    reference: (p: Record<string, unknown>) => p.count,
    row: (r: Record<string, unknown>) => r.count,
    allowed: UINT64,
  })),
  {
    type: 'histogram',
    field: 'a bucket count',
    point: (v) => ({ explicitBounds: [1], bucketCounts: ['2', v] }),
    reference: (p) => (p.bucketCounts as unknown[])[1],
    row: (r) => (buckets(r).bucketCounts as unknown[])[1],
    allowed: UINT64,
  },
  {
    type: 'exponentialHistogram',
    field: 'zeroCount',
    point: (v) => ({ zeroCount: v }),
    reference: (p) => p.zeroCount,
    row: (r) => buckets(r).zeroCount,
    allowed: UINT64,
  },
  ...(['positive', 'negative'] as const).map((s) => ({
    type: 'exponentialHistogram' as const,
    field: `a ${s} bucket count`,
    point: (v: unknown) => ({ [s]: { offset: 0, bucketCounts: [v] } }),
    reference: (p: Record<string, unknown>) => first(side(p, s).bucketCounts),
    row: (r: Record<string, unknown>) => first(side(buckets(r), s).bucketCounts),
    allowed: UINT64,
  })),
];

const INT32_PLACES: Place[] = [
  {
    type: 'exponentialHistogram',
    field: 'scale',
    point: (v) => ({ scale: v }),
    reference: (p) => p.scale,
    row: (r) => buckets(r).scale,
    allowed: INT32,
  },
  ...(['positive', 'negative'] as const).map((s) => ({
    type: 'exponentialHistogram' as const,
    field: `the ${s} buckets' offset`,
    point: (v: unknown) => ({ [s]: { offset: v, bucketCounts: ['1'] } }),
    reference: (p: Record<string, unknown>) => side(p, s).offset,
    row: (r: Record<string, unknown>) => side(buckets(r), s).offset,
    allowed: INT32,
  })),
];

/** A request of one metric `m` of `type`, with one data point. */
function request(type: string, point: Record<string, unknown>): OtlpObject {
  return {
    resourceMetrics: [
      { scopeMetrics: [{ metrics: [{ name: 'm', [type]: { dataPoints: [point] } }] }] },
    ],
  } as OtlpObject;
}

/** The compactor's refusal of a request (its FieldValueError's message), or 'read'. */
function compactorProblem(r: OtlpObject): string {
  const builders = new MetricColumnBuilders();
  try {
    builders.appendRequest(r as unknown as Parameters<MetricColumnBuilders['appendRequest']>[0]);
    return 'read';
  } catch (error) {
    expect((error as Error).name).toBe('FieldValueError');
    return (error as Error).message;
  }
}

/** The reference's point of a request, or undefined when it refuses the request. */
function referencePoint(r: OtlpObject, type: string): Record<string, unknown> | undefined {
  let decoded: unknown;
  try {
    decoded = decodeJsonExact(JSON.stringify(r));
  } catch {
    return undefined;
  }
  const d = decoded as {
    resourceMetrics: { scopeMetrics: { metrics: Record<string, { dataPoints: unknown[] }>[] }[] }[];
  };
  return d.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.[type]?.dataPoints[0] as Record<
    string,
    unknown
  >;
}

/** A value as an error message spells it (JSON; NaN and the infinities by name). */
const spelled = (v: unknown) =>
  typeof v === 'number' && !Number.isFinite(v) ? String(v) : JSON.stringify(v);

const UINT64_REFUSED = [
  1.5,
  -1,
  '-1',
  '1e3',
  '1.0',
  '1.5',
  'NaN',
  'Infinity',
  '18446744073709551616',
  1e21,
  'abc',
  true,
];
const INT32_REFUSED = [
  1.5,
  '1.5',
  'NaN',
  'Infinity',
  2 ** 31,
  '2147483648',
  '-2147483649',
  1e21,
  'abc',
  {},
];

describe.each([
  ...UINT64_PLACES.flatMap((p) => UINT64_REFUSED.map((v) => [p, v] as const)),
  ...INT32_PLACES.flatMap((p) => INT32_REFUSED.map((v) => [p, v] as const)),
])(
  'a value no OTLP field of its kind holds: refused at decode, as the reference and the compactor refuse it',
  (place, v) => {
    test(`${place.type} ${place.field} ${spelled(v)}`, () => {
      const r = request(place.type, place.point(v));
      expect(referencePoint(r, place.type)).toBeUndefined();
      const message = `${place.field} ${spelled(v)} is not ${place.allowed}`;
      expect(compactorProblem(r)).toBe(message);
      expect(decodeProblem(METRICS, r)).toBe(`${METRICS}: metric "m": ${message}`);
      expect(() => dataPointRows(r)).toThrow(`metric "m": ${message}`);
    });
  },
);

describe.each([
  ...UINT64_PLACES.flatMap((p) =>
    // null, a field's default, is unset; in a list it is no count (below).
    [0, '0', 7, '7', '9007199254740993', '18446744073709551615', null]
      .filter((v) => v !== null || !p.field.endsWith('bucket count'))
      .map((v) => [p, v] as const),
  ),
  ...INT32_PLACES.flatMap((p) =>
    [-10, '-10', 0, 20, '2147483647', -(2 ** 31), '-2147483648', null].map((v) => [p, v] as const),
  ),
])('an edge value the field holds is read as the reference reads it', (place, v) => {
  test(`${place.type} ${place.field} ${spelled(v)}`, () => {
    const r = request(place.type, place.point(v));
    const p = referencePoint(r, place.type);
    expect(p).toBeDefined();
    // The reference leaves a field at its default (0) out; it spells a uint64 as decimal text.
    const reference = place.reference(p as Record<string, unknown>) ?? 0;
    expect(decodeProblem(METRICS, r)).toBe('read');
    expect(compactorProblem(r)).toBe('read');
    // A row's number is a double: a uint64 past 2^53 is the nearest one (docs/reading.md).
    const [row] = dataPointRows(r);
    expect(place.row(row as unknown as Record<string, unknown>)).toBe(Number(reference));
  });
});

describe('a null in a list of bucket counts is no count: reader and compactor refuse it', () => {
  // A null field is unset (0), but a list holds no unset items: the reference refuses it. Before:
  // the compactor read it as a count of 0.
  test.each(UINT64_PLACES.filter((p) => p.field.endsWith('bucket count')))(
    '$type $field',
    (place) => {
      const r = request(place.type, place.point(null));
      expect(referencePoint(r, place.type)).toBeUndefined();
      expect(compactorProblem(r)).toBe(`${place.field} null is not ${UINT64}`);
      expect(decodeProblem(METRICS, r)).toBe(
        `${METRICS}: metric "m": ${place.field} null is not ${UINT64}`,
      );
    },
  );
});

describe('a scale or offset as text with an exponent or a point: refused, as the compactor refuses it', () => {
  // Unlike the values above, @bufbuild/protobuf reads these ("1e3" as 1000): it takes any text
  // Number() takes for a 32-bit integer. The reader keeps to the compactor (int32Field, decimal
  // digits only), so that both read or refuse an object alike.
  test.each(INT32_PLACES.flatMap((p) => ['1e3', '1.0'].map((v) => [p.field, v, p] as const)))(
    '%s %j',
    (field, v, place) => {
      const r = request(place.type, place.point(v));
      expect(place.reference(referencePoint(r, place.type) as Record<string, unknown>)).toBe(
        Number(v),
      );
      const message = `${field} ${spelled(v)} is not ${INT32}`;
      expect(compactorProblem(r)).toBe(message);
      expect(decodeProblem(METRICS, r)).toBe(`${METRICS}: metric "m": ${message}`);
    },
  );
});
