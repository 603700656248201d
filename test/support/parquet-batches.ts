import { type Attributes, ValueType } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { text } from './metrics-arbitraries.js';

/**
 * Batches for the Parquet writer's property test, generated as a model first: each batch is the
 * list of exports the builders get (the SDK's ResourceMetrics, or decoded OTLP requests), and the
 * rows the table must hold for them, worked out here from the model by the rules docs/parquet.md
 * states (never by the code under test). Rows are spelled canonically: 64-bit integers and
 * microseconds as decimal strings, doubles as `dbl()` spells them, maps as [key, value] pairs.
 */

export type Entry = [string, string | null];
export interface Row {
  TimeUnix: string;
  StartTimeUnix: string;
  ServiceName: string;
  ResourceSchemaUrl: string;
  ResourceAttributes: Entry[];
  ScopeName: string;
  ScopeVersion: string;
  ScopeSchemaUrl: string;
  MetricName: string;
  MetricDescription: string;
  MetricUnit: string;
  MetricType: string;
  Attributes: Entry[];
  AggregationTemporality: number;
  IsMonotonic: boolean;
  Value: string | null;
  ValueAsInt: string | null;
  Count: string | null;
  Sum: string | null;
  Min: string | null;
  Max: string | null;
  BucketCounts: string[];
  ExplicitBounds: string[];
  Scale: number | null;
  ZeroCount: string | null;
  PositiveOffset: number | null;
  PositiveBucketCounts: string[];
  NegativeOffset: number | null;
  NegativeBucketCounts: string[];
  Flags: number;
}

/** A double, exactly: NaN, Infinity, -Infinity, -0, else its shortest round-trip digits. */
export const dbl = (v: number): string => (Object.is(v, -0) ? '-0' : String(v));
/** What a string is in UTF-8: lone surrogates become U+FFFD. */
export const utf8Text = (s: string): string => Buffer.from(s).toString();

// ---- the model -----------------------------------------------------------------------------

type Value =
  | { k: 'str'; v: string }
  | { k: 'bool'; v: boolean }
  | { k: 'int'; v: bigint }
  | { k: 'dbl'; v: number }
  | { k: 'empty' }
  | { k: 'words'; v: string[] };
type Kv = [string, Value];
type Dist = { count: bigint; sum?: number; min?: number; max?: number };
type Point = {
  start: bigint;
  time: bigint;
  attributes: Kv[];
  flags: number;
  value:
    | { t: 'int'; v: bigint }
    | { t: 'dbl'; v: number }
    | (Dist & { t: 'hist'; bounds: number[]; counts: bigint[] })
    | (Dist & {
        t: 'exp';
        scale: number;
        zero: bigint;
        pos: [number, bigint[]];
        neg: [number, bigint[]];
      })
    | (Dist & { t: 'summary' });
};
type Kind = 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary';
type Metric = {
  name: string;
  description: string;
  unit: string;
  kind: Kind;
  int: boolean;
  delta: boolean;
  monotonic: boolean;
  points: Point[];
};
type Scope = { name: string; version: string; schemaUrl: string; metrics: Metric[] };
type Export = { sdk: boolean; attributes: Kv[]; schemaUrl: string; scopes: Scope[] };

const TWO_63 = 2n ** 63n;
/**
 * Keys: valid Unicode (two keys with different lone surrogates would be one key in UTF-8), and
 * none a reader cannot give back as an object key (hyparquet returns maps as objects).
 */
