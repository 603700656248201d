import {
  type ColumnMetaData,
  type FileMetaData,
  type ParquetParsers,
  parquetSchema,
  type SchemaTree,
} from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { convert, convertWithDictionary, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { readPlain } from 'hyparquet/src/plain.js';
import type { ColumnDecoder, Compressors, DecodedArray } from 'hyparquet/src/types.js';

/**
 * A list or map column read flat: the elements of all rows in one array, row r's from
 * `offsets[r]` to `offsets[r + 1]`. Reading it as hyparquet's rows do builds an array (a list)
 * or an object (a map) a row, which a compaction then takes apart again: for a metrics hour,
 * about a tenth of its CPU and of its garbage.
 *
 * The pages are hyparquet's own (its page header, decompression, level and value decoders and
 * type conversions); only the assembly is here, for a column of one repeated level (a LIST of a
 * primitive, a MAP of primitives), which is every repeated column of this package's schemas.
 * A list or map that is null reads as an empty one; a null element as null.
 */
export interface FlatRepeated {
  /** For a list, its elements; for a map, its values. */
  values: unknown[];
  /** For a map, its keys (beside `values`); undefined for a list. */
  keys: unknown[] | undefined;
  /** rows + 1 entries. */
  offsets: Int32Array;
}

interface Leaf {
  meta: ColumnMetaData;
  decoder: ColumnDecoder;
  /** The definition level at which the repeated group is there: an element slot. */
  slotLevel: number;
  maxLevel: number;
}

/**
 * The columns named in `names` (top-level lists and maps of one repeated level) of one row
 * group, read flat from `bytes` (the group's stored bytes, which start at `start` in the file).
 * Throws for any other shape, or when a column's rows differ from `rows`.
 */
export function readFlatRepeated(
  metadata: FileMetaData,
  group: number,
  names: readonly string[],
  bytes: Uint8Array,
  start: number,
  rows: number,
  compressors: Compressors,
  parsers: Partial<ParquetParsers>,
): Map<string, FlatRepeated> {
  const schema = parquetSchema(metadata);
  const rowGroup = metadata.row_groups[group];
  if (rowGroup === undefined) throw new RangeError(`no row group ${group}`);
  const allParsers = { ...DEFAULT_PARSERS, ...parsers };
  const out = new Map<string, FlatRepeated>();
  for (const name of names) {
    const top = schema.children.find((c) => c.element.name === name);
    if (top === undefined) continue;
    const leaves: Leaf[] = [];
    for (const chunk of rowGroup.columns) {
      const meta = chunk.meta_data;
      if (meta === undefined || meta.path_in_schema[0] !== name) continue;
      leaves.push(leafOf(schema, meta, compressors, allParsers));
    }
    const [first, second] = leaves;
    if (first === undefined || leaves.length > 2) {
      throw new Error(`Parquet column ${name}: not a list or map of one repeated level`);
    }
    const chunkBytes = (meta: ColumnMetaData) => {
      const from = Number(meta.dictionary_page_offset ?? meta.data_page_offset) - start;
      const to = from + Number(meta.total_compressed_size);
      if (!(from >= 0 && to <= bytes.length))
        throw new Error('a Parquet page outside its row group');
      return bytes.subarray(from, to);
    };
    const a = readLeaf(first, chunkBytes(first.meta), rows);
    if (second === undefined) {
      out.set(name, { values: a.values, keys: undefined, offsets: a.offsets });
      continue;
    }
    const b = readLeaf(second, chunkBytes(second.meta), rows);
    if (a.values.length !== b.values.length || a.offsets.some((o, i) => o !== b.offsets[i])) {
      throw new Error(`Parquet map column ${name}: keys and values differ in shape`);
    }
    const keysFirst = first.meta.path_in_schema.at(-1) === 'key';
    out.set(name, {
      keys: keysFirst ? a.values : b.values,
      values: keysFirst ? b.values : a.values,
      offsets: a.offsets,
    });
  }
  return out;
}

function leafOf(
  schema: SchemaTree,
  meta: ColumnMetaData,
  compressors: Compressors,
  parsers: ParquetParsers,
): Leaf {
  const schemaPath = [schema];
  let node = schema;
  for (const part of meta.path_in_schema) {
    const child = node.children.find((c) => c.element.name === part);
    if (child === undefined)
      throw new Error(`Parquet column ${meta.path_in_schema.join('.')}: not in the schema`);
    schemaPath.push(child);
    node = child;
  }
  let level = 0;
  let slotLevel = -1;
  for (const { element } of schemaPath.slice(1)) {
    if (element.repetition_type === 'REQUIRED') continue;
    level++;
    if (element.repetition_type === 'REPEATED') {
      if (slotLevel >= 0)
        throw new Error(`Parquet column ${meta.path_in_schema.join('.')}: repeated twice`);
      slotLevel = level;
    }
  }
  if (slotLevel < 0 || node.children.length > 0) {
    throw new Error(
      `Parquet column ${meta.path_in_schema.join('.')}: not a list or map of one repeated level`,
    );
  }
  return {
    meta,
    slotLevel,
    maxLevel: level,
    decoder: {
      pathInSchema: meta.path_in_schema,
      type: meta.type,
      element: node.element,
      schemaPath,
      codec: meta.codec,
      parsers,
      compressors,
    },
  };
}

/** One leaf column chunk: its element slots (null where the element is) and row offsets. */
function readLeaf(
  leaf: Leaf,
  chunk: Uint8Array,
  rows: number,
): { values: unknown[]; offsets: Int32Array } {
  const { decoder, slotLevel, maxLevel } = leaf;
  const reader = {
    view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    offset: 0,
  };
  const values: unknown[] = [];
  const offsets = new Int32Array(rows + 1);
  let row = -1;
  let dictionary: DecodedArray | undefined;
  while (reader.offset < chunk.byteLength) {
    const header = parquetHeader(reader);
    const compressed = chunk.subarray(reader.offset, reader.offset + header.compressed_page_size);
    if (compressed.length !== header.compressed_page_size)
      throw new Error('a Parquet page past its column chunk');
    reader.offset += header.compressed_page_size;
    if (header.type === 'DICTIONARY_PAGE') {
      const page = decompressPage(
        compressed,
        Number(header.uncompressed_page_size),
        decoder.codec,
        decoder.compressors,
      );
      const count = header.dictionary_page_header?.num_values ?? 0;
      const view = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 };
      dictionary = convert(
        readPlain(view, decoder.type, count, decoder.element.type_length),
        decoder,
      );
      continue;
    }
    let page: {
      definitionLevels: number[] | undefined;
      repetitionLevels: number[];
      dataPage: DecodedArray;
    };
    let encoding: string;
    if (header.type === 'DATA_PAGE' && header.data_page_header !== undefined) {
      const data = decompressPage(
        compressed,
        Number(header.uncompressed_page_size),
        decoder.codec,
        decoder.compressors,
      );
      page = readDataPage(data, header.data_page_header, decoder);
      encoding = header.data_page_header.encoding;
    } else if (header.type === 'DATA_PAGE_V2' && header.data_page_header_v2 !== undefined) {
      page = readDataPageV2(compressed, header, decoder);
      encoding = header.data_page_header_v2.encoding;
    } else {
      throw new Error(`Parquet page of type ${header.type} in a data column`);
    }
    const present = convertWithDictionary(page.dataPage, dictionary, encoding as never, decoder);
    // Repetition levels, one a value: hyparquet drops the definition levels of a page whose
    // every level is the highest.
    const { repetitionLevels: reps } = page;
    const defs = page.definitionLevels?.length ? page.definitionLevels : undefined;
    const n = reps.length;
    let next = 0;
    for (let i = 0; i < n; i++) {
      if (reps[i] === 0 || row < 0) {
        if (++row >= rows)
          throw new Error(
            `Parquet column ${decoder.pathInSchema.join('.')} held more than ${rows} rows`,
          );
        offsets[row] = values.length;
      }
      const def = defs === undefined ? maxLevel : (defs[i] as number);
      if (def === maxLevel) values.push(present[next++]);
      else if (def >= slotLevel) values.push(null);
    }
    if (next !== present.length)
      throw new Error(
        `Parquet column ${decoder.pathInSchema.join('.')}: levels and values disagree`,
      );
  }
  if (row + 1 !== rows) {
    throw new Error(
      `Parquet column ${decoder.pathInSchema.join('.')} held ${row + 1} rows for ${rows}`,
    );
  }
  offsets[rows] = values.length;
  return { values, offsets };
}
