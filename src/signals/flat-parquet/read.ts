import type { AsyncBuffer, FileMetaData, RowGroup } from 'hyparquet';
import type { OtlpObject, OtlpValue } from '../../encoding/otlp-proto-decode.js';
import {
  groupBytes,
  ownBuffer,
  type PageDecompression,
  type RowsRead,
  readColumns,
  readRows,
  rowsAt,
  schemaMetadata,
} from '../../parquet/read.js';
import { mayHold } from '../../parquet/row-group-filter.js';
import type { Row } from '../parquet-values.js';
import { expectedSchema, type FlatSpec, SCHEMA_VERSION_KEY } from './table.js';

/**
 * Reading a flat table's Parquet object (spans, log records) back into its request: its rows
 * (as hyparquet reads them: INT64 and timestamps as bigint, maps as objects, lists as arrays),
 * grouped back into resources and scopes by the signal's rowsToRequest.
 */

/** A row of a flat table as the OTLP/JSON object of its item, with its resource's and scope's keys. */
export interface RowItem {
  /** Rows of one resource have one key, and `resource` is that resource's OTLP/JSON object. */
  resourceKey: string;
  resource: OtlpObject;
  scopeKey: string;
  scope: OtlpObject;
  item: OtlpObject;
}

/**
 * A request of the items of `rows`: one resource object per distinct resource key, one scope
 * object per distinct scope key in it, each in the order of its first row. `lists`/`items` name
 * the request's fields (`resourceSpans`, `scopeSpans`, `spans`).
 */
export function groupedRequest(
  items: readonly RowItem[],
  fields: { resources: string; scopes: string; items: string },
): OtlpObject {
  const resources = new Map<string, { resource: OtlpObject; scopes: Map<string, OtlpObject> }>();
  for (const { resourceKey, resource, scopeKey, scope, item } of items) {
    let r = resources.get(resourceKey);
    if (r === undefined) {
      r = { resource, scopes: new Map() };
      resources.set(resourceKey, r);
    }
    let s = r.scopes.get(scopeKey);
    if (s === undefined) {
      s = { scope, [fields.items]: [] };
      r.scopes.set(scopeKey, s);
    }
    (s[fields.items] as OtlpValue[]).push(item);
  }
  return {
    [fields.resources]: [...resources.values()].map(({ resource, scopes }) => ({
      ...resource,
      [fields.scopes]: [...scopes.values()],
    })),
  };
}

/** A timestamp or INT64 column as the decimal string OTLP/JSON spells 64-bit integers in. */
export const int64Text = (v: unknown): string =>
  typeof v === 'bigint' || typeof v === 'number' ? String(v) : '0';

/** Elements of a list column ([] for none). */
export const elements = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * The elements of one row's parallel list columns (a span's `Events.Timestamp`, `Events.Name`,
 * `Events.Attributes`), which this package writes with one element each per item (event). A
 * file whose columns disagree is damaged or hostile: pairing them up by index would make values
 * up ('' for a missing name) or drop some without a word, so it is refused.
 */
export function parallelElements<const C extends readonly string[]>(
  row: Row,
  columns: C,
): { [K in keyof C]: unknown[] } {
  const lists = columns.map((column) => elements(row[column]));
  const lengths = lists.map((list) => list.length);
  if (lengths.some((length) => length !== lengths[0])) {
    throw new Error(disagreeingLists(columns, lengths));
  }
  return lists as { [K in keyof C]: unknown[] };
}

/** Why a row's parallel list `columns` holding `lengths` elements is refused (here and by compaction). */
export const disagreeingLists = (columns: readonly string[], lengths: readonly number[]): string =>
  `Parquet list columns ${columns.join(', ')} hold ${lengths.join(', ')} elements in one row, not as many each`;

/**
 * The rows of a stored Parquet object of the flat table `spec`, its pages decompressed within
 * `maxDecompressedBytes` in all; throws if it is not a file of that table's schema. With
 * `traceId` (lower-case hex), only that trace's rows, and only the row groups whose `TraceId`
 * statistics and bloom filter may hold it are decoded (each within the budget).
 */
export async function readFlatRows(
  bytes: Uint8Array,
  decompression: PageDecompression,
  spec: FlatSpec,
  traceId?: string,
): Promise<Row[]> {
  const file = ownBuffer(bytes);
  const metadata = schemaMetadata(
    file,
    SCHEMA_VERSION_KEY,
    expectedSchema(spec),
    decompression.maxDecompressedBytes,
  );
  if (traceId === undefined) return (await readRows({ file, metadata }, decompression)).rows;
  const rows: Row[] = [];
  const range = async (start: number, end: number) => bytes.subarray(start, end);
  let rowStart = 0;
  for (const [index, group] of metadata.row_groups.entries()) {
    const rowEnd = rowStart + Number(group.num_rows);
    if (await mayHold(metadata, index, 'TraceId', traceId, range)) {
      const read = await readTraceRows(
        { file, stored: { bytes, start: 0 }, metadata, group: index, rowStart, rowEnd },
        decompression,
        traceId,
      );
      rows.push(...read.rows);
    }
    rowStart = rowEnd;
  }
  return rows;
}

/**
 * The rows of trace `traceId` (lower-case hex) in row group `group` (rows [rowStart, rowEnd) of
 * the file): its `TraceId` column first; then, if the trace is there, the group's columns read
 * flat (each page decoded once) and only the trace's rows made, not the group's thousands of
 * others (each an object of maps and lists). `stored`: bytes of the file that hold the group,
 * from `start` in it (the whole file, or the group's bytes read in parts), read in place.
 */
export async function readTraceRows(
  read: {
    file: AsyncBuffer;
    stored: { bytes: Uint8Array; start: number };
    metadata: FileMetaData;
    group: number;
    rowStart: number;
    rowEnd: number;
  },
  decompression: PageDecompression,
  traceId: string,
): Promise<RowsRead> {
  const ids = await readRows({ ...read, columns: ['TraceId'] }, decompression);
  const indices: number[] = [];
  for (let i = 0; i < ids.rows.length; i++) {
    if (ofTrace(ids.rows[i] as Row, traceId)) indices.push(i);
  }
  if (indices.length === 0) return { rows: [], rawBytes: ids.rawBytes };
  const { metadata, group } = read;
  const { start, end } = groupBytes(metadata.row_groups[group] as RowGroup, read.file.byteLength);
  const { stored } = read;
  if (start < stored.start || end > stored.start + stored.bytes.length) {
    throw new Error('a Parquet row group outside the bytes read for it');
  }
  const bytes = stored.bytes.subarray(start - stored.start, end - stored.start);
  const rows = read.rowEnd - read.rowStart;
  // One budget for the group: what the ids took is not decompressed again.
  const left = {
    ...decompression,
    maxDecompressedBytes: decompression.maxDecompressedBytes - ids.rawBytes,
  };
  const columns = readColumns({ metadata, group, rows, bytes, start }, left);
  return { rows: rowsAt(metadata, columns, indices), rawBytes: ids.rawBytes + columns.rawBytes };
}

/** The row's `TraceId` is `traceId` (lower-case hex), in either case. */
export const ofTrace = (row: Row, traceId: string): boolean =>
  typeof row.TraceId === 'string' && row.TraceId.toLowerCase() === traceId;
