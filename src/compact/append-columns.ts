import { type FlatRepeated, Utf8Values } from '../parquet/flat-columns.js';
import type { ColumnsRead } from '../parquet/read.js';
import type { ColumnStore } from '../signals/metrics/parquet/column-store.js';
import { LISTS, METRIC_TYPES, TYPE } from '../signals/metrics/parquet/sealed.js';
import { keyTexts } from './map-values.js';

/**
 * A row group of a Parquet input (this package's schema), appended to the column builders
 * straight from its columns: what reading it as an OTLP request (rows-to-request.ts) and
 * appending that (append-otlp.ts) stores, without an object a row on the way. Every value lands
 * as the request path lands it (the same texts, integers, missing values and defaults), so an
 * output does not depend on the path. Consecutive rows that share a resource, a metric or an
 * attribute set (most do: files are sorted by series) are interned once.
 */

/** MetricType in the table → its type code; an unknown one is read as a gauge (as OTLP is). */
const TYPE_CODE: ReadonlyMap<unknown, number> = new Map(
  METRIC_TYPES.map(([, name], code) => [name, code]),
);

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/** A bigint (or number) as a number while exact, else the bigint: what otlpInt64 gives. */
function int64(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint') {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : v;
  }
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  return undefined;
}

/** Microseconds, 0 below zero (the request path cannot spell a negative time). */
function micros(v: unknown): number | bigint {
  if (typeof v !== 'bigint' || v < 0n) return 0;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}

const METRIC_COLUMNS = [
  'ScopeName',
  'ScopeVersion',
  'ScopeSchemaUrl',
  'MetricName',
  'MetricDescription',
  'MetricUnit',
  'MetricType',
  'AggregationTemporality',
  'IsMonotonic',
] as const;

/** A list or map column with its values as a reader gives them. */
type ValuesRepeated = Omit<FlatRepeated, 'values' | 'keys'> & {
  values: ArrayLike<unknown>;
  keys: ArrayLike<unknown> | undefined;
};

/** Appends every row of `read` to `store`; returns how many. Throws for a missing column. */
export function appendColumns(store: ColumnStore, read: ColumnsRead): number {
  // Metrics are read as values (not coded): never as bytes.
  const column = (name: string): ArrayLike<unknown> => {
    const c = read.columns.get(name);
    if (c === undefined) throw new Error(`the Parquet input has no column ${name}`);
    return Utf8Values.strings(c);
  };
  const flat = (name: string): ValuesRepeated => {
    const c = read.flat.get(name);
    if (c === undefined) throw new Error(`the Parquet input has no column ${name}`);
    return {
      ...c,
      values: Utf8Values.strings(c.values),
      keys: c.keys === undefined ? undefined : Utf8Values.strings(c.keys),
    };
  };
  const time = column('TimeUnix');
  const start = column('StartTimeUnix');
  const schemaUrl = column('ResourceSchemaUrl');
  const resourceAttributes = flat('ResourceAttributes');
  const metricColumns = METRIC_COLUMNS.map(column);
  const attributes = flat('Attributes');
  const value = column('Value');
  const valueAsInt = column('ValueAsInt');
  const count = column('Count');
  const sum = column('Sum');
  const min = column('Min');
  const max = column('Max');
  const bucketCounts = flat('BucketCounts');
  const bounds = flat('ExplicitBounds');
  const scale = column('Scale');
  const zeroCount = column('ZeroCount');
  const positiveOffset = column('PositiveOffset');
  const positiveCounts = flat('PositiveBucketCounts');
  const negativeOffset = column('NegativeOffset');
  const negativeCounts = flat('NegativeBucketCounts');
  const bucketHalves = halvesOf(bucketCounts);
  const positiveHalves = halvesOf(positiveCounts);
  const negativeHalves = halvesOf(negativeCounts);
  const flags = column('Flags');

  let resource = -1;
  let metric = -1;
  let type: number = TYPE.GAUGE;
  let set = -1;
  let boundsId = -1;
  let boundsRow = -1;
  for (let row = 0; row < read.rows; row++) {
    const prev = row - 1;
    if (
      resource < 0 ||
      schemaUrl[row] !== schemaUrl[prev] ||
      !sameEntries(resourceAttributes, row, prev)
    ) {
      const { keys, texts } = keyTexts(mapAt(resourceAttributes, row));
      const s = store.setId(keys, texts);
      const service = texts[keys.lastIndexOf('service.name')] ?? '';
      resource = store.resourceId([
        store.stringId(service),
        store.stringId(text(schemaUrl[row])),
        s,
      ]);
    }
    if (metric < 0 || metricColumns.some((c) => c[row] !== c[prev])) {
      type = TYPE_CODE.get(metricColumns[6]?.[row]) ?? TYPE.GAUGE;
      const cumulative =
        type === TYPE.SUM || type === TYPE.HISTOGRAM || type === TYPE.EXPONENTIAL_HISTOGRAM;
      const temporality = Number(metricColumns[7]?.[row] ?? 0);
      metric = store.metricId([
        ...metricColumns.slice(0, 6).map((c) => store.stringId(text(c[row]))),
        type,
        cumulative && Number.isFinite(temporality) ? temporality : 0,
        type === TYPE.SUM && metricColumns[8]?.[row] === true ? 1 : 0,
      ]);
    }
    if (set < 0 || !sameEntries(attributes, row, prev)) {
      const { keys, texts } = keyTexts(mapAt(attributes, row));
      set = store.setId(keys, texts);
    }
    const f = flags[row];
    const r = store.addRow(
      resource,
      metric,
      set,
      micros(time[row]),
      micros(start[row]),
      typeof f === 'number' ? f >>> 0 : 0,
    );
    if (type === TYPE.GAUGE || type === TYPE.SUM) {
      const integer = int64(valueAsInt[row]);
      if (integer !== undefined) store.setValue(r, Number(integer), integer);
      else {
        const v = value[row];
        if (typeof v === 'number') store.setValue(r, v, undefined);
      }
    } else {
      const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
      store.setDistribution(r, int64(count[row]) ?? 0, num(sum[row]), num(min[row]), num(max[row]));
    }
    if (type === TYPE.HISTOGRAM) {
      if (boundsId < 0 || !sameEntries(bounds, row, boundsRow)) {
        const list: number[] = [];
        for (let i = bounds.offsets[row] as number; i < (bounds.offsets[row + 1] as number); i++) {
          const x = bounds.values[i];
          list.push(typeof x === 'number' ? x : 0);
        }
        boundsId = store.boundsId(list);
        boundsRow = row;
      }
      store.setBounds(r, boundsId);
      counts(store, r, LISTS.BUCKETS, bucketCounts, bucketHalves, row);
    } else if (type === TYPE.EXPONENTIAL_HISTOGRAM) {
      const n = (v: unknown) => (typeof v === 'number' ? v : 0);
      store.setExponential(
        r,
        n(scale[row]),
        int64(zeroCount[row]) ?? 0,
        n(positiveOffset[row]),
        n(negativeOffset[row]),
      );
      counts(store, r, LISTS.POSITIVE, positiveCounts, positiveHalves, row);
      counts(store, r, LISTS.NEGATIVE, negativeCounts, negativeHalves, row);
    }
  }
  return read.rows;
}

