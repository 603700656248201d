import type { OtlpObject } from '../../../encoding/otlp-proto-decode.js';
import type { Row } from '../../parquet-values.js';
import { rowsToRequest } from './rows-to-request.js';
import {
  LIST_STRIDE,
  LISTS,
  METRIC,
  METRIC_STRIDE,
  METRIC_TYPES,
  PRESENT,
  RESOURCE,
  RESOURCE_STRIDE,
  type SealedColumns,
  TYPE,
} from './sealed.js';

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** A 64-bit entry of Int32 pairs as a bigint. */
const int64 = (pairs: Int32Array, i: number): bigint =>
  (BigInt(pairs[2 * i + 1] as number) << 32n) | BigInt((pairs[2 * i] as number) >>> 0);

/**
 * The sealed columns' points as one ExportMetricsServiceRequest (OTLP/JSON object shape), exactly
 * as a reader of the Parquet file gets them (parquetToRequest): what the exporter stores when the
 * worker cannot make the file, and what tests compare with.
 */
export function sealedColumnsToRequest(s: SealedColumns): OtlpObject {
  const strings = Array.from({ length: s.stringCount }, (_, i) =>
    utf8.decode(s.strings.subarray(s.stringOffsets[i], s.stringOffsets[i + 1])),
  );
  const str = (id: number | undefined) => strings[id as number] as string;
  const entries = (set: number) => {
    const out: { key: string; value: string | null }[] = [];
    for (let e = s.setOffsets[set] as number; e < (s.setOffsets[set + 1] as number); e++) {
      const value = s.setEntries[2 * e + 1] as number;
      out.push({ key: str(s.setEntries[2 * e]), value: value < 0 ? null : str(value) });
    }
    return out;
  };
  const rows: Row[] = [];
  let count = 0;
  for (let r = 0; r < s.rows; r++) {
    const res = (s.resource[r] as number) * RESOURCE_STRIDE;
    const m = (s.metric[r] as number) * METRIC_STRIDE;
    const slot = (i: number) => s.metrics[m + i] as number;
    const type = slot(METRIC.TYPE);
    const present = s.present[r] as number;
    const number = type === TYPE.GAUGE || type === TYPE.SUM;
    const exponential = type === TYPE.EXPONENTIAL_HISTOGRAM;
    const list = (which: number) => {
      const length = s.listLengths[LIST_STRIDE * r + which] as number;
      const out = Array.from({ length }, (_, i) => int64(s.counts, count + i));
      count += length;
      return out;
    };
    const has = (bit: number) => (present & bit) !== 0;
    const buckets = list(LISTS.BUCKETS);
    const positive = list(LISTS.POSITIVE);
    const negative = list(LISTS.NEGATIVE);
    const bounds = s.bounds[r] as number;
    rows.push({
      ResourceSchemaUrl: str(s.resources[res + RESOURCE.SCHEMA_URL]),
      ResourceAttributes: entries(s.resources[res + RESOURCE.ATTRIBUTES] as number),
      ScopeName: str(slot(METRIC.SCOPE_NAME)),
      ScopeVersion: str(slot(METRIC.SCOPE_VERSION)),
      ScopeSchemaUrl: str(slot(METRIC.SCOPE_SCHEMA_URL)),
      MetricName: str(slot(METRIC.NAME)),
      MetricDescription: str(slot(METRIC.DESCRIPTION)),
      MetricUnit: str(slot(METRIC.UNIT)),
      MetricType: (METRIC_TYPES[type] as readonly [string, string])[1],
      AggregationTemporality: slot(METRIC.TEMPORALITY),
      IsMonotonic: slot(METRIC.MONOTONIC) === 1,
      Attributes: entries(s.attributes[r] as number),
      TimeUnix: int64(s.time, r),
      StartTimeUnix: int64(s.start, r),
      Value: number && has(PRESENT.VALUE) ? s.double[r] : null,
      ValueAsInt: number && has(PRESENT.INTEGER) ? int64(s.integer, r) : null,
      Count: !number && has(PRESENT.INTEGER) ? int64(s.integer, r) : null,
      Sum: has(PRESENT.SUM) ? s.double[r] : null,
      Min: has(PRESENT.MIN) ? s.min[r] : null,
      Max: has(PRESENT.MAX) ? s.max[r] : null,
      BucketCounts: buckets,
      ExplicitBounds: Array.from(
        s.boundsValues.subarray(s.boundsOffsets[bounds], s.boundsOffsets[bounds + 1]),
      ),
      Scale: exponential ? s.scale[r] : null,
      ZeroCount: exponential ? int64(s.zeroCount, r) : null,
      PositiveOffset: exponential ? s.positiveOffset[r] : null,
      PositiveBucketCounts: positive,
      NegativeOffset: exponential ? s.negativeOffset[r] : null,
      NegativeBucketCounts: negative,
      Flags: s.flags[r] as number,
    });
  }
  return rowsToRequest(rows);
}