const key = text.filter((k) => k !== '__proto__' && utf8Text(k) === k);
const word = fc.stringMatching(/^[a-z]{0,6}$/);
const nonBmp = fc.constantFrom('😀', '指', '👩🏽‍💻', '\u{10ffff}', '\ud800');
const str = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: nonBmp });
const special = fc.constantFrom(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -0,
  0,
  1e21,
  1e-7,
  2 ** 63,
);
const anyDouble = fc.oneof(
  special,
  fc.double(),
  fc.integer({ min: -1000, max: 1000 }).map((i) => i / 8),
);
const int64 = fc.oneof(
  fc.bigInt({ min: -TWO_63, max: TWO_63 - 1n }),
  fc.bigInt({ min: -1000n, max: 1000n }),
);
/** Integers the SDK can hold exactly (its values are JavaScript numbers). */
const sdkInt = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(BigInt),
  fc.constantFrom(2n ** 60n, -(2n ** 63n), 2n ** 53n, 9007199254740991n),
);
const count = (sdk: boolean) =>
  sdk ? fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }) : fc.bigInt({ min: 0n, max: TWO_63 - 1n });

const value = (sdk: boolean): fc.Arbitrary<Value> =>
  fc.oneof(
    { weight: 4, arbitrary: str.map((v) => ({ k: 'str' as const, v })) },
    fc.boolean().map((v) => ({ k: 'bool' as const, v })),
    (sdk ? sdkInt : int64).map((v) => ({ k: 'int' as const, v })),
    anyDouble.map((v) => ({ k: 'dbl' as const, v })),
    fc.constant({ k: 'empty' as const }),
    fc.array(word, { maxLength: 3 }).map((v) => ({ k: 'words' as const, v })),
  );

const attributeSet = (sdk: boolean): fc.Arbitrary<Kv[]> =>
  fc
    .oneof(
      { weight: 6, arbitrary: fc.array(fc.tuple(key, value(sdk)), { maxLength: 4 }) },
      { weight: 1, arbitrary: fc.constant<Kv[]>([]) },
      // Huge: a few hundred attributes.
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 200, max: 400 })
          .map((n) =>
            Array.from({ length: n }, (_, i): Kv => [`k${i}`, { k: 'int', v: BigInt(i) }]),
          ),
      },
    )
    .map((kvs) => (sdk ? [...new Map(kvs)] : kvs)); // an SDK attributes object has each key once

/** Nanoseconds: within an HrTime's 2^32 seconds for the SDK, any uint64 for OTLP. */
const nanos = (sdk: boolean) =>
  fc.bigInt({ min: 0n, max: sdk ? 2n ** 32n * 1_000_000_000n - 1n : 2n ** 64n - 1n });
const dist = (sdk: boolean) =>
  fc.record({
    count: count(sdk),
    sum: fc.option(anyDouble, { nil: undefined }),
    min: fc.option(anyDouble, { nil: undefined }),
    max: fc.option(anyDouble, { nil: undefined }),
  });

function pointValue(
  kind: Kind,
  int: boolean,
  sdk: boolean,
  bounds: number[],
): fc.Arbitrary<Point['value']> {
  const counts = fc.array(count(sdk), { maxLength: 6 });
  switch (kind) {
    case 'gauge':
    case 'sum':
      return int
        ? (sdk ? sdkInt : int64).map((v) => ({ t: 'int', v }))
        : anyDouble.map((v) => ({ t: 'dbl', v }));
    case 'histogram':
      return fc.tuple(dist(sdk), counts).map(([d, c]) => ({ ...d, t: 'hist', bounds, counts: c }));
    case 'exponential_histogram':
      return fc
        .tuple(
          dist(sdk),
          fc.integer({ min: -10, max: 20 }),
          count(sdk),
          fc.integer({ min: -50, max: 50 }),
          counts,
          fc.integer({ min: -50, max: 50 }),
          counts,
        )
        .map(([d, scale, zero, po, pc, no, nc]) => ({
          ...d,
          t: 'exp',
          scale,
          zero,
          pos: [po, pc],
          neg: [no, nc],
        }));
    case 'summary':
      return dist(sdk).map((d) => ({ ...d, t: 'summary', min: undefined, max: undefined }));
  }
}

