import { parquetMetadata } from 'hyparquet';
import { COMPRESSION_ROWS, COMPRESSIONS } from '../layout/formats.js';

/** Parquet's codec names → this package's compression names ('ZSTD' → 'zstd'). */
const COMPRESSION_OF_CODEC: ReadonlyMap<string, string> = new Map(
  COMPRESSIONS.map((c) => [COMPRESSION_ROWS[c].parquetCodec as string, c]),
);

/**
 * The codecs of a Parquet file's column chunks, read from its footer (the file's last bytes;
 * nothing else is parsed): this package's compression names where they match (`zstd`, `gzip`,
 * `none`), other codecs in lower case (`snappy`). Each once, sorted. Throws for a file whose
 * footer cannot be read.
 */
export function parquetCodecs(file: Uint8Array): string[] {
  const codecs = new Set<string>();
  for (const group of parquetMetadata(file).row_groups) {
    for (const column of group.columns) {
      const codec = column.meta_data?.codec;
      if (codec !== undefined) codecs.add(COMPRESSION_OF_CODEC.get(codec) ?? codec.toLowerCase());
    }
  }
  return [...codecs].sort();
}
