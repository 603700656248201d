// A Parquet file written by hyparquet-writer (an independent writer, of any rows a test gives,
// nested lists and maps included) with its version 2 data pages rewritten as version 1 pages,
// the only ones this package's reader takes: so a test can give the reader a file of this
// package's schema whose rows no exporter would write (parallel lists of unequal lengths, ...).
import { type ColumnChunk, parquetMetadata, type SchemaElement } from 'hyparquet';
import { ByteWriter, parquetWriteBuffer } from 'hyparquet-writer';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
// @ts-expect-error hyparquet ships no types for its internal modules
import { parquetHeader } from '../../node_modules/hyparquet/src/column.js';
// @ts-expect-error as above
import * as schemaTree from '../../node_modules/hyparquet/src/schema.js';
import { PAGE, page } from './hostile-parquet.js';

interface V2Header {
  type: string;
  compressed_page_size: number;
  data_page_header_v2?: {
    num_values: number;
    encoding: string;
    definition_levels_byte_length: number;
    repetition_levels_byte_length: number;
  };
}

const ENCODINGS = ['PLAIN', 'GROUP_VAR_INT', 'PLAIN_DICTIONARY', 'RLE', 'BIT_PACKED'];
ENCODINGS[5] = 'DELTA_BINARY_PACKED';
ENCODINGS[8] = 'RLE_DICTIONARY';

/** The schema's top-level fields' names. */
function topLevel(schema: readonly SchemaElement[]): string[] {
  const names: string[] = [];
  let i = 1;
  while (i < schema.length) {
    names.push((schema[i] as SchemaElement).name);
    let pending = (schema[i] as SchemaElement).num_children ?? 0;
    i++;
    while (pending > 0) {
      pending += ((schema[i] as SchemaElement).num_children ?? 0) - 1;
      i++;
    }
  }
  return names;
}

const u32 = (n: number) => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];

/**
 * The rows (objects by top-level field, as hyparquet reads them) as an uncompressed Parquet file
 * of `schema` with `kvMetadata`, in one row group, its data pages version 1.
 */
export function v1File(
  schema: SchemaElement[],
  kvMetadata: { key: string; value?: string }[],
  rows: readonly Record<string, unknown>[],
): Uint8Array {
  const v2 = new Uint8Array(
    parquetWriteBuffer({
      schema,
      columnData: topLevel(schema).map((name) => ({
        name,
        data: rows.map((r) => r[name]),
        encoding: 'PLAIN' as const,
      })),
      codec: 'UNCOMPRESSED',
      statistics: false,
      kvMetadata: kvMetadata.map(({ key, value }) => ({ key, value: value ?? '' })),
    }),
  );
  const metadata = parquetMetadata(v2.slice().buffer);
  const writer = new ByteWriter();
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  for (const group of metadata.row_groups) {
    for (const chunk of group.columns) rewriteChunk(v2, chunk, metadata.schema, writer);
  }
  writeMetadata(writer, metadata);
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  return new Uint8Array(writer.getBuffer());
}

/** Copies a column chunk into `writer` with its pages version 1, and points its metadata there. */
function rewriteChunk(
  file: Uint8Array,
  chunk: ColumnChunk,
  schema: SchemaElement[],
  writer: ByteWriter,
): void {
  const meta = chunk.meta_data;
  if (meta === undefined) throw new Error('no column metadata');
  const path = schemaTree.getSchemaPath(schema, meta.path_in_schema);
  const maxRep: number = schemaTree.getMaxRepetitionLevel(path);
  const maxDef: number = schemaTree.getMaxDefinitionLevel(path);
  const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
  const end = start + Number(meta.total_compressed_size);
  const reader = { view: new DataView(file.buffer, file.byteOffset), offset: start };
  const out = writer.offset;
  let dataOffset = -1;
  let dictionaryOffset: number | undefined;
  while (reader.offset < end) {
    const headerStart = reader.offset;
    const header = parquetHeader(reader) as V2Header;
    const body = file.subarray(reader.offset, reader.offset + header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    const v2 = header.data_page_header_v2;
    if (v2 === undefined) {
      if (header.type === 'DICTIONARY_PAGE') dictionaryOffset = writer.offset;
      writer.appendBytes(file.subarray(headerStart, reader.offset));
      continue;
    }
    if (dataOffset < 0) dataOffset = writer.offset;
    const rep = body.subarray(0, v2.repetition_levels_byte_length);
    const def = body.subarray(rep.length, rep.length + v2.definition_levels_byte_length);
    const values = body.subarray(rep.length + def.length);
    const v1: number[] = [];
    if (maxRep > 0) v1.push(...u32(rep.length), ...rep);
    if (maxDef > 0) v1.push(...u32(def.length), ...def);
    v1.push(...values);
    const encoding = ENCODINGS.indexOf(v2.encoding);
    writer.appendBytes(
      page(
        {
          field_1: PAGE.DATA_PAGE,
          field_5: { field_1: v2.num_values, field_2: encoding, field_3: 3, field_4: 3 },
        },
        v1,
      ),
    );
  }
  meta.data_page_offset = BigInt(dataOffset);
  meta.dictionary_page_offset =
    dictionaryOffset === undefined ? undefined : BigInt(dictionaryOffset);
  meta.total_compressed_size = BigInt(writer.offset - out);
  meta.total_uncompressed_size = BigInt(writer.offset - out);
  meta.encoding_stats = undefined;
  chunk.file_offset = BigInt(out);
  chunk.offset_index_offset = undefined;
  chunk.offset_index_length = undefined;
  chunk.column_index_offset = undefined;
  chunk.column_index_length = undefined;
}