const metric = (sdk: boolean): fc.Arbitrary<Metric> =>
  fc
    .record({
      name: str,
      description: text,
      unit: text,
      kind: fc.constantFrom<Kind>(
        'gauge',
        'sum',
        'histogram',
        'exponential_histogram',
        ...(sdk ? [] : ['summary' as const]),
      ),
      int: fc.boolean(),
      delta: fc.boolean(),
      monotonic: fc.boolean(),
      bounds: fc.array(anyDouble, { maxLength: 5 }),
    })
    .chain((m) =>
      fc
        .array(
          fc.record({
            start: nanos(sdk),
            time: nanos(sdk),
            attributes: attributeSet(sdk),
            flags: sdk ? fc.constant(0) : fc.nat(2 ** 32 - 1),
            value: pointValue(m.kind, m.int, sdk, m.bounds),
          }),
          { maxLength: 5 },
        )
        .map((points) => ({ ...m, monotonic: m.kind === 'sum' && m.monotonic, points })),
    );

const exportOf = (sdk: boolean): fc.Arbitrary<Export> =>
  fc.record({
    sdk: fc.constant(sdk),
    attributes: fc
      .tuple(attributeSet(sdk), fc.option(str))
      .map(([kvs, service]) =>
        service === null
          ? kvs
          : [
              ...kvs.filter(([k]) => !sdk || k !== 'service.name'),
              ['service.name', { k: 'str', v: service }] as Kv,
            ],
      ),
    schemaUrl: text,
    scopes: fc.array(
      fc.record({
        name: str,
        version: text,
        schemaUrl: text,
        metrics: fc.array(metric(sdk), { maxLength: 3 }),
      }),
      { maxLength: 2 },
    ),
  });

/** A batch: 1-4 exports of either kind. */
export const batch: fc.Arbitrary<Export[]> = fc.array(fc.boolean().chain(exportOf), {
  minLength: 1,
  maxLength: 4,
});

// ---- as the builders get them --------------------------------------------------------------

function sdkValue(v: Value): unknown {
  switch (v.k) {
    case 'int':
      return Number(v.v);
    case 'empty':
      return undefined;
    case 'words':
      return v.v;
    default:
      return v.v;
  }
}

const hrTime = (ns: bigint): [number, number] => [
  Number(ns / 1_000_000_000n),
  Number(ns % 1_000_000_000n),
];
const sdkAttributes = (kvs: Kv[]): Attributes =>
  Object.fromEntries(kvs.map(([k, v]) => [k, sdkValue(v)])) as Attributes;
const DATA_POINT_TYPE = {
  gauge: DataPointType.GAUGE,
  sum: DataPointType.SUM,
  histogram: DataPointType.HISTOGRAM,
  exponential_histogram: DataPointType.EXPONENTIAL_HISTOGRAM,
} as const;

/** The SDK's ResourceMetrics of an export (one bounds array per histogram, as the SDK shares it). */
export function toResourceMetrics(e: Export): ResourceMetrics {
  return {
    resource: {
      attributes: sdkAttributes(e.attributes),
      schemaUrl: e.schemaUrl,
    } as unknown as Resource,
    scopeMetrics: e.scopes.map((s) => ({
      scope: { name: s.name, version: s.version, schemaUrl: s.schemaUrl },
      metrics: s.metrics.map((m) => {
        const bounds = m.points.find((p) => p.value.t === 'hist')?.value as
          | { bounds: number[] }
          | undefined;
        const shared = bounds?.bounds ?? [];
        const dataPoints: DataPoint<unknown>[] = m.points.map((p) => {
          const v = p.value;
          const d =
            v.t === 'hist' || v.t === 'exp' || v.t === 'summary'
              ? { count: Number(v.count), sum: v.sum, min: v.min, max: v.max }
              : {};
          return {
            startTime: hrTime(p.start),
            endTime: hrTime(p.time),
            attributes: sdkAttributes(p.attributes),
            value:
              v.t === 'int' || v.t === 'dbl'
                ? Number(v.v)
                : v.t === 'hist'
                  ? { ...d, buckets: { boundaries: shared, counts: v.counts.map(Number) } }
                  : v.t === 'exp'
                    ? {
                        ...d,
                        scale: v.scale,
                        zeroCount: Number(v.zero),
                        positive: { offset: v.pos[0], bucketCounts: v.pos[1].map(Number) },
                        negative: { offset: v.neg[0], bucketCounts: v.neg[1].map(Number) },
                      }
                    : d,
          };
        });
        return {
          descriptor: {
            name: m.name,
            description: m.description,
            unit: m.unit,
            valueType: m.int ? ValueType.INT : ValueType.DOUBLE,
            type: 'COUNTER',
          },
          aggregationTemporality: m.delta
            ? AggregationTemporality.DELTA
            : AggregationTemporality.CUMULATIVE,
          dataPointType: DATA_POINT_TYPE[m.kind as keyof typeof DATA_POINT_TYPE],
          isMonotonic: m.monotonic,
          dataPoints,
        } as unknown as MetricData;
      }),
    })),
  };
}