/**
 * Rows `a` and `b` of a list or map hold the same entries (strings from one dictionary compare
 * fast). Row -1 holds none.
 */
function sameEntries(c: ValuesRepeated, a: number, b: number): boolean {
  if (b < 0) return false;
  const { offsets, values, keys } = c;
  const start = offsets[a] as number;
  const other = offsets[b] as number;
  const n = (offsets[a + 1] as number) - start;
  if (n !== (offsets[b + 1] as number) - other) return false;
  for (let i = 0; i < n; i++) {
    if (!Object.is(values[start + i], values[other + i])) return false;
    if (keys !== undefined && keys[start + i] !== keys[other + i]) return false;
  }
  return true;
}

/**
 * Row `row` of a map as an object of its entries (a later key wins, as JSON.parse has it), for
 * what reads maps so. Without a prototype: a key "__proto__" is a key like any other.
 */
function mapAt(c: ValuesRepeated, row: number): Record<string, unknown> {
  const map: Record<string, unknown> = Object.create(null);
  const keys = c.keys ?? [];
  for (let i = c.offsets[row] as number; i < (c.offsets[row + 1] as number); i++) {
    map[keys[i] as string] = c.values[i] ?? null;
  }
  return map;
}

/**
 * A list of counts' 32-bit halves, when its values are a BigInt64Array: read from them while a
 * count is a safe integer, as reading the BigInt64Array would make a bigint of every one.
 */
function halvesOf(c: ValuesRepeated): Int32Array | undefined {
  const { values } = c;
  return values instanceof BigInt64Array
    ? new Int32Array(values.buffer, values.byteOffset, values.length * 2)
    : undefined;
}

function counts(
  store: ColumnStore,
  r: number,
  which: number,
  c: ValuesRepeated,
  halves: Int32Array | undefined,
  row: number,
): void {
  const start = c.offsets[row] as number;
  const n = (c.offsets[row + 1] as number) - start;
  if (n === 0) return;
  const at = store.reserveCounts(r, which, n);
  const { values } = c;
  for (let i = 0; i < n; i++) {
    const hi = halves?.[2 * (start + i) + HIGH];
    store.setCount(
      at + i,
      hi !== undefined && hi > -0x200000 && hi < 0x200000
        ? hi * 4294967296 + ((halves?.[2 * (start + i) + LOW] as number) >>> 0)
        : (int64(values[start + i]) ?? 0),
    );
  }
}

/** Where a 64-bit integer's low and high 32-bit halves are, on this machine. */
const LOW = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;
