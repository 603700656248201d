import type { ColumnMetaData, FileMetaData } from 'hyparquet';
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';
import { MAX_BLOOM_BYTES, MIN_BLOOM_BYTES, SplitBlockBloomFilter } from './bloom-filter.js';
import { xxHash64 } from './bloom-hash.js';

/** The bytes [start, end) of the file: from memory, a local file or a Range GET. */
export type ReadRange = (start: number, end: number) => Promise<Uint8Array>;

/**
 * Whether row group `index` may hold a row whose top-level text `column` is `value`: false only
 * when the column chunk's min/max statistics or its split-block bloom filter (parquet-format
 * BloomFilter.md) leave the value out, so never for a row it holds. Whatever it cannot read (no
 * statistics, no filter, a filter of another algorithm, hash or compression, a size no filter
 * has) keeps the group: the caller reads it.
 */
export async function mayHold(
  metadata: FileMetaData,
  index: number,
  column: string,
  value: string,
  read: ReadRange,
): Promise<boolean> {
  const meta = metadata.row_groups[index]?.columns.find(
    (c) => c.meta_data?.path_in_schema.join('.') === column,
  )?.meta_data;
  if (meta === undefined) return true;
  if (outsideStatistics(meta, value)) return false;
  const filter = await bloomFilter(meta, read);
  if (filter === undefined) return true;
  const hash = (await xxHash64())(new TextEncoder().encode(value));
  return filter.mayContain(Number(hash >> 32n), Number(hash & 0xffff_ffffn));
}

/**
 * The value is below the chunk's min or above its max. The statistics of a text column are
 * bounds (a truncated min is below the values, a truncated max above), compared as UTF-8 bytes
 * compare, which for the ASCII of hex ids is as strings compare.
 */
function outsideStatistics(meta: ColumnMetaData, value: string): boolean {
  const { min_value: min, max_value: max } = meta.statistics ?? {};
  if (typeof min === 'string' && value < min) return true;
  return typeof max === 'string' && value > max;
}

/** The chunk's bloom filter, or undefined when it has none this code reads. */
async function bloomFilter(
  meta: ColumnMetaData,
  read: ReadRange,
): Promise<SplitBlockBloomFilter | undefined> {
  const offset = meta.bloom_filter_offset;
  const length = meta.bloom_filter_length;
  if (offset === undefined || length === undefined || length <= 0) return undefined;
  if (length > MAX_BLOOM_BYTES + 64) return undefined;
  const bytes = await read(Number(offset), Number(offset) + length);
  if (bytes.length !== length) return undefined;
  try {
    const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), offset: 0 };
    // BloomFilterHeader: numBytes, then the algorithm, hash and compression, each a union whose
    // first member (BLOCK, XXHASH, UNCOMPRESSED) is the only one this reads.
    const header = deserializeTCompactProtocol(reader) as Record<string, unknown>;
    const numBytes = header.field_1;
    const first = (field: unknown) =>
      typeof field === 'object' && field !== null && 'field_1' in field;
    if (
      typeof numBytes !== 'number' ||
      numBytes < MIN_BLOOM_BYTES ||
      numBytes > MAX_BLOOM_BYTES ||
      (numBytes & (numBytes - 1)) !== 0 ||
      reader.offset + numBytes !== bytes.length ||
      !first(header.field_2) ||
      !first(header.field_3) ||
      !first(header.field_4)
    ) {
      return undefined;
    }
    return SplitBlockBloomFilter.fromBitset(bytes.subarray(reader.offset));
  } catch {
    return undefined;
  }
}
