import { isUtf8 } from 'node:buffer';
import {
  type ColumnMetaData,
  type FileMetaData,
  type ParquetParsers,
  parquetSchema,
  type SchemaTree,
} from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { convert, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage } from 'hyparquet/src/datapage.js';
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js';
import { readPlain } from 'hyparquet/src/plain.js';
import { getMaxDefinitionLevel, getMaxRepetitionLevel, getTreePath } from 'hyparquet/src/schema.js';
import type {
  ColumnDecoder,
  Compressors,
  DataPageHeader,
  DecodedArray,
} from 'hyparquet/src/types.js';
import { readHybrid } from './hybrid-decode.js';
import {
  checkCodec,
  checkDataPage,
  checkDictionaryPage,
  checkPageHeader,
  checkPageHeaderSize,
  type ValueBudget,
  withinDictionary,
} from './page-bounds.js';

/**
 * A row group's columns read flat: a plain column as one value a row, a list or map column as the
 * elements of all rows in one array, row r's from `offsets[r]` to `offsets[r + 1]`. Reading them
 * as hyparquet's rows do builds an array (a list) or an object (a map) a row, and runs even a
 * plain optional column through its list assembly; a compaction then takes those apart again:
 * for a metrics hour, about a seventh of its CPU and of its garbage.
 *
 * The pages are hyparquet's own (its page header, decompression, level and value decoders and
 * type conversions); only the assembly is here, for the shapes of this package's schemas: plain
 * columns, lists and maps of primitives with one repeated level, and lists of maps (a span's
 * events' and links' attributes). Anything else throws. A list or map that is null reads as an
 * empty one; a null value as null, as hyparquet gives it.
 */
export interface FlatRepeated {
  /** For a list, its elements; for a map, its values (a typed array where no slot is null). */
  values: LeafValues;
  /** For a map, its keys (beside `values`); undefined for a list. */
  keys: LeafValues | undefined;
  /** rows + 1 entries: where each row's elements (a list of maps: its items) start. */
  offsets: Int32Array;
  /** A list of maps: items + 1 entries, where each item's map entries start. */
  items?: Int32Array;
  /** Read coded: the dictionary `values` index (-1: null), when its every page was coded. */
  valueDictionary?: ArrayLike<unknown>;
  /** The same for `keys`. */
  keyDictionary?: ArrayLike<unknown>;
}

/**
 * Strings of a chunk as their UTF-8 bytes, not decoded: value k is bytes[starts[k], ends[k]). A
 * coded read gives a string column written PLAIN (ids, bodies) so where every value of it is
 * present and valid UTF-8: a compaction copies them into its output as they are.
 */
export class Utf8Values {
  constructor(
    readonly bytes: Uint8Array,
    readonly starts: Int32Array,
    readonly ends: Int32Array,
  ) {}

  get length(): number {
    return this.starts.length;
  }

  /** Every value as a string. */
  static strings(values: LeafValues): ArrayLike<unknown> {
    if (!(values instanceof Utf8Values)) return values;
    return Array.from({ length: values.length }, (_, k) => values.text(k));
  }

