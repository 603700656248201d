import {
  METRIC,
  METRIC_STRIDE,
  RESOURCE,
  RESOURCE_STRIDE,
  type SealedColumns,
} from '../signals/metrics/parquet/sealed.js';

/**
 * The compactor's row order: one sort key that is the same in every batch, so that batches
 * sorted on their own can be merged (spill.ts) and an output file is one sorted run. Rows are
 * ordered by
 *
 *   ServiceName, MetricName, the rest of the resource (its attributes as sorted key=value text,
 *   its schema URL), the rest of the metric (scope name, version and schema URL, description,
 *   unit, type, temporality, monotonicity), the point's attributes as sorted key=value text,
 *   TimeUnix, StartTimeUnix.
 *
 * Texts compare by code point (the order of their UTF-8 bytes, which is what Parquet statistics
 * and engines use). Rows equal in all of these (the same point twice) may come in any order.
 * The exporter's own files keep their order (row-order.js: ids by first sight within a batch).
 */

/** Code point order of two strings (UTF-16 order differs for surrogates against U+E000–U+FFFF). */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) return codePointRank(x) - codePointRank(y);
      return x - y;
    }
  }
  return a.length - b.length;
}

/** Surrogates (astral code points) after U+E000–U+FFFF. */
const codePointRank = (unit: number) =>
  unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit;

const textsOf = new WeakMap<SealedColumns, string[]>();

/** The texts of a sealed batch's strings (decoded once a batch). */
export function stringTexts(s: SealedColumns): string[] {
  const known = textsOf.get(s);
  if (known !== undefined) return known;
  const bytes = Buffer.from(s.strings.buffer, s.strings.byteOffset, s.strings.byteLength);
  const texts = new Array<string>(s.stringCount);
  for (let i = 0; i < s.stringCount; i++) {
    texts[i] = bytes.toString('utf8', s.stringOffsets[i] as number, s.stringOffsets[i + 1]);
  }
  textsOf.set(s, texts);
  return texts;
}

/** Separators of the key texts: below every character an attribute text holds in practice. */
const ENTRY_END = '\u0000';
const KEY_END = '\u0001';
const NO_VALUE = '\u0002';

/**
 * The content keys of a batch's tables, comparable with another batch's: per resource its
 * ServiceName and the rest, per metric its MetricName and the rest, per attribute set its text.
 */
export class SortKeys {
  readonly service: string[];
  readonly resourceRest: string[];
  readonly name: string[];
  readonly metricRest: string[];
  readonly set: string[];

  constructor(
    readonly s: SealedColumns,
    texts: string[] = stringTexts(s),
  ) {
    this.set = new Array<string>(s.setCount);
    for (let set = 0; set < s.setCount; set++) this.set[set] = setText(s, texts, set);
    this.service = new Array<string>(s.resourceCount);
    this.resourceRest = new Array<string>(s.resourceCount);
    for (let r = 0; r < s.resourceCount; r++) {
      const at = r * RESOURCE_STRIDE;
      this.service[r] = texts[s.resources[at + RESOURCE.SERVICE] as number] as string;
      this.resourceRest[r] =
        this.set[s.resources[at + RESOURCE.ATTRIBUTES] as number] +
        KEY_END +
        texts[s.resources[at + RESOURCE.SCHEMA_URL] as number];
    }
    this.name = new Array<string>(s.metricCount);
    this.metricRest = new Array<string>(s.metricCount);
    for (let m = 0; m < s.metricCount; m++) {
      const at = m * METRIC_STRIDE;
      const text = (slot: number) => texts[s.metrics[at + slot] as number] as string;
      this.name[m] = text(METRIC.NAME);
      this.metricRest[m] = [
        text(METRIC.SCOPE_NAME),
        text(METRIC.SCOPE_VERSION),
        text(METRIC.SCOPE_SCHEMA_URL),
        text(METRIC.DESCRIPTION),
        text(METRIC.UNIT),
        s.metrics[at + METRIC.TYPE],
        s.metrics[at + METRIC.TEMPORALITY],
        s.metrics[at + METRIC.MONOTONIC],
      ].join(KEY_END);
    }
  }
}

/** An attribute set as text: its entries sorted by key (then value), `key␁value␀` each. */
function setText(s: SealedColumns, texts: string[], set: number): string {
  const from = s.setOffsets[set] as number;
  const to = s.setOffsets[set + 1] as number;
  if (to === from) return '';
  const entries: string[] = [];
  for (let e = from; e < to; e++) {
    const value = s.setEntries[2 * e + 1] as number;
    entries.push(
      texts[s.setEntries[2 * e] as number] + KEY_END + (value < 0 ? NO_VALUE : texts[value]),
    );
  }
  if (entries.length > 1) entries.sort(compareText);
  return entries.join(ENTRY_END) + ENTRY_END;
}

/** Signed compare of two int64s held as (low, high) Int32 slot pairs. */
export function compareInt64At(a: Int32Array, i: number, b: Int32Array, j: number): number {
  const ah = a[2 * i + 1] as number;
  const bh = b[2 * j + 1] as number;
  if (ah !== bh) return ah - bh;
  return ((a[2 * i] as number) >>> 0) - ((b[2 * j] as number) >>> 0);
}

