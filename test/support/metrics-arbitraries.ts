import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type ResourceMetrics,
  type ScopeMetrics,
} from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';

/**
 * fast-check arbitraries for ResourceMetrics as an SDK hands them to an exporter, biased towards
 * the values encoders get wrong: every point type, every attribute value type (nested too),
 * numbers at the edges of double, int64 and uint64, and strings with characters that need
 * escaping or are no valid Unicode. Built directly, not through a MeterProvider, to reach values
 * a real collection only reaches after a long time (counts beyond 2^53) or rarely (-0, NaN).
 */

const TWO_31 = 2 ** 31;
const TWO_53 = 2 ** 53;
const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

// ---- strings --------------------------------------------------------------------------------

/** Characters JSON escapes or spells specially, multi-byte UTF-8, and lone surrogates. */
const ODD_CHARACTERS = [
  '"',
  '\\',
  '/',
  '\b',
  '\f',
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  'é',
  '指',
  '😀',
  '👩🏽‍💻',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
];

const SURROGATES = 0xe000 - 0xd800;

/**
 * Any code point but a lone surrogate, drawn and shrunk exactly as fast-check's `unit: 'binary'`
 * (the same nat over the code points below and above the surrogates, in order: same seed, same
 * values), but with an unmapper that computes the index instead of fast-check's table of all
 * 1.1 million code points, which took 4 s to build at the first string() that uses the unit.
 */
const binaryUnit = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (i) => String.fromCodePoint(i < 0xd800 ? i : i + SURROGATES),
  (value) => {
    const cp = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (cp === undefined || String.fromCodePoint(cp) !== value || (cp >= 0xd800 && cp < 0xe000))
      throw new Error('not one code point outside the surrogates');
    return cp < 0xd800 ? cp : cp - SURROGATES;
  },
);

const character = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_CHARACTERS) },
  { weight: 1, arbitrary: fc.string({ unit: binaryUnit, minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
);

/**
 * Mostly short strings; now and then (about once per case) one of thousands of characters, whose
 * length takes two or three bytes in protobuf.
 */
export const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 60, arbitrary: fc.string({ unit: character, maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: character, maxLength: 3 }), character, fc.nat(6000))
      .map(([head, repeated, n]) => head + repeated.repeat(n)),
  },
);

// ---- numbers --------------------------------------------------------------------------------

/** A power of two where a number type changes, plus or minus a little (or its negative). */
const nearLimit = fc
  .tuple(
    fc.constantFrom(TWO_31, 2 ** 32, TWO_53, TWO_63, TWO_64),
    fc.integer({ min: -4096, max: 4096 }),
    fc.boolean(),
  )
  .map(([limit, k, negative]) => (negative ? -(limit + k) : limit + k));

const SPECIAL_DOUBLES = [
  0,
  -0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE, // smallest denormal
  -Number.MIN_VALUE,
  2.225073858507201e-308, // largest denormal
  2.2250738585072014e-308, // smallest normal
  Number.EPSILON,
  0.1,
  -1.5e-7,
  1e21,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  TWO_53,
  TWO_63,
  -TWO_63,
  TWO_64,
];

/** Any double, the special ones often. */
export const double: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_DOUBLES) },
  { weight: 2, arbitrary: nearLimit },
  { weight: 3, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
);

const inInt64 = (v: number) => Number.isInteger(v) && v >= -TWO_63 && v < TWO_63;

/** An integer an int64 holds, as the double JavaScript has for it. */
export const int64: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 1, arbitrary: fc.maxSafeInteger() },
  {
    weight: 2,
    arbitrary: fc
      .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
      .map(Number)
      .filter(inInt64),
  },
  { weight: 2, arbitrary: nearLimit.filter(inInt64) },
  { weight: 1, arbitrary: fc.constantFrom(-TWO_63, TWO_63 - 1024, -0) },
);

/** A count: an integer a uint64 holds, mostly small. */
export const uint64: fc.Arbitrary<number> = fc.oneof(
  { weight: 8, arbitrary: fc.nat(1000) },
  { weight: 1, arbitrary: fc.maxSafeNat() },
  {
    weight: 1,
    arbitrary: fc
      .bigInt({ min: 0n, max: 2n ** 64n - 1n })
      .map(Number)
      .filter((v) => v < TWO_64),
  },
  { weight: 1, arbitrary: fc.constantFrom(TWO_53, TWO_53 + 2, TWO_63, TWO_64 - 2048) },
);

// ---- attributes -----------------------------------------------------------------------------

/** Objects that are no plain map: the official serializer takes their own enumerable keys. */
const ODD_OBJECTS = () => [new Date(0), new Int16Array([1, -2]), Buffer.from('buffer')];

const scalarValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 3, arbitrary: int64 },
  { weight: 3, arbitrary: double },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_OBJECTS()) },
);

/** Homogeneous arrays, as attribute values usually are. */
const flatArray: fc.Arbitrary<unknown> = fc.oneof(
  fc.array(text, { maxLength: 4 }),
  fc.array(fc.boolean(), { maxLength: 4 }),
  fc.array(int64, { maxLength: 4 }),
  fc.array(double, { maxLength: 4 }),
);

const { anyValue } = fc.letrec<{ anyValue: unknown }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    { weight: 8, arbitrary: scalarValue },
    { weight: 2, arbitrary: flatArray },
    { weight: 1, arbitrary: fc.array(tie('anyValue'), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(text, tie('anyValue'), { maxKeys: 3 }) },
  ),
}));

/** AnyValue, as @opentelemetry/api 1.10 types an attribute value; 1.9's union is a subset. */
export const attributes: fc.Arbitrary<Attributes> = fc
  .dictionary(text, anyValue, { maxKeys: 5 })
  .map((map) => map as Attributes);