  /** Value k as a string (as the reader's parser decodes it). */
  text(k: number): string {
    return utf8.decode(this.bytes.subarray(this.starts[k], this.ends[k]));
  }
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** A leaf's values: as a reader gives them, or (coded) as UTF-8 bytes. */
export type LeafValues = ArrayLike<unknown> | Utf8Values;

export interface FlatColumns {
  /** Each plain column's values, one a row. */
  columns: Map<string, LeafValues>;
  /** Each list and map column. */
  repeated: Map<string, FlatRepeated>;
  /**
   * Read coded: per plain column whose every page is dictionary-encoded, its dictionary; its
   * values in `columns` are then indices into it (an Int32Array, -1 for null).
   */
  dictionaries: Map<string, ArrayLike<unknown>>;
}

interface Leaf {
  meta: ColumnMetaData;
  decoder: ColumnDecoder;
  /**
   * The definition level from which a level entry holds a slot (a value or null): the repeated
   * group's, or 0 in a plain column (every entry is a row's).
   */
  slotLevel: number;
  /** In a list of maps, the list's repeated level, from which an entry starts an item; else 0. */
  itemLevel: number;
  maxLevel: number;
  /**
   * Values kept as decoded, not converted: timestamps of micro- or nanoseconds, whose integers
   * (bigints) are what read.ts's parsers make of them anyway. Converted, hyparquet copies each
   * page into an array of bigints, which the compaction then takes apart again.
   */
  asRead: boolean;
}

/**
 * Every top-level column of one row group, read from `bytes` (the group's stored bytes, which
 * start at `start` in the file). Throws for a shape this does not read, or when a column's rows
 * differ from `rows`.
 */
export function readFlatColumns(
  metadata: FileMetaData,
  group: number,
  bytes: Uint8Array,
  start: number,
  rows: number,
  compressors: Compressors,
  /** As hyparquet's, but for timestamps of micro- or nanoseconds: their integers (bigints). */
  parsers: Partial<ParquetParsers>,
  values: ValueBudget,
  /**
   * Strings as indices into their chunk's dictionary where every page of the chunk is
   * dictionary-encoded (a value a reader looks up once a chunk, not once a row), and as their
   * bytes (Utf8Values) where every page is PLAIN.
   */
  coded = false,
): FlatColumns {
  const schema = parquetSchema(metadata);
  const rowGroup = metadata.row_groups[group];
  if (rowGroup === undefined) throw new RangeError(`no row group ${group}`);
  const allParsers = { ...DEFAULT_PARSERS, ...parsers };
  const leavesOf = new Map<string, Leaf[]>();
  for (const chunk of rowGroup.columns) {
    const meta = chunk.meta_data;
    if (meta === undefined) throw new Error('a Parquet column chunk without metadata');
    const name = meta.path_in_schema[0] as string;
    const leaves = leavesOf.get(name) ?? [];
    leaves.push(leafOf(schema, meta, compressors, allParsers));
    leavesOf.set(name, leaves);
  }
  const chunkBytes = (meta: ColumnMetaData) => {
    const from = Number(meta.dictionary_page_offset ?? meta.data_page_offset) - start;
    const to = from + Number(meta.total_compressed_size);
    if (!(from >= 0 && to <= bytes.length)) throw new Error('a Parquet page outside its row group');
    return bytes.subarray(from, to);
  };
  const out: FlatColumns = { columns: new Map(), repeated: new Map(), dictionaries: new Map() };
  for (const [name, leaves] of leavesOf) {
    const [first, second] = leaves;
    if (
      first === undefined ||
      leaves.length > 2 ||
      (second !== undefined && second.slotLevel === 0)
    ) {
      throw new Error(
        `Parquet column ${name}: not a plain column or a list or map of one repeated level`,
      );
    }
    const a = readLeaf(first, chunkBytes(first.meta), rows, values, coded);
    if (first.slotLevel === 0) {
      out.columns.set(name, a.values);
      if (a.dictionary !== undefined) out.dictionaries.set(name, a.dictionary);
    } else if (second === undefined) {
      if (first.itemLevel > 0) throw new Error(`Parquet column ${name}: a list of lists`);
      out.repeated.set(name, {
        values: a.values,
        keys: undefined,
        offsets: a.offsets,
        ...(a.dictionary === undefined ? {} : { valueDictionary: a.dictionary }),
      });
    } else {
      const b = readLeaf(second, chunkBytes(second.meta), rows, values, coded);
      const same = (x: Int32Array | undefined, y: Int32Array | undefined) =>
        x === undefined ? y === undefined : y !== undefined && x.every((o, i) => o === y[i]);
      if (
        a.values.length !== b.values.length ||
        !same(a.offsets, b.offsets) ||
        !same(a.items, b.items)
      ) {
        throw new Error(`Parquet map column ${name}: keys and values differ in shape`);
      }
      const keysFirst = first.meta.path_in_schema.at(-1) === 'key';
      const [k, v] = keysFirst ? [a, b] : [b, a];
      out.repeated.set(name, {
        keys: k.values,
        values: v.values,
        offsets: a.offsets,
        ...(a.items === undefined ? {} : { items: a.items }),
        ...(k.dictionary === undefined ? {} : { keyDictionary: k.dictionary }),
        ...(v.dictionary === undefined ? {} : { valueDictionary: v.dictionary }),
      });
    }
  }
  return out;
}

function leafOf(
  schema: SchemaTree,
  meta: ColumnMetaData,
  compressors: Compressors,
  parsers: ParquetParsers,
): Leaf {
  const schemaPath = getTreePath(schema, meta.path_in_schema);
  const node = schemaPath[schemaPath.length - 1] as SchemaTree;
  let level = 0;
  let slotLevel = 0;
  let itemLevel = 0;
  for (const { element } of schemaPath.slice(1)) {
    if (element.repetition_type === 'REQUIRED') continue;
    level++;
    if (element.repetition_type === 'REPEATED') {
      if (itemLevel > 0)
        throw new Error(`Parquet column ${meta.path_in_schema.join('.')}: repeated three times`);
      itemLevel = slotLevel;
      slotLevel = level;
    }
  }
  if (node.children.length > 0 || (slotLevel === 0 && schemaPath.length !== 2)) {
    throw new Error(
      `Parquet column ${meta.path_in_schema.join('.')}: not a plain column or a list or map of one repeated level`,
    );
  }
  const { logical_type: logical, converted_type: converted } = node.element;
  const unit = logical?.type === 'TIMESTAMP' ? logical.unit : undefined;
  return {
    meta,
    slotLevel,
    itemLevel,
    maxLevel: level,
    asRead: unit === 'MICROS' || unit === 'NANOS' || converted === 'TIMESTAMP_MICROS',
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
  values: ValueBudget,
  coded: boolean,
): {
  values: LeafValues;
  offsets: Int32Array;
  items: Int32Array | undefined;
  /** Set when `values` are indices into it (coded, every page dictionary-encoded). */
  dictionary: DecodedArray | undefined;
} {
  const { decoder, slotLevel, itemLevel, maxLevel } = leaf;
  const fault = (what: string) =>
    new Error(`Parquet column ${decoder.pathInSchema.join('.')}${what}`);
  const path = decoder.pathInSchema;
  checkCodec(decoder.codec, path);
  const decompressed = (compressed: Uint8Array, header: { uncompressed_page_size: number }) =>
    decompressPage(
      compressed,
      Number(header.uncompressed_page_size),
      decoder.codec,
      decoder.compressors,
    );
  const reader = {
    view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    offset: 0,
  };
  const pages: Page[] = [];
  // Coded while every data page so far was dictionary-encoded (and the column is of strings);
  // as bytes while every one was PLAIN, without nulls, of valid UTF-8.
  let codes = coded && decoder.type === 'BYTE_ARRAY';
  let raw = codes;
  /** Back from bytes to strings, as the reader's parser makes them. */
  const decodeRaw = () => {
    raw = false;
    for (const p of pages) {
      p.present = Utf8Values.strings(p.utf8 as Utf8Values) as DecodedArray;
      p.utf8 = undefined;
    }
  };
  let slots = 0;
  const offsets = new Int32Array(rows + 1);
  // A list of maps: where each item's entries start (an item per entry of the list's level).
  const itemStarts: number[] | undefined = itemLevel > 0 ? [] : undefined;
  let row = -1;
  let dictionary: DecodedArray | undefined;
  while (reader.offset < chunk.byteLength) {
    checkPageHeaderSize(chunk, reader.offset, path, values);
    const header = parquetHeader(reader);
    // Only the pages this package writes (page-bounds.ts): dictionary and version 1 data pages.
    checkPageHeader(header, chunk.byteLength - reader.offset, decoder.type, path, values);
    const compressed = chunk.subarray(reader.offset, reader.offset + header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    const daph = header.data_page_header;
    if (header.type === 'DICTIONARY_PAGE' || daph === undefined) {
      const page = decompressed(compressed, header);
      checkDictionaryPage(header, page, decoder.type, decoder.element.type_length, path);
      const count = header.dictionary_page_header?.num_values ?? 0;
      const view = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 };
      dictionary = convert(
        readPlain(view, decoder.type, count, decoder.element.type_length),
        decoder,
      );
      continue;
    }
    const bytes = decompressed(compressed, header);
    checkDataPage(header, bytes, decoder.schemaPath, path);
    const page = readPage(bytes, daph, decoder, raw);
    const { encoding } = daph;
    const entries = daph.num_values;
    const indices = encoding.endsWith('_DICTIONARY');
    if (indices && !withinDictionary(page.dataPage, dictionary?.length ?? 0)) {
      // A damaged file (or no dictionary page): its value would be made up.
      throw fault(': a dictionary index past its dictionary');
    }
    if (raw && page.utf8 === undefined) decodeRaw();
    if (codes && !indices) {
      // A page of values among coded ones: every page as values.
      codes = false;
      for (const p of pages) p.present = lookUp(p.present, dictionary as DecodedArray);
    }
    const present = codes
      ? page.dataPage
      : indices
        ? lookUp(page.dataPage, dictionary as DecodedArray)
        : page.utf8 !== undefined
          ? page.dataPage
          : leaf.asRead
            ? page.dataPage
            : convert(page.dataPage, decoder);
    const defs = page.definitionLevels;
    const reps = page.repetitionLevels;
    // A damaged page can decode to more levels than it says it holds.
    if (
      (defs !== undefined && defs.length !== entries) ||
      (reps !== undefined && reps.length !== entries)
    ) {
      throw fault(": a page's levels disagree with its header");
    }
    let next = 0;
    let nulls = 0;
    const plain = reps === undefined && defs === undefined;
    // Every entry a value (no level below the highest): only the repetition levels say where
    // rows start. A map or list without nulls or empty ones (a resource's attributes, mostly).
    const full = !plain && defs === undefined && itemStarts === undefined;
    if (plain) {
      // A plain column's page without nulls: a value a row (its offsets are never read).
      if (row + entries >= rows) throw fault(` held more than ${rows} rows`);
      row += entries;
      next = entries;
      slots += entries;
    } else if (full) {
      const r = reps as Uint8Array;
      for (let i = 0; i < entries; i++) {
        if (r[i] === 0 || row < 0) {
          if (++row >= rows) throw fault(` held more than ${rows} rows`);
          offsets[row] = slots + i;
        }
      }
      next = entries;
      slots += entries;
    }
    for (let i = plain || full ? entries : 0; i < entries; i++) {
      const rep = reps === undefined || row < 0 ? 0 : (reps[i] as number);
      const def = defs === undefined ? maxLevel : (defs[i] as number);
      if (rep === 0) {
        if (++row >= rows) throw fault(` held more than ${rows} rows`);
        offsets[row] = itemStarts === undefined ? slots : itemStarts.length;
      }
      // Repetition 0 (a row) or 1 (an item) starts an item where the item is; 2 goes on in its map.
      if (itemStarts !== undefined && rep < 2 && def >= itemLevel) itemStarts.push(slots);
      if (def === maxLevel) {
        next++;
        slots++;
      } else if (def >= slotLevel) {
        nulls++;
        slots++;
      }
    }
    if (next !== (page.utf8 ?? present).length) throw fault(': levels and values disagree');
    pages.push({ present, defs: nulls > 0 ? defs : undefined, utf8: page.utf8 });
    if (raw && nulls > 0) decodeRaw();
  }
  if (row + 1 !== rows) throw fault(` held ${row + 1} rows for ${rows}`);
  const coding = codes && dictionary !== undefined ? dictionary : undefined;
  const slotted =
    raw && pages.length > 0
      ? joinedUtf8(pages.map((p) => p.utf8 as Utf8Values))
      : coding === undefined
        ? slotValues(pages, slots, leaf)
        : slotCodes(pages, slots, leaf);
  if (itemStarts === undefined) {
    offsets[rows] = slots;
    return { values: slotted, offsets, items: undefined, dictionary: coding };
  }
  offsets[rows] = itemStarts.length;
  itemStarts.push(slots);
  return { values: slotted, offsets, items: Int32Array.from(itemStarts), dictionary: coding };
}

/** The values of dictionary `indices` (checked within it): typed as the dictionary is. */
function lookUp(indices: DecodedArray, dictionary: DecodedArray): DecodedArray {
  const out = ArrayBuffer.isView(dictionary)
    ? new (dictionary.constructor as new (n: number) => DecodedArray)(indices.length)
    : new Array(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = dictionary[indices[i] as number];
  return out;
}

/** A data page's decoded values (or dictionary indices), with its levels where it has nulls. */
interface Page {
  present: DecodedArray;
  defs: Uint8Array | undefined;
  /** Its values as bytes (then `present` is empty). */
  utf8: Utf8Values | undefined;
}

/** The values of pages read as bytes, as one (a copy only where there are several pages). */
function joinedUtf8(pages: Utf8Values[]): Utf8Values {
  if (pages.length === 1) return pages[0] as Utf8Values;
  let bytes = 0;
  let count = 0;
  for (const p of pages) {
    if (p.length === 0) continue;
    bytes += (p.ends[p.length - 1] as number) - (p.starts[0] as number);
    count += p.length;
  }
  const out = new Uint8Array(bytes);
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  let at = 0;
  let k = 0;
  for (const p of pages) {
    if (p.length === 0) continue;
    const from = p.starts[0] as number;
    const to = p.ends[p.length - 1] as number;
    out.set(p.bytes.subarray(from, to), at);
    for (let j = 0; j < p.length; j++, k++) {
      starts[k] = (p.starts[j] as number) - from + at;
      ends[k] = (p.ends[j] as number) - from + at;
    }
    at += to - from;
  }
  return new Utf8Values(out, starts, ends);
}

/**
 * PLAIN BYTE_ARRAY values from `reader` as bytes (readPlain's, without an object a value);
 * undefined, the reader where it was, if one is not valid UTF-8 (a reader's parser would decode
 * it to U+FFFD: it is read so instead, and not copied as it is).
 */
function plainUtf8(
  reader: { view: DataView; offset: number },
  count: number,
): Utf8Values | undefined {
  const { view } = reader;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  const starts = new Int32Array(count);
  const ends = new Int32Array(count);
  let at = reader.offset;
  let ascii = true;
  for (let k = 0; k < count; k++) {
    const n = view.getUint32(at, true); // throws past the page, as readPlain does
    at += 4;
    if (n > bytes.length - at) throw new RangeError('a PLAIN string past its page');
    starts[k] = at;
    for (let j = at; j < at + n; j++) if ((bytes[j] as number) >= 0x80) ascii = false;
    at += n;
    ends[k] = at;
  }
  if (!ascii) {
    for (let k = 0; k < count; k++) {
      if (!isUtf8(bytes.subarray(starts[k], ends[k]))) return undefined;
    }
  }
  reader.offset = at;
  return new Utf8Values(bytes, starts, ends);
}

/**
 * A version 1 data page (decompressed) as hyparquet's readDataPage reads it, with its decoders,
 * but its levels and dictionary indices in typed arrays, where it makes a JavaScript array of
 * each a page: those were a third of the objects a compaction of spans made. The definition
 * levels are left out (undefined) where every one is the highest, as there; a plain column has
 * no repetition levels.
 */
function readPage(
  bytes: Uint8Array,
  daph: DataPageHeader,
  decoder: ColumnDecoder,
  /** PLAIN strings as their bytes (`utf8`) where they are valid UTF-8. */
  raw: boolean,
): {
  definitionLevels?: Uint8Array;
  repetitionLevels?: Uint8Array;
  dataPage: DecodedArray;
  utf8?: Utf8Values;
} {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reader = { view, offset: 0 };
  const { schemaPath, type, element } = decoder;
  const entries = daph.num_values;
  const levels = (max: number): Uint8Array | undefined => {
    if (max === 0) return undefined;
    if (max > 255)
      throw new Error(`Parquet column ${decoder.pathInSchema.join('.')}: nested too deep`);
    const out = new Uint8Array(entries);
    readHybrid(reader, 32 - Math.clz32(max), out);
    return out;
  };
  const repetitionLevels =
    schemaPath.length > 1 ? levels(getMaxRepetitionLevel(schemaPath)) : undefined;
  const maxDefinition = getMaxDefinitionLevel(schemaPath);
  let definitionLevels = levels(maxDefinition);
  let present = entries;
  if (definitionLevels !== undefined) {
    present = 0;
    for (let i = 0; i < entries; i++) if (definitionLevels[i] === maxDefinition) present++;
    if (present === entries) definitionLevels = undefined;
  }
  let dataPage: DecodedArray;
  const { encoding } = daph;
  if (encoding === 'PLAIN') {
    const utf8 = raw && type === 'BYTE_ARRAY' ? plainUtf8(reader, present) : undefined;
    if (utf8 !== undefined) {
      return {
        ...(definitionLevels === undefined ? {} : { definitionLevels }),
        ...(repetitionLevels === undefined ? {} : { repetitionLevels }),
        dataPage: [],
        utf8,
      };
    }
    dataPage = readPlain(reader, type, present, element.type_length);
  } else if (encoding === 'RLE_DICTIONARY' || encoding === 'PLAIN_DICTIONARY') {
    const width = view.getUint8(reader.offset++);
    dataPage = new Int32Array(present);
    if (width > 0) {
      readHybrid(reader, width, dataPage, bytes.length - reader.offset);
    }
  } else if (encoding === 'DELTA_BINARY_PACKED') {
    dataPage = type === 'INT32' ? new Int32Array(present) : new BigInt64Array(present);
    deltaBinaryUnpack(reader, present, dataPage);
  } else {
    throw new Error(`Parquet column ${decoder.pathInSchema.join('.')}: values encoded ${encoding}`);
  }
  return {
    ...(definitionLevels === undefined ? {} : { definitionLevels }),
    ...(repetitionLevels === undefined ? {} : { repetitionLevels }),
    dataPage,
  };
}

/** The element slots of a coded chunk's pages: each a dictionary index, -1 where it is null. */
function slotCodes(pages: Page[], slots: number, leaf: Leaf): Int32Array {
  const out = new Int32Array(slots);
  let at = 0;
  for (const { present, defs } of pages) {
    if (defs === undefined) {
      for (let i = 0; i < present.length; i++) out[at++] = present[i] as number;
      continue;
    }
    let next = 0;
    for (const def of defs) {
      if (def === leaf.maxLevel) out[at++] = present[next++] as number;
      else if (def >= leaf.slotLevel) out[at++] = -1;
    }
  }
  return out;
}

/**
 * The element slots of a chunk's pages in one array: the decoded values themselves where every
 * slot holds one (a typed array stays one, read without a copy when the chunk is one page),
 * else an array with null where an element is.
 */
function slotValues(pages: Page[], slots: number, leaf: Leaf): ArrayLike<unknown> {
  const [only] = pages;
  if (pages.length === 1 && only !== undefined && only.defs === undefined) return only.present;
  if (pages.every((p) => p.defs === undefined)) {
    const first = only?.present;
    if (
      ArrayBuffer.isView(first) &&
      pages.every((p) => p.present.constructor === first.constructor)
    ) {
      const out = new (
        first.constructor as new (
          n: number,
        ) => DecodedArray & {
          set(a: ArrayLike<unknown>, at: number): void;
        }
      )(slots);
      let at = 0;
      for (const { present } of pages) {
        out.set(present, at);
        at += present.length;
      }
      return out;
    }
  }
  const out: unknown[] = new Array(slots);
  let at = 0;
  for (const { present, defs } of pages) {
    if (defs === undefined) {
      for (let i = 0; i < present.length; i++) out[at++] = present[i];
      continue;
    }
    let next = 0;
    for (const def of defs) {
      if (def === leaf.maxLevel) out[at++] = present[next++];
      else if (def >= leaf.slotLevel) out[at++] = null;
    }
  }
  return out;
}