/** Row `i` of keys `a` against row `j` of keys `b`, in the compaction order. */
export function compareRows(a: SortKeys, i: number, b: SortKeys, j: number): number {
  const ra = a.s.resource[i] as number;
  const rb = b.s.resource[j] as number;
  const ma = a.s.metric[i] as number;
  const mb = b.s.metric[j] as number;
  return (
    compareText(a.service[ra] as string, b.service[rb] as string) ||
    compareText(a.name[ma] as string, b.name[mb] as string) ||
    compareText(a.resourceRest[ra] as string, b.resourceRest[rb] as string) ||
    compareText(a.metricRest[ma] as string, b.metricRest[mb] as string) ||
    compareText(
      a.set[a.s.attributes[i] as number] as string,
      b.set[b.s.attributes[j] as number] as string,
    ) ||
    compareInt64At(a.s.time, i, b.s.time, j) ||
    compareInt64At(a.s.start, i, b.s.start, j)
  );
}

/** Dense ranks of `n` items by `compare`: equal items share a rank. */
function denseRanks(n: number, compare: (x: number, y: number) => number): Int32Array {
  const items = Array.from({ length: n }, (_, i) => i).sort(compare);
  const rank = new Int32Array(n);
  let r = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0 && compare(items[i - 1] as number, items[i] as number) !== 0) r++;
    rank[items[i] as number] = r;
  }
  return rank;
}

/**
 * Dense ranks of `n` items by their leading text alone (ServiceName, MetricName) and by it then
 * the rest of their text (the whole resource or metric).
 */
function leadAndWholeRanks(
  n: number,
  lead: readonly string[],
  rest: readonly string[],
): [Int32Array, Int32Array] {
  const byLead = (x: number, y: number) => compareText(lead[x] as string, lead[y] as string);
  return [
    denseRanks(n, byLead),
    denseRanks(n, (x, y) => byLead(x, y) || compareText(rest[x] as string, rest[y] as string)),
  ];
}

/** Rows by key[row] (values below domain), keeping the order of `rows` among equals. */
function countingSort(
  rows: Uint32Array<ArrayBuffer>,
  key: (row: number) => number,
  domain: number,
): Uint32Array<ArrayBuffer> {
  if (domain <= 1) return rows;
  const starts = new Uint32Array(domain + 1);
  for (let i = 0; i < rows.length; i++) {
    const k = key(rows[i] as number) + 1;
    starts[k] = (starts[k] as number) + 1;
  }
  for (let k = 1; k <= domain; k++) starts[k] = (starts[k] as number) + (starts[k - 1] as number);
  const out = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as number;
    const k = key(row);
    out[starts[k] as number] = row;
    starts[k] = (starts[k] as number) + 1;
  }
  return out;
}

/** The batch's rows in the compaction order. */
export function compactionOrder(s: SealedColumns, keys: SortKeys = new SortKeys(s)): Uint32Array {
  const { service, name, resourceRest, metricRest, set } = keys;
  const [serviceRank, resourceRank] = leadAndWholeRanks(s.resourceCount, service, resourceRest);
  const [nameRank, metricRank] = leadAndWholeRanks(s.metricCount, name, metricRest);
  const setRank = denseRanks(s.setCount, (x, y) => compareText(set[x] as string, set[y] as string));
  const { resource, metric, attributes } = s;
  let rows = new Uint32Array(s.rows);
  for (let i = 0; i < s.rows; i++) rows[i] = i;
  // Least significant first: attributes, metric, resource, then MetricName and ServiceName.
  rows = countingSort(rows, (r) => setRank[attributes[r] as number] as number, s.setCount);
  rows = countingSort(rows, (r) => metricRank[metric[r] as number] as number, s.metricCount);
  rows = countingSort(rows, (r) => resourceRank[resource[r] as number] as number, s.resourceCount);
  rows = countingSort(rows, (r) => nameRank[metric[r] as number] as number, s.metricCount);
  rows = countingSort(rows, (r) => serviceRank[resource[r] as number] as number, s.resourceCount);
  // Each series (equal ranks) by time, where it is not in time order already.
  const same = (a: number, b: number) =>
    resourceRank[resource[a] as number] === resourceRank[resource[b] as number] &&
    metricRank[metric[a] as number] === metricRank[metric[b] as number] &&
    setRank[attributes[a] as number] === setRank[attributes[b] as number];
  const byTime = (a: number, b: number) =>
    compareInt64At(s.time, a, s.time, b) || compareInt64At(s.start, a, s.start, b) || a - b;
  let from = 0;
  let inOrder = true;
  for (let i = 1; i <= rows.length; i++) {
    const a = rows[i - 1] as number;
    const b = rows[i];
    if (b !== undefined && same(a, b)) {
      if (inOrder && byTime(a, b) > 0) inOrder = false;
      continue;
    }
    if (!inOrder) rows.set(Array.from(rows.subarray(from, i)).sort(byTime), from);
    from = i;
    inOrder = true;
  }
  return rows;
}
