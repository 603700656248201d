// Parquet files as a hostile writer makes them: one column, one row group, pages whose headers
// hold whatever a test gives (thrift compact fields by number), serialized by hyparquet-writer
// (an independent writer) so that nothing here trusts this package's own.
import {
  type FileMetaData,
  type KeyValue,
  parquetMetadata,
  parquetSchema,
  type SchemaElement,
  type SchemaTree,
} from 'hyparquet';
import { ByteWriter } from 'hyparquet-writer';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import { serializeTCompactProtocol } from 'hyparquet-writer/src/thrift.js';
import { SCHEMA_VERSION_KEY } from '../../src/parquet/schema-elements.js';
import { encodeReplaces, REPLACES_KEY, type Replaces } from '../../src/reader/compacted.js';

/** PageType and Encoding as Parquet's thrift numbers them. */
export const PAGE = { DATA_PAGE: 0, INDEX_PAGE: 1, DICTIONARY_PAGE: 2, DATA_PAGE_V2: 3 };
export const ENCODING = {
  PLAIN: 0,
  PLAIN_DICTIONARY: 2,
  RLE: 3,
  DELTA_BINARY_PACKED: 5,
  DELTA_BYTE_ARRAY: 7,
  RLE_DICTIONARY: 8,
};

/** An unsigned varint (ULEB128). */
export function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** The header of an RLE run of `count` (its value follows, a byte for widths up to 8). */
export const rleRun = (count: number): number[] => varint(count * 2);

/**
 * A page: its header's fields (1: type, 2: uncompressed size, 3: compressed size, 5: data
 * page header, 7: dictionary page header, 8: version 2 header; the sizes default to the body's
 * length), then its body.
 */
export function page(fields: Record<string, unknown>, body: ArrayLike<number>): Uint8Array {
  const bytes = Uint8Array.from(body);
  const writer = new ByteWriter();
  const all: Record<string, unknown> = { field_2: bytes.length, field_3: bytes.length, ...fields };
  // The compact protocol writes fields in ascending order.
  const ordered = Object.fromEntries(
    Object.entries(all).sort(([a], [b]) => Number(a.slice(6)) - Number(b.slice(6))),
  );
  serializeTCompactProtocol(writer, ordered);
  const header = new Uint8Array(writer.getBuffer());
  const out = new Uint8Array(header.length + bytes.length);
  out.set(header);
  out.set(bytes, header.length);
  return out;
}

/** A version 1 data page: `values` level entries, in `encoding`, with `body`. */
export const dataPage = (values: number, encoding: number, body: ArrayLike<number>) =>
  page(
    {
      field_1: PAGE.DATA_PAGE,
      field_5: { field_1: values, field_2: encoding, field_3: ENCODING.RLE, field_4: ENCODING.RLE },
    },
    body,
  );

/**
 * A file of one column `c` (`type`, OPTIONAL or REQUIRED) and `rows` rows, its pages stored as
 * given, claiming to be of schema `version` (so that a reader gets as far as its pages).
 */
export function hostileFile(o: {
  type: 'INT32' | 'INT64' | 'BOOLEAN' | 'BYTE_ARRAY';
  repetition: 'OPTIONAL' | 'REQUIRED' | 'REPEATED';
  rows: number;
  pages: Uint8Array[];
  version: string;
  codec?: string;
}): Uint8Array {
  const writer = new ByteWriter();
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  const start = writer.offset;
  let size = 0;
  for (const p of o.pages) {
    writer.appendBytes(p);
    size += p.length;
  }
  writeMetadata(writer, {
    version: 2,
    schema: [
      { name: 'root', num_children: 1 },
      { name: 'c', type: o.type, repetition_type: o.repetition },
    ],
    num_rows: BigInt(o.rows),
    row_groups: [
      {
        columns: [
          {
            file_offset: BigInt(start),
            meta_data: {
              type: o.type,
              encodings: ['PLAIN'],
              path_in_schema: ['c'],
              codec: (o.codec ?? 'UNCOMPRESSED') as 'UNCOMPRESSED',
              num_values: BigInt(o.rows),
              total_uncompressed_size: BigInt(size),
              total_compressed_size: BigInt(size),
              data_page_offset: BigInt(start),
            },
          },
        ],
        total_byte_size: BigInt(size),
        num_rows: BigInt(o.rows),
      },
    ],
    key_value_metadata: [{ key: SCHEMA_VERSION_KEY, value: o.version }],
    created_by: 'a hostile writer',
    metadata_length: 0,
  });
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  return new Uint8Array(writer.getBuffer());
}

/**
 * A file of `schema` (claiming schema `version`) with one row group of `rows` rows and no pages:
 * every column chunk is empty.
 */
export function pagelessFile(
  schema: readonly SchemaElement[],
  version: string,
  rows: number,
): Uint8Array {
  const leaves: { path: string[]; type: SchemaElement['type'] }[] = [];
  const walk = (node: SchemaTree, path: string[]) => {
    if (node.children.length === 0) leaves.push({ path, type: node.element.type });
    for (const child of node.children) walk(child, [...path, child.element.name]);
  };
  walk(parquetSchema({ schema } as FileMetaData), []);
  const writer = new ByteWriter();
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  const start = BigInt(writer.offset);
  writeMetadata(writer, {
    version: 2,
    schema: [...schema],
    num_rows: BigInt(rows),
    row_groups: [
      {
        columns: leaves.map(({ path, type }) => ({
          file_offset: start,
          meta_data: {
            type: type ?? 'BYTE_ARRAY',
            encodings: ['PLAIN'],
            path_in_schema: path,
            codec: 'UNCOMPRESSED',
            num_values: BigInt(rows),
            total_uncompressed_size: 0n,
            total_compressed_size: 0n,
            data_page_offset: start,
          },
        })),
        total_byte_size: 0n,
        num_rows: BigInt(rows),
      },
    ],
    key_value_metadata: [{ key: SCHEMA_VERSION_KEY, value: version }],
    created_by: 'a hostile writer',
    metadata_length: 0,
  });
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  return new Uint8Array(writer.getBuffer());
}

/** `file` with its footer as `edit` leaves it, re-serialized by hyparquet-writer. */
export function withFooter(file: Uint8Array, edit: (metadata: FileMetaData) => void): Uint8Array {
  const footerBytes = new DataView(file.buffer, file.byteOffset).getUint32(file.length - 8, true);
  const metadata = parquetMetadata(file.slice().buffer);
  edit(metadata);
  const writer = new ByteWriter();
  writer.appendBytes(file.subarray(0, file.length - 8 - footerBytes));
  writeMetadata(writer, metadata);
  writer.appendBytes(new TextEncoder().encode('PAR1'));
  return new Uint8Array(writer.getBuffer());
}

/**
 * `file` as a compaction output: its footer lists `replaces(rows)` (rows: the file's own) as the
 * objects it replaces, then `extra` key-value pairs.
 */
export function withReplaces(
  file: Uint8Array,
  replaces: (rows: number) => Replaces,
  extra: KeyValue[] = [],
): Uint8Array {
  return withFooter(file, (m) => {
    m.key_value_metadata = [
      ...(m.key_value_metadata ?? []),
      { key: REPLACES_KEY, value: encodeReplaces(replaces(Number(m.num_rows))) },
      ...extra,
    ];
  });
}
