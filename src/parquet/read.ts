import {
  type AsyncBuffer,
  type FileMetaData,
  type ParquetRow,
  parquetMetadata,
  parquetReadObjects,
  parquetSchema,
  type RowGroup,
  type SchemaElement,
  type SchemaTree,
} from 'hyparquet';
import { objectBudget } from '../encoding/decode-request.js';
import type { Compression } from '../layout/formats.js';
import { type FlatRepeated, type LeafValues, readFlatColumns, Utf8Values } from './flat-columns.js';
import { checkPages, ValueBudget } from './page-bounds.js';
import { checkThriftSize } from './thrift-bounds.js';

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

/** The schema a reader expects: its version, and its elements as the writer writes them. */
export interface ExpectedSchema {
  version: string;
  schema: readonly SchemaElement[];
}

/** A Parquet file whose footer names another schema version (or none): `found`. */
export class SchemaVersionError extends Error {
  readonly found: string | undefined;
  constructor(message: string, found: string | undefined) {
    super(message);
    this.name = 'SchemaVersionError';
    this.found = found;
  }
}

/**
 * The footer's metadata (a whole file, or its last bytes from the footer on); throws unless its
 * key-value metadata says `key` is `expected.version` and its schema is `expected.schema`,
 * element for element. The version alone is a claim anyone can write: hyparquet follows the
 * schema a file gives (nesting, logical types it converts, fixed lengths), and some of those
 * cost it memory or time out of all proportion to the file (a variant whose offsets repeat, a
 * hundred nested groups, a decimal of megabytes). Only this package's own are read. The footer
 * is parsed only if it holds no more structs and lists than a read of `maxDecompressedBytes`
 * builds (thrift-bounds.ts).
 */
export function schemaMetadata(
  bytes: ArrayBuffer | Uint8Array,
  key: string,
  expected: ExpectedSchema,
  maxDecompressedBytes: number,
): FileMetaData {
  checkFooterSize(
    bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes),
    maxDecompressedBytes,
  );
  const metadata = parquetMetadata(bytes);
  const found = metadata.key_value_metadata?.find((kv) => kv.key === key)?.value;
  if (found !== expected.version) {
    throw new SchemaVersionError(
      `not an otel-s3-exporter Parquet file of schema version ${expected.version} (${key}: ${found ?? 'none'})`,
      found,
    );
  }
  const differs = schemaDifference(metadata.schema, expected.schema) ?? chunkDifference(metadata);
  if (differs !== undefined) {
    throw new Error(
      `not an otel-s3-exporter Parquet file of schema version ${expected.version}: ${differs}`,
    );
  }
  return metadata;
}

/** Throws for a footer of more structs and lists than a read builds; a malformed end is parquetMetadata's to refuse. */
function checkFooterSize(file: Uint8Array, maxDecompressedBytes: number): void {
  if (file.length < 8) return;
  const length = new DataView(file.buffer, file.byteOffset, file.byteLength).getUint32(
    file.length - 8,
    true,
  );
  if (length > file.length - 8) return;
  const footer = file.subarray(file.length - 8 - length, file.length - 8);
  checkThriftSize(footer, 0, objectBudget(maxDecompressedBytes), 'a Parquet footer');
}

/** What an element is, as far as reading it goes. */
const SCHEMA_FIELDS = [
  'name',
  'type',
  'type_length',
  'repetition_type',
  'num_children',
  'converted_type',
  'logical_type',
  'scale',
  'precision',
] as const;

/** The first difference between a file's schema and the expected one, if any. */
function schemaDifference(
  found: readonly SchemaElement[],
  expected: readonly SchemaElement[],
): string | undefined {
  if (found.length !== expected.length) {
    return `${found.length} schema elements, not ${expected.length}`;
  }
  for (let i = 1; i < expected.length; i++) {
    const [f, e] = [found[i], expected[i]] as [SchemaElement, SchemaElement];
    for (const field of SCHEMA_FIELDS) {
      // Objects (a logical type) by their JSON; the rest as they are (every file read).
      const [x, y] = [f[field], e[field]];
      if (x === y) continue;
      const [a, b] = [JSON.stringify(x), JSON.stringify(y)];
      if (typeof x !== 'object' || typeof y !== 'object' || a !== b)
        return `schema element ${i} (${e.name}) has ${field} ${a ?? 'none'}, not ${b ?? 'none'}`;
    }
  }
  if (found[0]?.num_children !== expected[0]?.num_children) return 'another number of columns';
  return undefined;
}

/** Each leaf column's path and physical type, in the schema's order (the writer's order of chunks). */
function leafColumns(metadata: FileMetaData): { path: string; type: string | undefined }[] {
  const leaves: { path: string; type: string | undefined }[] = [];
  const walk = (node: SchemaTree, path: readonly string[]): void => {
    if (node.children.length === 0)
      leaves.push({ path: JSON.stringify(path), type: node.element.type });
    for (const child of node.children) walk(child, [...path, child.element.name]);
  };
  for (const child of parquetSchema(metadata).children) walk(child, [child.element.name]);
  return leaves;
}

