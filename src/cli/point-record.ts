import type {
  ExponentialBuckets,
  HistogramBuckets,
  PlainValue,
  PointRow,
} from '../signals/metrics/rows.js';
import { valueText as plainText } from '../signals/plain-values.js';
import type { CsvFields } from './format.js';
import { printable } from './terminal-text.js';

/** One data point as `otel-s3 points` prints it: the reader's row (jsonl: this object). */
export type PointRecord = PointRow;

export const CSV_COLUMNS = [
  'time',
  'start',
  'resource',
  'scope',
  'metric',
  'type',
  'unit',
  'temporality',
  'attributes',
  'value',
  'count',
  'sum',
  'min',
  'max',
  'buckets',
] as const;

/** A CSV line: objects (resource, attributes, buckets) as JSON text, absent values empty. */
export function csvRow(record: PointRecord, fields: CsvFields): string {
  return CSV_COLUMNS.map((column) => {
    const v = record[column];
    if (v === undefined) return '';
    if (typeof v === 'string') return fields.text(v);
    if (typeof v === 'object') return fields.plain(JSON.stringify(v));
    return fields.plain(String(v));
  }).join(',');
}

export const TABLE_HEADER = ['time (UTC)', 'resource', 'metric', 'type', 'attributes', 'value'];

/** Table cells: a short resource (its service.name), `k=v` attributes, value or buckets. */
export function tableCells(record: PointRecord): string[] {
  const service = record.resource['service.name'];
  const cells = [
    record.time === '' ? '' : `${record.time.slice(0, 10)} ${record.time.slice(11, 23)}`,
    typeof service === 'string' ? service : keyValues(record.resource),
    record.metric,
    record.type,
    keyValues(record.attributes),
    valueText(record),
  ];
  // Names and values come from whoever writes to the bucket: a terminal shows, never obeys, them.
  return cells.map(printable);
}

/** `k=v k2=v2`, values as the Parquet tables store them: alike from every format. */
function keyValues(values: Record<string, PlainValue>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${plainText(v)}`)
    .join(' ');
}

/** Six significant digits for the table (CSV and JSON lines keep every digit). */
const readable = (n: number) =>
  Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6)));

/**
 * Both bounds of a bucket, with as many significant digits as it takes to tell them apart,
 * rounded outwards so the printed interval always contains the bucket.
 */
function bounds(low: number, high: number): [string, string] {
  for (let digits = 4; digits < 16; digits++) {
    const a = roundTo(low, digits, Math.floor);
    const b = roundTo(high, digits, Math.ceil);
    if (a !== b) return [a, b];
  }
  return [String(low), String(high)];
}

function roundTo(n: number, digits: number, round: (x: number) => number): string {
  if (n === 0 || !Number.isFinite(n)) return String(n);
  const step = 10 ** (Math.floor(Math.log10(Math.abs(n))) - digits + 1);
  // toPrecision strips the float noise of the multiplication.
  return String(Number((round(n / step) * step).toPrecision(digits)));
}

/** The value, or count/sum/min/max and the non-empty buckets as `(low,high]:count`. */
export function valueText(record: PointRecord): string {
  if (record.value !== undefined) return readable(record.value);
  const stats = (['count', 'sum', 'min', 'max'] as const)
    .filter((k) => record[k] !== undefined)
    .map((k) => `${k}=${readable(record[k] as number)}`);
  const buckets = record.buckets === undefined ? [] : bucketTexts(record.buckets);
  return buckets.length === 0 ? stats.join(' ') : `${stats.join(' ')} | ${buckets.join(' ')}`;
}

function bucketTexts(buckets: HistogramBuckets | ExponentialBuckets): string[] {
  const out: string[] = [];
  if ('explicitBounds' in buckets) {
    const { explicitBounds: limits, bucketCounts: counts } = buckets;
    counts.forEach((count, i) => {
      if (count === 0) return;
      // Bounds are chosen by people: print them exactly.
      const upper = limits[i];
      const lower = limits[limits.length - 1];
      if (upper !== undefined) out.push(`≤${upper}:${count}`);
      else if (lower !== undefined) out.push(`>${lower}:${count}`);
      else out.push(`all:${count}`);
    });
    return out;
  }
  // Bucket index i of scale s holds values in (base^i, base^(i+1)], base = 2^(2^-s).
  const bound = (i: number) => 2 ** (i / 2 ** buckets.scale);
  const { negative, positive } = buckets;
  for (let j = negative.bucketCounts.length - 1; j >= 0; j--) {
    const count = negative.bucketCounts[j] ?? 0;
    if (count === 0) continue;
    const i = negative.offset + j;
    const [low, high] = bounds(bound(i), bound(i + 1));
    out.push(`[-${high},-${low}):${count}`);
  }
  if (buckets.zeroCount > 0) out.push(`0:${buckets.zeroCount}`);
  positive.bucketCounts.forEach((count, j) => {
    if (count === 0) return;
    const i = positive.offset + j;
    const [low, high] = bounds(bound(i), bound(i + 1));
    out.push(`(${low},${high}]:${count}`);
  });
  return out;
}