// ---- data points ----------------------------------------------------------------------------

export const hrTime: fc.Arbitrary<HrTime> = fc.oneof(
  fc.tuple(fc.nat(2 ** 32 - 1), fc.nat(999_999_999)),
  fc.constantFrom<HrTime>([0, 0], [1_796_011_526, 139_000_123], [2 ** 32 - 1, 999_999_999]),
);

/**
 * Points whose attributes object is now and then the previous point's: the encoders cache a
 * spelling per attributes object, and a series keeps its object from one collection to the next.
 */
function points<T>(value: fc.Arbitrary<T>): fc.Arbitrary<DataPoint<T>[]> {
  const point = fc.record({ startTime: hrTime, endTime: hrTime, attributes, value });
  return fc.array(fc.tuple(point, fc.boolean()), { maxLength: 4 }).map((list) =>
    list.reduce<DataPoint<T>[]>((out, [p, share]) => {
      const previous = out.at(-1);
      out.push(share && previous ? { ...p, attributes: previous.attributes } : p);
      return out;
    }, []),
  );
}

const histogramValue: fc.Arbitrary<Histogram> = fc.record({
  count: uint64,
  sum: optional(double),
  buckets: fc.record({
    boundaries: fc.array(double, { maxLength: 6 }),
    counts: fc.array(uint64, { maxLength: 7 }),
  }),
  min: optional(double),
  max: optional(double),
});

/** Points of one histogram share one boundaries array, as the SDK's do (our JSON caches it). */
const histogramPoints = fc.tuple(points(histogramValue), fc.boolean()).map(([list, share]) => {
  const shared = list[0]?.value.buckets.boundaries;
  if (!share || shared === undefined) return list;
  return list.map((p) => ({
    ...p,
    value: { ...p.value, buckets: { ...p.value.buckets, boundaries: shared } },
  }));
});

/**
 * An exponential histogram's bucket count, a uint64 varint, below 2^63: from 2^63 on a varint
 * takes 10 bytes, the official serializer sizes its buffer for 9, and where that buffer ends the
 * last byte is lost (the count reads as 0). Ours are exact: proto-roundtrip.test.ts.
 */
const bucketCount = uint64.filter((v) => v < TWO_63);

const buckets = fc.record({
  offset: fc.oneof(
    fc.integer({ min: -20, max: 20 }),
    fc.integer({ min: -TWO_31, max: TWO_31 - 1 }),
  ),
  bucketCounts: fc.array(bucketCount, { maxLength: 8 }),
});

const exponentialHistogramValue: fc.Arbitrary<ExponentialHistogram> = fc.record({
  count: uint64,
  sum: optional(double),
  scale: fc.integer({ min: -10, max: 20 }),
  zeroCount: uint64,
  positive: buckets,
  negative: buckets,
  min: optional(double),
  max: optional(double),
});

// ---- metrics --------------------------------------------------------------------------------

const temporality = fc.constantFrom(
  AggregationTemporality.DELTA,
  AggregationTemporality.CUMULATIVE,
);

const descriptor = (valueType: fc.Arbitrary<ValueType>) =>
  fc.record({ name: text, description: text, unit: text, valueType });

/**
 * An INT metric's values are integers an int64 holds: the SDK truncates what is recorded. (One
 * beyond int64 is written as a double by our encoders and wrapped around by the official one;
 * otlp-encoding.test.ts covers that apart.)
 */
const numberMetricParts = fc.oneof(
  fc.record({ descriptor: descriptor(fc.constant(ValueType.INT)), dataPoints: points(int64) }),
  fc.record({ descriptor: descriptor(fc.constant(ValueType.DOUBLE)), dataPoints: points(double) }),
);

const anyValueType = fc.constantFrom(ValueType.INT, ValueType.DOUBLE);

export const metric: fc.Arbitrary<MetricData> = fc.oneof(
  fc
    .tuple(numberMetricParts, temporality, fc.boolean())
    .map(([parts, aggregationTemporality, isMonotonic]) => ({
      ...parts,
      aggregationTemporality,
      dataPointType: DataPointType.SUM as const,
      isMonotonic,
    })),
  fc.tuple(numberMetricParts, temporality).map(([parts, aggregationTemporality]) => ({
    ...parts,
    aggregationTemporality,
    dataPointType: DataPointType.GAUGE as const,
  })),
  fc.record({
    descriptor: descriptor(anyValueType),
    aggregationTemporality: temporality,
    dataPointType: fc.constant(DataPointType.HISTOGRAM as const),
    dataPoints: histogramPoints,
  }),
  fc.record({
    descriptor: descriptor(anyValueType),
    aggregationTemporality: temporality,
    dataPointType: fc.constant(DataPointType.EXPONENTIAL_HISTOGRAM as const),
    dataPoints: points(exponentialHistogramValue),
  }),
);

const scopeMetrics: fc.Arbitrary<ScopeMetrics> = fc.record({
  // Scope attributes are no field of core's InstrumentationScope type, but both serializers
  // write them when an object carries them.
  scope: fc.record(
    { name: text, version: text, schemaUrl: text, attributes },
    { requiredKeys: ['name'] },
  ),
  metrics: fc.array(metric, { maxLength: 4 }),
});

export const resourceMetrics: fc.Arbitrary<ResourceMetrics> = fc.record({
  // The encoders read a resource's attributes and schema URL only.
  resource: fc
    .record({ attributes, schemaUrl: text }, { requiredKeys: ['attributes'] })
    .map((resource) => resource as Resource),
  scopeMetrics: fc.array(scopeMetrics, { maxLength: 3 }),
});