/**
 * The first column chunk of a row group that is not the schema's leaf column at its place, of
 * its type, if any. hyparquet decodes a chunk by the type its own footer entry claims, and
 * gives a row nothing for a column no chunk is for: a footer whose chunks are not the schema's
 * would be read as rows with times, durations or names made up.
 */
function chunkDifference(metadata: FileMetaData): string | undefined {
  const leaves = leafColumns(metadata);
  const ranges: { start: number; end: number; name: string }[] = [];
  for (const [g, group] of metadata.row_groups.entries()) {
    if (group.columns.length !== leaves.length) {
      return `row group ${g} has ${group.columns.length} column chunks, not ${leaves.length}`;
    }
    for (const [i, chunk] of group.columns.entries()) {
      const leaf = leaves[i] as { path: string; type: string | undefined };
      const meta = chunk.meta_data;
      const path = meta === undefined ? undefined : JSON.stringify(meta.path_in_schema);
      if (meta === undefined || path !== leaf.path || meta.type !== leaf.type) {
        return `row group ${g}'s column chunk ${i} is ${path ?? 'without metadata'} of ${meta?.type ?? 'no type'}, not ${leaf.path} of ${leaf.type}`;
      }
      // Where hyparquet starts reading the chunk (page-bounds.ts, checkPages, reads it the same).
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const end = start + Number(meta.total_compressed_size);
      // A chunk of no bytes shares none.
      if (end > start) ranges.push({ start, end, name: path });
    }
  }
  return overlap(ranges);
}

/**
 * Two column chunks whose stored bytes overlap, if any: a writer stores each chunk once, one
 * after another, and a chunk pointing into another's bytes would be read as that column's
 * values (a span's name read from its kind's).
 */
function overlap(ranges: { start: number; end: number; name: string }[]): string | undefined {
  ranges.sort((a, b) => a.start - b.start);
  for (let i = 1; i < ranges.length; i++) {
    const [before, after] = [ranges[i - 1], ranges[i]] as [(typeof ranges)[0], (typeof ranges)[0]];
    if (after.start < before.end) {
      return `column chunks ${before.name} and ${after.name} overlap in the file`;
    }
  }
  return undefined;
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
  read: {
    file: AsyncBuffer;
    metadata: FileMetaData;
    rowStart?: number;
    rowEnd?: number;
    /** Only these top-level columns (each row then holds only them). */
    columns?: string[];
  },
  decompression: PageDecompression,
): Promise<RowsRead> {
  await checkPages(read, budgeted(decompression).compressors, valueBudget(decompression));
  const budget = budgeted(decompression);
  const rows = await parquetReadObjects({
    ...read,
    metadata: withoutMaps(read.metadata),
    compressors: budget.compressors,
    parsers: ROW_PARSERS,
  });
  return { rows: mapsAsEntries(read.metadata, rows), rawBytes: budget.used() };
}

const isMap = (e: SchemaElement): boolean =>
  e.converted_type === 'MAP' || e.logical_type?.type === 'MAP';

/**
 * The metadata with its MAP groups unannotated, so hyparquet reads each map as a struct of its
 * entries, `{ key_value: [{ key, value }, ...] }`, not as an object it assigns them to: there a
 * key "__proto__" sets the prototype and is lost (and of two equal keys only the last is kept).
 */
function withoutMaps(metadata: FileMetaData): FileMetaData {
  const schema = metadata.schema.map((e) =>
    isMap(e) ? { ...e, converted_type: undefined, logical_type: undefined } : e,
  );
  return { ...metadata, schema };
}

/**
 * Rows read withoutMaps(), with each MAP column's value (a map, or a list of maps: the shapes of
 * this package's schemas) as its entries, `[{ key, value }, ...]`, in their stored order, every
 * key kept (signals/parquet-values.ts, mapAttributes, takes them so).
 */
function mapsAsEntries(metadata: FileMetaData, rows: ParquetRow[]): ParquetRow[] {
  const entries = (node: SchemaTree, value: unknown): unknown => {
    if (value === null || value === undefined) return value;
    if (isMap(node.element)) {
      const name = node.children[0]?.element.name ?? '';
      return (value as Record<string, unknown>)[name] ?? [];
    }
    const element = node.children[0]?.children[0];
    if (element !== undefined && Array.isArray(value)) return value.map((v) => entries(element, v));
    return value;
  };
  const hasMap = (node: SchemaTree): boolean =>
    isMap(node.element) || node.children.some((c) => hasMap(c));
  const columns = parquetSchema(metadata).children.filter(hasMap);
  for (const row of rows) {
    for (const column of columns) {
      const name = column.element.name;
      row[name] = entries(column, row[name]);
    }
  }
  return rows;
}