const otlpDouble = (v: number) => (Number.isFinite(v) ? v : String(v));
function otlpValue(v: Value): object {
  switch (v.k) {
    case 'str':
      return { stringValue: v.v };
    case 'bool':
      return { boolValue: v.v };
    case 'int':
      return { intValue: v.v.toString() };
    case 'dbl':
      return { doubleValue: otlpDouble(v.v) };
    case 'empty':
      return {};
    case 'words':
      return { arrayValue: { values: v.v.map((w) => ({ stringValue: w })) } };
  }
}
const otlpAttributes = (kvs: Kv[]) => kvs.map(([key, v]) => ({ key, value: otlpValue(v) }));
const FIELD = {
  gauge: 'gauge',
  sum: 'sum',
  histogram: 'histogram',
  exponential_histogram: 'exponentialHistogram',
  summary: 'summary',
} as const;

/** A decoded request of an export: int64 as decimal strings, non-finite doubles as strings. */
export function toRequest(e: Export): Record<string, unknown> {
  const point = (p: Point) => {
    const v = p.value;
    const out: Record<string, unknown> = {
      attributes: otlpAttributes(p.attributes),
      startTimeUnixNano: p.start.toString(),
      timeUnixNano: p.time.toString(),
      flags: p.flags,
    };
    if (v.t === 'int') out.asInt = v.v.toString();
    else if (v.t === 'dbl') out.asDouble = otlpDouble(v.v);
    else {
      out.count = v.count.toString();
      for (const f of ['sum', 'min', 'max'] as const)
        if (v[f] !== undefined) out[f] = otlpDouble(v[f] as number);
      if (v.t === 'hist')
        Object.assign(out, {
          explicitBounds: v.bounds.map(otlpDouble),
          bucketCounts: v.counts.map(String),
        });
      if (v.t === 'exp')
        Object.assign(out, {
          scale: v.scale,
          zeroCount: v.zero.toString(),
          positive: { offset: v.pos[0], bucketCounts: v.pos[1].map(String) },
          negative: { offset: v.neg[0], bucketCounts: v.neg[1].map(String) },
        });
    }
    return out;
  };
  return {
    resourceMetrics: [
      {
        resource: { attributes: otlpAttributes(e.attributes) },
        schemaUrl: e.schemaUrl,
        scopeMetrics: e.scopes.map((s) => ({
          scope: { name: s.name, version: s.version },
          schemaUrl: s.schemaUrl,
          metrics: s.metrics.map((m) => ({
            name: m.name,
            description: m.description,
            unit: m.unit,
            [FIELD[m.kind]]: {
              dataPoints: m.points.map(point),
              ...(m.kind === 'gauge' || m.kind === 'summary'
                ? {}
                : { aggregationTemporality: m.delta ? 1 : 2 }),
              ...(m.kind === 'sum' ? { isMonotonic: m.monotonic } : {}),
            },
          })),
        })),
      },
    ],
  };
}

// ---- the rows the table must hold ----------------------------------------------------------

