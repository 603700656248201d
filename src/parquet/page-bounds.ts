import { type AsyncBuffer, type FileMetaData, type PageHeader, parquetSchema } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { decompressPage } from 'hyparquet/src/datapage.js';
import { getMaxDefinitionLevel, getMaxRepetitionLevel, getTreePath } from 'hyparquet/src/schema.js';
import type { Compressors, SchemaTree } from 'hyparquet/src/types.js';

/**
 * What a Parquet file's pages may make hyparquet do, checked before it decodes them. Every file
 * read may have been written by anyone with access to the bucket.
 *
 * hyparquet's hybrid decoder (RLE / bit-packed: levels, dictionary indices, booleans) writes
 * every value of an RLE run into a JavaScript array, past the array's end when the run is
 * longer than the page: a damaged or hostile page with a run of millions makes V8 end the
 * process ("invalid size error"), which no catch sees. A page claiming millions of values that
 * are all one run is legal, and costs a JavaScript array of that many values (a run of 10^8:
 * 1.5 GB, 4 s). So: a page whose runs outgrow its values is refused, and a read decodes at most
 * as many values as it may decompress bytes.
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

/** The values a page says it holds (its levels' count for a data page). */
export function pageValues(header: PageHeader): number {
  const count =
    header.data_page_header?.num_values ??
    header.data_page_header_v2?.num_values ??
    header.dictionary_page_header?.num_values ??
    0;
  return Math.max(0, count);
}

/**
 * Throws unless the hybrid runs of a data page stay within its values: for a version 1 page,
 * `bytes` is the page decompressed; for version 2 the page as stored, its values section
 * decompressed by `decompress` when they are runs. Walked as hyparquet reads them.
 */
export function checkDataPage(
  header: PageHeader,
  bytes: Uint8Array,
  schemaPath: SchemaTree[],
  type: string,
  decompress: (stored: Uint8Array, size: number) => Uint8Array,
): void {
  const maxRep = schemaPath.length > 1 ? getMaxRepetitionLevel(schemaPath) : 0;
  const maxDef = getMaxDefinitionLevel(schemaPath);
  const width = (max: number) => 32 - Math.clz32(max);
  const v1 = header.data_page_header;
  const v2 = header.data_page_header_v2;
  let fits = true;
  if (v1 !== undefined) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    for (const max of [maxRep, maxDef]) {
      if (max === 0) continue;
      if (at + 4 > bytes.length) return; // hyparquet fails on it
      fits &&= runsFit(bytes, at + 4, width(max), v1.num_values);
      at += 4 + view.getUint32(at, true);
    }
    fits &&= valuesFit(
      bytes.subarray(Math.min(at, bytes.length)),
      v1.encoding,
      type,
      v1.num_values,
    );
  } else if (v2 !== undefined) {
    const reps = v2.repetition_levels_byte_length;
    const defs = v2.definition_levels_byte_length;
    // hyparquet reads each section's runs on past its length, to the page's end.
    if (maxRep > 0) fits &&= runsFit(bytes, 0, width(maxRep), v2.num_values);
    if (maxDef > 0) fits &&= runsFit(bytes, reps, width(maxDef), v2.num_values);
    if (fits && (v2.encoding.endsWith('_DICTIONARY') || v2.encoding === 'RLE')) {
      const stored = bytes.subarray(reps + defs);
      const values =
        v2.is_compressed === false
          ? stored
          : decompress(stored, header.uncompressed_page_size - reps - defs);
      fits = valuesFit(values, v2.encoding, type, v2.num_values);
    }
  }
  if (!fits) {
    const column = schemaPath.slice(1).map((node) => node.element.name);
    throw new PageBoundsError(
      `Parquet column ${column.join('.')}: a run of values longer than its page`,
    );
  }
}

/** Whether the runs of a page's values section (dictionary indices, RLE booleans) fit. */
function valuesFit(bytes: Uint8Array, encoding: string, type: string, limit: number): boolean {
  if (encoding === 'RLE' && type === 'BOOLEAN') return runsFit(bytes, 4, 1, limit);
  if (encoding.endsWith('_DICTIONARY') || encoding === 'RLE') {
    const width = bytes[0];
    return width === undefined || width === 0 || runsFit(bytes, 1, width, limit);
  }
  return true;
}

/**
 * Whether the hybrid runs from `at` (hyparquet's readRleBitPackedHybrid: runs until `limit`
 * values) write no more than `limit` values plus a bit-packed group's padding. Its varints are
 * read as hyparquet reads them (32-bit).
 */
function runsFit(bytes: Uint8Array, at: number, width: number, limit: number): boolean {
  let seen = 0;
  while (seen < limit) {
    let header = 0;
    let shift = 0;
    for (;;) {
      if (at >= bytes.length) return true; // hyparquet fails on reading past the page
      const b = bytes[at++] as number;
      header |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    if (header & 1) {
      // Bit-packed: hyparquet writes no more than its array holds.
      const groups = header >> 1;
      if (groups <= 0) return true;
      seen += groups * 8;
      at += groups * width;
    } else {
      const count = header >>> 1;
      if (seen + count > limit + 7) return false;
      seen += count;
      at += (width + 7) >> 3;
    }
  }
  return true;
}

/**
 * Checks every page that hyparquet reads for rows [rowStart, rowEnd) of `file` (every column
 * chunk of the row groups they touch), before it reads them: each data page's runs, and the
 * values of all the pages within `values`. Pages are decompressed by `compressors` (which
 * should count against a budget of their own: hyparquet decompresses them again).
 */
export async function checkPages(
  read: { file: AsyncBuffer; metadata: FileMetaData; rowStart?: number; rowEnd?: number },
  compressors: Compressors,
  values: ValueBudget,
): Promise<void> {
  const { file, metadata, rowStart = 0, rowEnd = Number.POSITIVE_INFINITY } = read;
  const schema = parquetSchema(metadata);
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    const groupEnd = groupStart + Number(group.num_rows);
    const touched = groupEnd > groupStart && groupEnd > rowStart && groupStart < rowEnd;
    groupStart = groupEnd;
    if (!touched) continue;
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (meta === undefined) continue; // hyparquet refuses it
      // Where hyparquet starts the chunk.
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const stored = new Uint8Array(
        await file.slice(start, start + Number(meta.total_compressed_size)),
      );
      const schemaPath = getTreePath(schema, meta.path_in_schema);
      checkChunk(stored, values, (header, page) => {
        const decompress = (bytes: Uint8Array, size: number) =>
          decompressPage(bytes, size, meta.codec, compressors);
        const bytes =
          header.type === 'DATA_PAGE' ? decompress(page, header.uncompressed_page_size) : page;
        checkDataPage(header, bytes, schemaPath, meta.type, decompress);
      });
    }
  }
}

/**
 * Walks every page of a column chunk (hyparquet's page loop reads them all, or stops earlier in
 * a plain column).
 */
function checkChunk(
  chunk: Uint8Array,
  values: ValueBudget,
  check: (header: PageHeader, page: Uint8Array) => void,
): void {
  const reader = {
    view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    offset: 0,
  };
  while (reader.offset < chunk.length - 1) {
    const header = parquetHeader(reader);
    const page = chunk.subarray(reader.offset, reader.offset + header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    values.take(pageValues(header));
    if (header.type === 'DATA_PAGE' || header.type === 'DATA_PAGE_V2') check(header, page);
  }
}