/** A row group's columns, read flat (flat-columns.ts). */
export interface ColumnsRead {
  /** Each plain column's values, one a row. */
  columns: Map<string, LeafValues>;
  /** Each list and map column: its elements, and where each row's start. */
  flat: Map<string, FlatRepeated>;
  /** Read coded: the plain columns whose values are indices into these dictionaries. */
  dictionaries: Map<string, ArrayLike<unknown>>;
  rows: number;
  /** Decompressed bytes of the pages read. */
  rawBytes: number;
}

/**
 * The columns of row group `group` of a file, its `rows` rows (as the caller checked them),
 * read flat (flat-columns.ts) from the group's stored bytes, which start at `start` in the file:
 * no object or array a row, as a compaction takes them; `coded`: strings as dictionary indices
 * where a chunk's pages allow (FlatColumns.dictionaries).
 */
export function readColumns(
  read: {
    metadata: FileMetaData;
    group: number;
    rows: number;
    bytes: Uint8Array;
    start: number;
    coded?: boolean;
  },
  decompression: PageDecompression,
): ColumnsRead {
  const budget = budgeted(decompression);
  const { columns, repeated, dictionaries } = readFlatColumns(
    read.metadata,
    read.group,
    read.bytes,
    read.start,
    read.rows,
    budget.compressors,
    ROW_PARSERS,
    valueBudget(decompression),
    read.coded,
  );
  return { columns, flat: repeated, dictionaries, rows: read.rows, rawBytes: budget.used() };
}

/**
 * Rows `indices` (0-based in the row group) of columns read flat, as readRows gives them (maps
 * as their entries, lists as arrays, a list of maps as an array of entries), in the schema's
 * column order: the row group's pages are decoded once, and only these rows are made.
 */
export function rowsAt(
  metadata: FileMetaData,
  read: Pick<ColumnsRead, 'columns' | 'flat'>,
  indices: readonly number[],
): ParquetRow[] {
  const names = parquetSchema(metadata).children.map((c) => c.element.name);
  const rows: ParquetRow[] = indices.map(() => ({}));
  for (const name of names) {
    const plain = read.columns.get(name);
    const repeated = read.flat.get(name);
    indices.forEach((r, n) => {
      const row = rows[n] as ParquetRow;
      if (plain !== undefined) row[name] = valueAt(plain, r);
      else if (repeated !== undefined) row[name] = repeatedAt(repeated, r);
    });
  }
  return rows;
}

const valueAt = (values: LeafValues, k: number): unknown =>
  values instanceof Utf8Values ? values.text(k) : values[k];

function repeatedAt(column: FlatRepeated, row: number): unknown[] {
  const { values, keys, offsets, items } = column;
  const entries = (from: number, to: number) => {
    const out: unknown[] = [];
    for (let k = from; k < to; k++) {
      out.push(
        keys === undefined
          ? valueAt(values, k)
          : { key: valueAt(keys, k), value: valueAt(values, k) },
      );
    }
    return out;
  };
  const from = offsets[row] as number;
  const to = offsets[row + 1] as number;
  if (items === undefined) return entries(from, to);
  const list: unknown[] = [];
  for (let j = from; j < to; j++) list.push(entries(items[j] as number, items[j + 1] as number));
  return list;
}

/** Where a row group's column chunks are stored, [start, end): checked to lie inside the file. */
export function groupBytes(group: RowGroup, fileBytes: number): { start: number; end: number } {
  let start = Number.POSITIVE_INFINITY;
  let end = 0;
  for (const column of group.columns) {
    const meta = column.meta_data;
    if (meta === undefined) throw new Error('a Parquet column chunk without metadata');
    // As hyparquet takes it: an offset of 0 (the file's magic) is no dictionary page.
    const first = Number(meta.dictionary_page_offset || meta.data_page_offset);
    start = Math.min(start, first);
    end = Math.max(end, first + Number(meta.total_compressed_size));
  }
  if (group.columns.length === 0) start = end = 0;
  if (!(start >= 4 && end >= start && end <= fileBytes - 8)) {
    throw new Error('a Parquet row group outside the file');
  }
  return { start, end };
}

/** A read decodes at most as many values as it may decompress bytes. */
const valueBudget = (decompression: PageDecompression) =>
  new ValueBudget(decompression.maxDecompressedBytes);

/** Page decompressors that share one budget of decompressed bytes. */
function budgeted(decompression: PageDecompression) {
  const budget = decompression.maxDecompressedBytes;
  let left = budget;
  const within =
    (compression: Exclude<Compression, 'none'>) => (input: Uint8Array, outputLength: number) => {
      // Bounded by the read's budget, not by the page's header: a page that decompresses to more
      // than its header says is damaged, and refusing it as over the limit would name the
      // header's size as the limit, and a limit to raise that raising does not help. zlib takes
      // no limit below 1 byte; an empty page still decompresses to nothing.
      const out = decompression.decompress(compression, input, Math.max(1, left));
      if (out.length > outputLength) {
        throw new Error(
          `a Parquet page that decompresses to more than the ${outputLength} bytes its header says`,
        );
      }
      left -= out.length;
      return out;
    };
  return {
    compressors: { ZSTD: within('zstd'), GZIP: within('gzip') },
    used: () => budget - left,
  };
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
