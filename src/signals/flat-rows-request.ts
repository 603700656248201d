import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { PageDecompression } from '../parquet/read.js';
import { groupedRequest, type RowItem, readFlatRows } from './flat-parquet/read.js';
import { sealedRows } from './flat-parquet/sealed-rows.js';
import type { FlatSpec, SealedFlat } from './flat-parquet/table.js';
import type { Row } from './parquet-values.js';
import type { TransferableColumns } from './signal.js';

/** A flat table's rows back into requests, each way they come: rows, a Parquet object, sealed columns. */
export interface FlatRowsRequest {
  /** Rows as one request in the OTLP/JSON object shape. */
  rowsToRequest(rows: readonly Row[]): OtlpObject;
  /** A stored Parquet object of the table back into its request. */
  parquetToRequest(bytes: Uint8Array, decompression: PageDecompression): Promise<OtlpObject>;
  /** A batch's sealed columns as the OTLP/JSON bytes of each resource's object of its request. */
  sealedAsRecords(columns: TransferableColumns): Buffer[];
}

/**
 * The readers of the flat table `spec` (spans, log records): `toItem` reads one row as its item
 * with its resource and scope, `fields` name the request's fields (`resourceSpans`, `scopeSpans`,
 * `spans`).
 */
export function flatRowsRequest(
  spec: FlatSpec,
  toItem: (row: Row) => RowItem,
  fields: { resources: string; scopes: string; items: string },
): FlatRowsRequest {
  const rowsToRequest = (rows: readonly Row[]): OtlpObject =>
    groupedRequest(rows.map(toItem), fields);
  return {
    rowsToRequest,
    parquetToRequest: async (bytes, decompression) =>
      rowsToRequest(await readFlatRows(bytes, decompression, spec)),
    sealedAsRecords: (columns) =>
      (rowsToRequest(sealedRows(spec, columns as SealedFlat))[fields.resources] as object[]).map(
        (r) => Buffer.from(JSON.stringify(r)),
      ),
  };
}
