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
  /**
   * A stored Parquet object of the table back into its request; with `traceId` in the context,
   * of that trace's rows only (readFlatRows).
   */
  parquetToRequest(
    bytes: Uint8Array,
    decompression: PageDecompression & { traceId?: string },
  ): Promise<OtlpObject>;
  /** A batch's sealed columns as the OTLP/JSON bytes of each resource's object of its request. */
  sealedAsRecords(columns: TransferableColumns): Buffer[];
}

/**
 * The readers of the flat table `spec` (spans, log records): `toItem` reads one row as its item
 * with its resource and scope (`late`: a row of a late batch's sealed columns, SealedFlat.late),
 * `fields` name the request's fields (`resourceSpans`, `scopeSpans`, `spans`).
 */
export function flatRowsRequest(
  spec: FlatSpec,
  toItem: (row: Row, late: boolean) => RowItem,
  fields: { resources: string; scopes: string; items: string },
): FlatRowsRequest {
  const request = (rows: readonly Row[], late: boolean): OtlpObject =>
    groupedRequest(
      rows.map((row) => toItem(row, late)),
      fields,
    );
  const rowsToRequest = (rows: readonly Row[]): OtlpObject => request(rows, false);
  return {
    rowsToRequest,
    parquetToRequest: async (bytes, decompression) =>
      rowsToRequest(await readFlatRows(bytes, decompression, spec, decompression.traceId)),
    sealedAsRecords: (columns) => {
      const sealed = columns as SealedFlat;
      const rows = sealedRows(spec, sealed);
      return (request(rows, sealed.late !== undefined)[fields.resources] as object[]).map((r) =>
        Buffer.from(JSON.stringify(r)),
      );
    },
  };
}
