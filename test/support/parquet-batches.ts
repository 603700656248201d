import fc from 'fast-check';
import { text } from './metrics-arbitraries.js';
import { utf8Text } from './parquet-expected.js';

/**
 * Batches for the Parquet writer's property test, generated as a model first: a batch is the
 * list of exports the builders get, each the SDK's ResourceMetrics or a decoded OTLP request
 * (parquet-batch-inputs.ts makes them), and the test works out the rows they must become from the
 * same model (parquet-expected.ts).
 */

export type Value =
  | { k: 'str'; v: string }
  | { k: 'bool'; v: boolean }
  | { k: 'int'; v: bigint }
  | { k: 'dbl'; v: number }
  | { k: 'empty' }
  | { k: 'words'; v: string[] };
export type Kv = [string, Value];
export type Dist = { count: bigint; sum?: number; min?: number; max?: number };
export type Point = {
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
export type Kind = 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary';
export type Metric = {
  name: string;
  description: string;
  unit: string;
  kind: Kind;
  int: boolean;
  delta: boolean;
  monotonic: boolean;
  points: Point[];
};
export type Scope = { name: string; version: string; schemaUrl: string; metrics: Metric[] };
export type Export = { sdk: boolean; attributes: Kv[]; schemaUrl: string; scopes: Scope[] };

const TWO_63 = 2n ** 63n;
/**
 * Keys: valid Unicode (two keys with different lone surrogates would be one key in UTF-8), and
 * none a reader cannot give back as an object key (hyparquet returns maps as objects).
 */
export const key = text.filter((k) => k !== '__proto__' && utf8Text(k) === k);
const word = fc.stringMatching(/^[a-z]{0,6}$/);
const nonBmp = fc.constantFrom('😀', '指', '👩🏽‍💻', '\u{10ffff}', '\ud800');
export const str = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: nonBmp });
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
export const anyDouble = fc.oneof(
  special,
  fc.double(),
  fc.integer({ min: -1000, max: 1000 }).map((i) => i / 8),
);
const int64 = fc.oneof(
  fc.bigInt({ min: -TWO_63, max: TWO_63 - 1n }),
  fc.bigInt({ min: -1000n, max: 1000n }),
);
/** Integers the SDK can hold exactly (its values are JavaScript numbers). */
export const sdkInt = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(BigInt),
  fc.constantFrom(2n ** 60n, -(2n ** 63n), 2n ** 53n, 9007199254740991n),
);
const count = (sdk: boolean) =>
  sdk ? fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }) : fc.bigInt({ min: 0n, max: TWO_63 - 1n });

/** A bucket count as a long list holds them: small and repeating, or at an edge of the writer's. */
const bucketCount = (sdk: boolean) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: 700 }).map(BigInt) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        65_535n,
        65_536n,
        2n ** 32n - 1n,
        2n ** 32n,
        2n ** 53n - 1n,
        ...(sdk ? [] : [2n ** 53n, 2n ** 53n + 1n, TWO_63 - 1n]),
      ),
    },
  );

const value = (sdk: boolean): fc.Arbitrary<Value> =>
  fc.oneof(
    { weight: 4, arbitrary: str.map((v) => ({ k: 'str' as const, v })) },
    fc.boolean().map((v) => ({ k: 'bool' as const, v })),
    (sdk ? sdkInt : int64).map((v) => ({ k: 'int' as const, v })),
    anyDouble.map((v) => ({ k: 'dbl' as const, v })),
    fc.constant({ k: 'empty' as const }),
    fc.array(word, { maxLength: 3 }).map((v) => ({ k: 'words' as const, v })),
  );

export const attributeSet = (sdk: boolean): fc.Arbitrary<Kv[]> =>
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
  const counts = fc.oneof(
    fc.array(count(sdk), { maxLength: 6 }),
    // Long lists of repeating counts: a dictionary of 8- or 16-bit indices, or PLAIN beside
    // values a double does not hold exactly.
    fc.array(bucketCount(sdk), { maxLength: 400, size: 'max' }),
  );
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

/** A resource's attributes: a random set, most often with a `service.name` string. */
export const resourceAttributes = (sdk: boolean): fc.Arbitrary<Kv[]> =>
  fc
    .tuple(attributeSet(sdk), fc.option(str))
    .map(([kvs, service]) =>
      service === null
        ? kvs
        : [
            ...kvs.filter(([k]) => !sdk || k !== 'service.name'),
            ['service.name', { k: 'str', v: service }] as Kv,
          ],
    );

const exportOf = (sdk: boolean): fc.Arbitrary<Export> =>
  fc.record({
    sdk: fc.constant(sdk),
    attributes: resourceAttributes(sdk),
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
