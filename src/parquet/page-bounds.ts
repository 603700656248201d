import { type AsyncBuffer, type FileMetaData, type PageHeader, parquetSchema } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { decompressPage } from 'hyparquet/src/datapage.js';
import { getMaxDefinitionLevel, getMaxRepetitionLevel, getTreePath } from 'hyparquet/src/schema.js';
import { readVarInt } from 'hyparquet/src/thrift.js';
import type { Compressors, DecodedArray, SchemaTree } from 'hyparquet/src/types.js';
import { objectBudget } from '../encoding/decode-request.js';
import { readHybrid } from './hybrid-decode.js';
import { checkThriftSize } from './thrift-bounds.js';

/**
 * What a Parquet file's pages may make hyparquet do, checked before it decodes them: every file
 * read may have been written by anyone with access to the bucket.
 *
 * hyparquet's hybrid decoder (RLE / bit-packed: levels, dictionary indices) writes every value
 * of an RLE run into a JavaScript array, past the array's end when the run is longer than the
 * page: a run of millions makes V8 end the process ("invalid size error"), which no catch sees.
 * Other corners of its decoders loop forever or allocate by what a header claims. The schema is
 * checked first (read.ts, schemaMetadata); then a read takes only the pages this package writes
 * (version 1 data pages: levels in the hybrid encoding, values PLAIN, RLE_DICTIONARY or
 * DELTA_BINARY_PACKED; PLAIN dictionary pages; ZSTD, GZIP or no compression), walks each page's
 * runs as hyparquet will read them, and refuses the rest by name. A page claiming millions of values in one legal run costs a JavaScript array
 * of that many (a run of 10^8: 1.5 GB, 4 s): a read decodes at most as many values as it may
 * decompress bytes.
 */

/** Thrown for a page these checks refuse. */
export class PageBoundsError extends Error {
  override name = 'PageBoundsError';
}

