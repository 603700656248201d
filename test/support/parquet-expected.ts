import type { Export, Kv, Value } from './parquet-batches.js';

/**
 * The rows the Parquet table must hold for a batch of parquet-batches.ts, worked out from the
 * model by the rules docs/parquet.md states (never by the code under test), spelled canonically:
 * 64-bit integers and microseconds as decimal strings, doubles as `dbl()` spells them, maps as
 * [key, value] pairs.
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
export function attributeEntries(kvs: Kv[], sdk: boolean): Entry[] {
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
    const resource = attributeEntries(e.attributes, e.sdk);
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
            Attributes: attributeEntries(p.attributes, e.sdk),
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
