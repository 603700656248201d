import type { ColumnsRead } from '../parquet/read.js';
import type { ColumnStore } from '../signals/metrics/parquet/column-store.js';
import { LISTS, METRIC_TYPES, TYPE } from '../signals/metrics/parquet/sealed.js';
import { keyTexts, type MapValue, sameMap } from './map-values.js';

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

/** Appends every row of `read` to `store`; returns how many. Throws for a missing column. */
export function appendColumns(store: ColumnStore, read: ColumnsRead): number {
  const column = (name: string): ArrayLike<unknown> => {
    const c = read.columns.get(name);
    if (c === undefined) throw new Error(`the Parquet input has no column ${name}`);
    return c;
  };
  const time = column('TimeUnix');
  const start = column('StartTimeUnix');
  const schemaUrl = column('ResourceSchemaUrl');
  const resourceAttributes = column('ResourceAttributes') as ArrayLike<MapValue>;
  const metricColumns = METRIC_COLUMNS.map(column);
  const attributes = column('Attributes') as ArrayLike<MapValue>;
  const value = column('Value');
  const valueAsInt = column('ValueAsInt');
  const count = column('Count');
  const sum = column('Sum');
  const min = column('Min');
  const max = column('Max');
  const bucketCounts = column('BucketCounts');
  const bounds = column('ExplicitBounds');
  const scale = column('Scale');
  const zeroCount = column('ZeroCount');
  const positiveOffset = column('PositiveOffset');
  const positiveCounts = column('PositiveBucketCounts');
  const negativeOffset = column('NegativeOffset');
  const negativeCounts = column('NegativeBucketCounts');
  const flags = column('Flags');

  let resource = -1;
  let metric = -1;
  let type: number = TYPE.GAUGE;
  let set = -1;
  let boundsId = -1;
  let previousBounds: unknown;
  for (let row = 0; row < read.rows; row++) {
    const prev = row - 1;
    if (
      resource < 0 ||
      schemaUrl[row] !== schemaUrl[prev] ||
      !sameMap(resourceAttributes[row], resourceAttributes[prev])
    ) {
      const { keys, texts } = keyTexts(resourceAttributes[row]);
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
    if (set < 0 || !sameMap(attributes[row], attributes[prev])) {
      const { keys, texts } = keyTexts(attributes[row]);
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
      const b = bounds[row];
      if (boundsId < 0 || !sameList(b, previousBounds)) {
        boundsId = store.boundsId(
          Array.isArray(b) ? b.map((x) => (typeof x === 'number' ? x : 0)) : [],
        );
        previousBounds = b;
      }
      store.setBounds(r, boundsId);
      counts(store, r, LISTS.BUCKETS, bucketCounts[row]);
    } else if (type === TYPE.EXPONENTIAL_HISTOGRAM) {
      const n = (v: unknown) => (typeof v === 'number' ? v : 0);
      store.setExponential(
        r,
        n(scale[row]),
        int64(zeroCount[row]) ?? 0,
        n(positiveOffset[row]),
        n(negativeOffset[row]),
      );
      counts(store, r, LISTS.POSITIVE, positiveCounts[row]);
      counts(store, r, LISTS.NEGATIVE, negativeCounts[row]);
    }
  }
  return read.rows;
}

function sameList(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

function counts(store: ColumnStore, r: number, which: number, list: unknown): void {
  if (!Array.isArray(list) || list.length === 0) return;
  const at = store.reserveCounts(r, which, list.length);
  for (let i = 0; i < list.length; i++) store.setCount(at + i, int64(list[i]) ?? 0);
}