/** A read's allowance of decoded values (levels and dictionary entries included). */
export class ValueBudget {
  #left: number;
  constructor(readonly limit: number) {
    this.#left = limit;
  }
  /** Throws once a read's pages have claimed more than `limit` values. */
  take(values: number): void {
    this.#left -= values;
    if (!(this.#left >= 0)) {
      throw new PageBoundsError(
        `Parquet pages of more than ${this.limit} values in one read (maxDecompressedBytes)`,
      );
    }
  }
}

const CODECS = new Set(['UNCOMPRESSED', 'ZSTD', 'GZIP']);
const DATA_ENCODINGS = new Set([
  'PLAIN',
  'RLE_DICTIONARY',
  'PLAIN_DICTIONARY',
  'DELTA_BINARY_PACKED',
]);

/** A column chunk's name in errors. */
const columnOf = (path: readonly string[]) => `Parquet column ${path.join('.')}`;

/** Throws unless a column chunk is compressed with a codec this package writes. */
export function checkCodec(codec: string, path: readonly string[]): void {
  if (!CODECS.has(codec)) {
    throw new PageBoundsError(
      `${columnOf(path)}: codec ${codec}, which this package does not write`,
    );
  }
}

/**
 * Throws for a page header (at `offset` of its chunk's bytes) of more Thrift structs and lists
 * than a read builds (thrift-bounds.ts), before hyparquet parses it.
 */
export function checkPageHeaderSize(
  chunk: Uint8Array,
  offset: number,
  path: readonly string[],
  values: ValueBudget,
): void {
  checkThriftSize(chunk, offset, objectBudget(values.limit), `${columnOf(path)}: a page header`);
}

/**
 * Throws unless `header` is a page this package writes, of `type` values, whose stored bytes fit
 * in the `room` left in its column chunk; counts its values against `values`.
 */
export function checkPageHeader(
  header: PageHeader,
  room: number,
  type: string,
  path: readonly string[],
  values: ValueBudget,
): void {
  const refuse: (what: string) => never = (what) => {
    throw new PageBoundsError(`${columnOf(path)}: ${what}, which this package does not write`);
  };
  if (!(header.compressed_page_size >= 0 && header.compressed_page_size <= room)) {
    throw new PageBoundsError(`${columnOf(path)}: a page past its column chunk`);
  }
  let count: number;
  if (header.type === 'DATA_PAGE' && header.data_page_header !== undefined) {
    const { encoding } = header.data_page_header;
    count = header.data_page_header.num_values;
    if (!DATA_ENCODINGS.has(encoding)) refuse(`values encoded ${encoding}`);
    if (encoding.endsWith('_DICTIONARY') && type === 'BOOLEAN') refuse('a BOOLEAN dictionary');
    if (encoding === 'DELTA_BINARY_PACKED' && type !== 'INT32' && type !== 'INT64') {
      refuse(`${type} values encoded ${encoding}`);
    }
  } else if (header.type === 'DICTIONARY_PAGE' && header.dictionary_page_header !== undefined) {
    count = header.dictionary_page_header.num_values;
  } else {
    refuse(`a page of type ${header.type}`);
  }
  if (!(count >= 0)) throw new PageBoundsError(`${columnOf(path)}: a page of ${count} values`);
  values.take(count);
}

/**
 * Throws unless a version 1 data page (`bytes`: the page decompressed, its header passed by
 * checkPageHeader) is read by hyparquet's readDataPage within its values: the hybrid runs of
 * its repetition and definition levels and of its dictionary indices write no more values than
 * the page holds, and a DELTA_BINARY_PACKED header has the shape the format gives it. Walked in
 * hyparquet's order; the first fault throws. Every PLAIN string lies within the page. Given
 * its chunk's `dictionary` size, also that every dictionary index is within it (a caller that
 * decodes the page itself checks after). Returns the rows the page starts: its entries at
 * repetition level 0 (every entry, in a column not repeated).
 */
export function checkDataPage(
  header: PageHeader,
  bytes: Uint8Array,
  schemaPath: SchemaTree[],
  path: readonly string[],
  dictionary?: number,
): number {
  const page = header.data_page_header;
  if (page === undefined) return 0; // checkPageHeader refuses it
  const fault = (what: string) => new PageBoundsError(`${columnOf(path)}: ${what}`);
  const limit = page.num_values;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const maxDefinition = getMaxDefinitionLevel(schemaPath);
  let definitions = -1; // where the definition levels start, if any
  let rows = limit;
  const maxLevels = [schemaPath.length > 1 ? getMaxRepetitionLevel(schemaPath) : 0, maxDefinition];
  for (let l = 0; l < 2; l++) {
    const max = maxLevels[l] as number;
    if (max === 0) continue;
    if (at + 4 > bytes.length) return rows; // hyparquet throws on reading the length
    const width = 32 - Math.clz32(max);
    if (!runsFit(bytes, at + 4, width, limit)) {
      throw fault('a run of values longer than its page');
    }
    if (l === 0) rows = rowStarts(view, at, width, limit);
    if (l === 1) definitions = at;
    at += 4 + view.getUint32(at, true);
  }
  if (at >= bytes.length) return rows; // no values, or hyparquet throws on reading them
  /** Values present (at the highest definition level): those a page's values hold. */
  const present = (): number => {
    if (definitions < 0) return limit;
    const levels = new Uint8Array(limit);
    readHybrid({ view, offset: definitions }, 32 - Math.clz32(maxDefinition), levels);
    let n = 0;
    for (let i = 0; i < limit; i++) if (levels[i] === maxDefinition) n++;
    return n;
  };
  if (page.encoding.endsWith('_DICTIONARY')) {
    const width = bytes[at] as number;
    // Width 0: every index 0, nothing decoded. Wider than 32: no index anyone writes.
    if (width > 32 || (width > 0 && !runsFit(bytes, at + 1, width, limit))) {
      throw fault('a run of values longer than its page');
    }
    if (dictionary !== undefined) {
      // As hyparquet reads them: one index a value present.
      const indices = new Uint32Array(present()); // a negative index reads as one past 2^31
      if (width > 0) {
        readHybrid({ view, offset: at + 1 }, width, indices, bytes.length - at - 1);
      }
      if (!withinDictionary(indices, dictionary)) {
        throw fault('a dictionary index past its dictionary');
      }
    }
  } else if (page.encoding === 'PLAIN') {
    const element = schemaPath.at(-1)?.element;
    const problem = plainPastPage(bytes, at, present(), element?.type, element?.type_length);
    if (problem !== undefined) throw fault(problem);
  } else if (page.encoding === 'DELTA_BINARY_PACKED') {
    // hyparquet steps by these two: a block not a positive multiple of 128 values, or not in
    // miniblocks of a positive multiple of 32, can make it read back over what it read, forever.
    const reader = { view, offset: at };
    const block = readVarInt(reader);
    const miniblocks = readVarInt(reader);
    const perMiniblock = block / miniblocks;
    if (!(block > 0 && block % 128 === 0 && miniblocks > 0 && perMiniblock % 32 === 0)) {
      throw fault(`a DELTA_BINARY_PACKED block of ${block} values in ${miniblocks} miniblocks`);
    }
  }
  return rows;
}

/** How many of `count` repetition levels (their length, then runs, at `offset`) are 0: rows. */
function rowStarts(view: DataView, offset: number, width: number, count: number): number {
  const levels = new Uint8Array(count);
  readHybrid({ view, offset }, width, levels);
  let rows = 0;
  for (let i = 0; i < count; i++) if (levels[i] === 0) rows++;
  return rows;
}

/** Bytes of a PLAIN value of the fixed-width types. */
const PLAIN_WIDTH: Readonly<Record<string, number>> = {
  INT32: 4,
  INT64: 8,
  FLOAT: 4,
  DOUBLE: 8,
  INT96: 12,
};

/**
 * What is wrong when `count` PLAIN values of `type` from `at` do not all lie within `bytes`;
 * undefined when they do. hyparquet reads them as views of the buffer the page lies in, checked
 * against that buffer's end only: values past the page would be the next page's bytes (or, for
 * a page decompressed into a pooled buffer, anything) read as values.
 */
function plainPastPage(
  bytes: Uint8Array,
  at: number,
  count: number,
  type: string | undefined,
  typeLength: number | undefined,
): string | undefined {
  const room = bytes.length - at;
  if (type === 'BYTE_ARRAY') {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let offset = at;
    for (let k = count; k > 0; k--) {
      const length = offset + 4 <= bytes.length ? view.getUint32(offset, true) : -1;
      offset += 4;
      if (!(length >= 0 && length <= bytes.length - offset)) return 'a PLAIN string past its page';
      offset += length;
    }
    return undefined;
  }
  const need =
    type === 'BOOLEAN'
      ? Math.ceil(count / 8)
      : type === 'FIXED_LEN_BYTE_ARRAY'
        ? count * (typeLength ?? 0)
        : count * (PLAIN_WIDTH[type ?? ''] ?? 0);
  return need <= room ? undefined : `${count} PLAIN ${type} values past their page`;
}

/**
 * Throws unless a dictionary page (`bytes`: decompressed) holds the PLAIN values its header
 * claims: a dictionary of more entries than its page would make the rest up.
 */
export function checkDictionaryPage(
  header: PageHeader,
  bytes: Uint8Array,
  type: string,
  typeLength: number | undefined,
  path: readonly string[],
): void {
  const count = header.dictionary_page_header?.num_values ?? 0;
  const problem = plainPastPage(bytes, 0, count, type, typeLength);
  if (problem !== undefined) {
    throw new PageBoundsError(
      `${columnOf(path)}: a dictionary page of ${count} entries: ${problem}`,
    );
  }
}

/**
 * Whether the hybrid runs from `at`, read as hyparquet's readRleBitPackedHybrid reads them into
 * an array of `limit` values, write no more than `limit` of them. Its varints and counts are
 * 32-bit as there; past the page's end hyparquet throws, which is left to it.
 */
function runsFit(bytes: Uint8Array, at: number, width: number, limit: number): boolean {
  let seen = 0;
  while (seen < limit) {
    let header = 0;
    let shift = 0;
    for (;;) {
      if (at >= bytes.length) return true;
      const b = bytes[at++] as number;
      header |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    if (header & 1) {
      // Bit-packed: hyparquet writes only within its array, and goes on to the next run. Its
      // count wraps as here; a negative one reads to the page's end and throws there.
      const count = (header >> 1) << 3;
      if (count < 0) return true;
      at += count === 0 ? 1 : (count >> 3) * width;
      seen = Math.min(limit, seen + count);
    } else {
      // RLE: hyparquet writes all of it, however long; a writer's runs end with the page's.
      const count = header >>> 1;
      if (seen + count > limit) return false;
      seen += count;
      at += (width + 7) >> 3;
    }
  }
  return true;
}

/**
 * Throws unless the file's row count is its row groups' (hyparquet reads as many as it says),
 * none of them negative: checkPages skips a row group of no rows (or fewer), and one of -3 rows
 * would let the file's count pass with 3 rows of another group unread.
 */
function checkRowCount(metadata: FileMetaData): void {
  let rows = 0n;
  for (const group of metadata.row_groups) {
    if (BigInt(group.num_rows) < 0n) {
      throw new PageBoundsError(`a Parquet row group of ${group.num_rows} rows`);
    }
    rows += BigInt(group.num_rows);
  }
  if (rows !== BigInt(metadata.num_rows)) {
    throw new PageBoundsError(
      `Parquet footer says ${metadata.num_rows} rows, its row groups ${rows}`,
    );
  }
}

/**
 * Checks every page that hyparquet reads for rows [rowStart, rowEnd) of `file` (every column
 * chunk of the row groups they touch, or of `columns` only), before it reads them, that each chunk holds a value
 * (a level entry) for every row of its group and no more rows, and that the file's row count is
 * its groups'. Pages are decompressed by `compressors`, which
 * should count against a budget of their own: hyparquet decompresses them again.
 */
export async function checkPages(
  read: {
    file: AsyncBuffer;
    metadata: FileMetaData;
    rowStart?: number;
    rowEnd?: number;
    columns?: readonly string[];
  },
  compressors: Compressors,
  values: ValueBudget,
): Promise<void> {
  const { file, metadata, rowStart = 0, rowEnd = Number.POSITIVE_INFINITY, columns } = read;
  checkRowCount(metadata);
  const schema = parquetSchema(metadata);
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows);
    const groupEnd = groupStart + rows;
    const touched = groupEnd > groupStart && groupEnd > rowStart && groupStart < rowEnd;
    groupStart = groupEnd;
    if (!touched) continue;
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (meta === undefined) continue; // hyparquet refuses it
      const path = meta.path_in_schema;
      // hyparquet reads only the chunks of the columns asked for.
      if (columns !== undefined && !columns.includes(path[0] ?? '')) continue;
      checkCodec(meta.codec, path);
      // Where hyparquet starts the chunk, and its page loop (which reads every page, or stops
      // earlier in a plain column).
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const stored = new Uint8Array(
        await file.slice(start, start + Number(meta.total_compressed_size)),
      );
      const schemaPath = getTreePath(schema, path);
      const reader = {
        view: new DataView(stored.buffer, stored.byteOffset, stored.byteLength),
        offset: 0,
      };
      let entries = 0;
      let dictionary = 0;
      while (reader.offset < stored.length - 1) {
        checkPageHeaderSize(stored, reader.offset, path, values);
        const header = parquetHeader(reader);
        checkPageHeader(header, stored.length - reader.offset, meta.type, path, values);
        const page = stored.subarray(reader.offset, reader.offset + header.compressed_page_size);
        reader.offset += header.compressed_page_size;
        if (header.type === 'DICTIONARY_PAGE') {
          dictionary = header.dictionary_page_header?.num_values ?? 0;
          const bytes = decompressPage(
            page,
            header.uncompressed_page_size,
            meta.codec,
            compressors,
          );
          checkDictionaryPage(
            header,
            bytes,
            meta.type,
            schemaPath.at(-1)?.element.type_length,
            path,
          );
        } else if (header.type === 'DATA_PAGE') {
          const bytes = decompressPage(
            page,
            header.uncompressed_page_size,
            meta.codec,
            compressors,
          );
          // hyparquet gives an index past its dictionary as undefined: a value made up.
          entries += checkDataPage(header, bytes, schemaPath, path, dictionary);
        }
      }
      // hyparquet makes an object a row the footer claims, values or not: every row must have
      // a level entry in every column, so that the value limit bounds the rows too. It reads
      // no more rows than claimed, and would drop the rest without a word.
      if (entries < rows) {
        throw new PageBoundsError(
          `${columnOf(path)}: ${entries} values for a row group of ${rows} rows`,
        );
      }
      if (entries > rows) {
        throw new PageBoundsError(`${columnOf(path)}: ${entries} rows in a row group of ${rows}`);
      }
    }
  }
}

/** Whether every one of `indices` is below `size` (a dictionary's entries). */
export function withinDictionary(indices: DecodedArray, size: number): boolean {
  for (let i = 0; i < indices.length; i++) {
    const index = indices[i] as number;
    if (!(index >= 0 && index < size)) return false;
  }
  return true;
}
