import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import type { OtlpObject } from '../../../encoding/otlp-proto-decode.js';
import { rowsToRequest } from './rows-to-request.js';
import { SCHEMA_VERSION, SCHEMA_VERSION_KEY } from './schema.js';

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** How hyparquet turns this schema's values into a row's (also for files read by row group). */
export const ROW_PARSERS = {
  // Microseconds as they are (bigint): a Date would cut them to milliseconds.
  timestampFromMicroseconds: (micros: bigint) => micros,
  // Strings as they are: hyparquet's default decoder drops a leading U+FEFF.
  stringFromBytes: (bytes: Uint8Array) => bytes && utf8.decode(bytes),
};

/** How column chunks are decompressed (the reader's decompress()), within one budget for the whole file. */
export interface ParquetDecompression {
  decompress(compression: 'zstd' | 'gzip', bytes: Uint8Array, maxBytes: number): Uint8Array;
  maxDecompressedBytes: number;
}

/**
 * Reads a stored Parquet object back into its request. Column chunks are decompressed within
 * `maxDecompressedBytes` in all (a Parquet bomb stops there). Throws if it is not a file of this
 * schema.
 */
export async function parquetToRequest(
  bytes: Uint8Array,
  decompression: ParquetDecompression,
): Promise<{ request: OtlpObject; rows: number }> {
  let left = decompression.maxDecompressedBytes;
  const within = (compression: 'zstd' | 'gzip') => (input: Uint8Array, outputLength: number) => {
    // zlib takes no limit below 1 byte; an empty page still decompresses to nothing.
    const out = decompression.decompress(
      compression,
      input,
      Math.max(1, Math.min(outputLength, left)),
    );
    left -= out.length;
    return out;
  };
  const decompressors = { ZSTD: within('zstd'), GZIP: within('gzip') };
  // hyparquet reads an ArrayBuffer: the object's own, or a copy of its bytes (a Buffer may be a
  // view into a shared pool; Buffer#slice would not copy).
  const file =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? (bytes.buffer as ArrayBuffer)
      : new Uint8Array(bytes).buffer;
  const metadata = parquetMetadata(file);
  const version = metadata.key_value_metadata?.find((kv) => kv.key === SCHEMA_VERSION_KEY)?.value;
  if (version !== SCHEMA_VERSION) {
    throw new Error(
      `not an otel-s3-exporter Parquet file of schema version ${SCHEMA_VERSION} (${SCHEMA_VERSION_KEY}: ${version ?? 'none'})`,
    );
  }
  const rows = await parquetReadObjects({
    file,
    metadata,
    compressors: decompressors,
    parsers: ROW_PARSERS,
  });
  return { request: rowsToRequest(rows), rows: rows.length };
}
