import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import { appendRequest } from '../signals/metrics/parquet/append-otlp.js';
import { ColumnStore } from '../signals/metrics/parquet/column-store.js';
import { METRICS_TABLE } from '../signals/metrics/parquet/file-writer.js';
import { plan } from '../signals/metrics/parquet/plan.js';
import type { SealedColumns } from '../signals/metrics/parquet/sealed.js';
import { FieldValueError } from '../signals/plain-values.js';
import { appendColumns } from './append-columns.js';
import { countPoints } from './points.js';
import { decodeSealed, encodeSealed, SealedRows } from './sealed-rows.js';
import { type CompactionRows, DamagedPartError, storeBuilders } from './signal-rows.js';
import { compactionOrder, compareRows, SortKeys } from './sort-order.js';

/**
 * The metrics' rows for compaction: one data point a row, in the order of sort-order.ts,
 * appended from OTLP requests (append-otlp.ts) and Parquet row groups (append-columns.ts).
 */

/** The metrics' table, its rows in the compaction order (the exporter's files keep theirs). */
export const COMPACTION_TABLE = {
  ...METRICS_TABLE,
  plan: (s: SealedColumns) => ({ ...plan(s), order: compactionOrder(s) }),
};

/**
 * A request's data points appended to `store`; a field holding what it cannot (FieldValueError:
 * a scale of 2.5, a count of 2^64) makes the request a damaged part (its input skipped, kept and
 * recorded), never a wrapped or cut value.
 */
function appendOtlp(store: ColumnStore, request: OtlpObject): number {
  try {
    return appendRequest(store, request);
  } catch (error) {
    if (error instanceof FieldValueError) throw new DamagedPartError(error.message);
    throw error;
  }
}

export const METRICS_ROWS: CompactionRows<SealedColumns, SortKeys> = {
  signal: 'metrics',
  countRequest: countPoints,
  builders() {
    const store = new ColumnStore();
    return storeBuilders(store, (part) =>
      'columns' in part ? appendColumns(store, part.columns) : appendOtlp(store, part.request),
    );
  },
  table: COMPACTION_TABLE as CompactionRows<SealedColumns, SortKeys>['table'],
  writerOptions: {},
  order: (s) => compactionOrder(s),
  copier: (rows) => new SealedRows(rows),
  encode: encodeSealed,
  decode: decodeSealed,
  keys: (s) => new SortKeys(s),
  compare: compareRows,
  // 20-25 bytes a point sorted into large files (merge.ts).
  firstGuessRowBytes: 25,
  copiedRowBytes: 104,
};