/** A value's text (docs/parquet.md; the SDK writes an integer an int64 holds as an intValue). */
function textOf(v: Value, sdk: boolean): string | null {
  switch (v.k) {
    case 'str':
      return utf8Text(v.v);
    case 'bool':
      return String(v.v);
    case 'int':
      return v.v.toString();
    case 'dbl':
      // The SDK's numbers: any integer an int64 holds is an intValue (-0 among them).
      return sdk && Number.isInteger(v.v) && v.v >= -(2 ** 63) && v.v < 2 ** 63
        ? BigInt(v.v).toString()
        : dbl(v.v);
    case 'empty':
      return null;
    case 'words':
      return `[${v.v.map((w) => `"${w}"`).join(',')}]`;
  }
}

/**
 * Map entries: a key given twice keeps its first place and its last value. The SDK's attributes
 * are an object, whose keys JavaScript orders (integer-like keys first).
 */
function entries(kvs: Kv[], sdk: boolean): Entry[] {
  const map = new Map<string, string | null>();
  for (const [k, v] of kvs) map.set(k, textOf(v, sdk));
  const keys = sdk ? Object.keys(Object.fromEntries(map)) : [...map.keys()];
  return keys.map((k) => [k, map.get(k) as string | null]);
}

const int64Text = (v: bigint) => BigInt.asIntN(64, v).toString();
const optional = (v: number | undefined) => (v === undefined ? null : dbl(v));

/** The table's rows for a batch, in no particular order. */
export function expectedRows(exports: Export[]): Row[] {
  const rows: Row[] = [];
  for (const e of exports) {
    const resource = entries(e.attributes, e.sdk);
    const service = resource.findLast(([k]) => k === 'service.name')?.[1] ?? '';
    for (const s of e.scopes) {
      for (const m of s.metrics) {
        for (const p of m.points) {
          const v = p.value;
          const number = v.t === 'int' || v.t === 'dbl';
          rows.push({
            TimeUnix: (p.time / 1000n).toString(),
            StartTimeUnix: (p.start / 1000n).toString(),
            ServiceName: service,
            ResourceSchemaUrl: utf8Text(e.schemaUrl),
            ResourceAttributes: resource,
            ScopeName: utf8Text(s.name),
            ScopeVersion: utf8Text(s.version),
            ScopeSchemaUrl: utf8Text(s.schemaUrl),
            MetricName: utf8Text(m.name),
            MetricDescription: utf8Text(m.description),
            MetricUnit: utf8Text(m.unit),
            MetricType: m.kind,
            Attributes: entries(p.attributes, e.sdk),
            AggregationTemporality:
              m.kind === 'gauge' || m.kind === 'summary' ? 0 : m.delta ? 1 : 2,
            IsMonotonic: m.monotonic,
            Value: number ? dbl(Number(v.v)) : null,
            // A point of a DOUBLE metric that is an integer stays a double: the value type decides.
            ValueAsInt: v.t === 'int' ? v.v.toString() : null,
            Count: number ? null : int64Text(v.count),
            Sum: number ? null : optional(v.sum),
            Min: number ? null : optional(v.min),
            Max: number ? null : optional(v.max),
            BucketCounts: v.t === 'hist' ? v.counts.map(int64Text) : [],
            ExplicitBounds: v.t === 'hist' ? v.bounds.map(dbl) : [],
            Scale: v.t === 'exp' ? v.scale : null,
            ZeroCount: v.t === 'exp' ? int64Text(v.zero) : null,
            PositiveOffset: v.t === 'exp' ? v.pos[0] : null,
            PositiveBucketCounts: v.t === 'exp' ? v.pos[1].map(int64Text) : [],
            NegativeOffset: v.t === 'exp' ? v.neg[0] : null,
            NegativeBucketCounts: v.t === 'exp' ? v.neg[1].map(int64Text) : [],
            Flags: p.flags | 0, // uint32 in an INT32 column
          });
        }
      }
    }
  }
  return rows;
}
