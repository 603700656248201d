import {
  type AsyncBuffer,
  type FileMetaData,
  type ParquetRow,
  parquetMetadata,
  parquetReadObjects,
} from 'hyparquet';
import type { Compression } from '../layout/formats.js';

/**
 * The one way this package reads its Parquet files back, whole (a stored object) or a row group
 * at a time (reader/parquet-parts.ts): the footer checked for the schema version its caller
 * expects, and the pages decompressed within one budget. What the rows mean is the signal's.
 */

/** How pages are decompressed (the reader's decompress()), within one budget for the whole read. */
export interface PageDecompression {
  /** Throws past `maxBytes`. */
  decompress(
    compression: Exclude<Compression, 'none'>,
    bytes: Uint8Array,
    maxBytes: number,
  ): Uint8Array;
  maxDecompressedBytes: number;
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** How hyparquet turns the values of this package's files into a row's. */
const ROW_PARSERS = {
  // Microseconds as they are (bigint): a Date would cut them to milliseconds.
  timestampFromMicroseconds: (micros: bigint) => micros,
  // Nanoseconds (spans, log records) as they are too.
  timestampFromNanoseconds: (nanos: bigint) => nanos,
  // Strings as they are: hyparquet's default decoder drops a leading U+FEFF.
  stringFromBytes: (bytes: Uint8Array) => bytes && utf8.decode(bytes),
};

/**
 * The footer's metadata (a whole file, or its last bytes from the footer on); throws unless its
 * key-value metadata says `key` is `version`.
 */
export function schemaMetadata(
  bytes: ArrayBuffer | Uint8Array,
  key: string,
  version: string,
): FileMetaData {
  const metadata = parquetMetadata(bytes);
  const found = metadata.key_value_metadata?.find((kv) => kv.key === key)?.value;
  if (found !== version) {
    throw new Error(
      `not an otel-s3-exporter Parquet file of schema version ${version} (${key}: ${found ?? 'none'})`,
    );
  }
  return metadata;
}

export interface RowsRead {
  rows: ParquetRow[];
  /** Decompressed bytes of the pages read. */
  rawBytes: number;
}

/**
 * The rows of a file, or of [rowStart, rowEnd), with its pages decompressed within
 * `maxDecompressedBytes` in all: a Parquet bomb stops there.
 */
export async function readRows(
  read: { file: AsyncBuffer; metadata: FileMetaData; rowStart?: number; rowEnd?: number },
  decompression: PageDecompression,
): Promise<RowsRead> {
  const budget = decompression.maxDecompressedBytes;
  let left = budget;
  const within =
    (compression: Exclude<Compression, 'none'>) => (input: Uint8Array, outputLength: number) => {
      // zlib takes no limit below 1 byte; an empty page still decompresses to nothing.
      const out = decompression.decompress(
        compression,
        input,
        Math.max(1, Math.min(outputLength, left)),
      );
      left -= out.length;
      return out;
    };
  const rows = await parquetReadObjects({
    ...read,
    compressors: { ZSTD: within('zstd'), GZIP: within('gzip') },
    parsers: ROW_PARSERS,
  });
  return { rows, rawBytes: budget - left };
}

/**
 * The bytes as an ArrayBuffer of their own, as hyparquet reads them: the view's buffer when it
 * is all of it, else a copy (a Buffer may be a view into a shared pool; Buffer#slice would not
 * copy).
 */
export function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (new Uint8Array(bytes).buffer as ArrayBuffer);
}
