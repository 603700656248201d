import type { OtlpObject } from '../../../encoding/otlp-proto-decode.js';
import {
  ownBuffer,
  type PageDecompression,
  readRows,
  schemaMetadata,
} from '../../../parquet/read.js';
import { rowsToRequest } from './rows-to-request.js';
import { EXPECTED_SCHEMA, SCHEMA_VERSION_KEY } from './schema.js';

/**
 * Reads a stored Parquet object back into its request. Column chunks are decompressed within
 * `maxDecompressedBytes` in all (a Parquet bomb stops there). Throws if it is not a file of this
 * schema.
 */
export async function parquetToRequest(
  bytes: Uint8Array,
  decompression: PageDecompression,
): Promise<{ request: OtlpObject; rows: number }> {
  const file = ownBuffer(bytes);
  const metadata = schemaMetadata(
    file,
    SCHEMA_VERSION_KEY,
    EXPECTED_SCHEMA,
    decompression.maxDecompressedBytes,
  );
  const { rows } = await readRows({ file, metadata }, decompression);
  return { request: rowsToRequest(rows), rows: rows.length };
}
