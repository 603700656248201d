/**
 * hyparquet-writer given what our writer is given: the columns already shredded into each leaf's
 * values and repetition/definition levels, written through its column and metadata writers
 * (`hyparquet-writer/src/*.js`), one row group. The shredding is done before the clock starts, so
 * the comparison is of the page, column and footer writing alone: the most favourable use of it.
 */
import type { ColumnChunk, DecodedArray, SchemaElement } from 'hyparquet';
import { ByteWriter } from 'hyparquet-writer';
import { writeColumn } from 'hyparquet-writer/src/column.js';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import { SCHEMA } from '../../src/signals/metrics/parquet/schema.js';

export interface Leaf {
  name: string;
  path: SchemaElement[];
  values: unknown[];
  definitionLevels: number[];
  repetitionLevels: number[];
  maxDefinitionLevel: number;
}

/** The schema's leaves, with their paths from the root (root excluded). */
function schemaLeaves(): { top: string; path: SchemaElement[] }[] {
  const out: { top: string; path: SchemaElement[] }[] = [];
  let i = 1;
  const walk = (prefix: SchemaElement[]) => {
    const e = SCHEMA[i++] as SchemaElement;
    const path = [...prefix, e];
    if (e.num_children === undefined) out.push({ top: (path[0] as SchemaElement).name, path });
    for (let c = 0; c < (e.num_children ?? 0); c++) walk(path);
  };
  while (i < SCHEMA.length) walk([]);
  return out;
}

/**
 * Rows as hyparquet reads them (MAP as plain objects, INT64 as bigint, timestamps as bigint
 * microseconds) shredded into every leaf's values and levels.
 */
export function shred(rows: Record<string, unknown>[]): Leaf[] {
  return schemaLeaves().map(({ top, path }) => {
    const leaf = path.at(-1) as SchemaElement;
    const leafName = path.map((e) => e.name).join('.');
    const values: unknown[] = [];
    const definitionLevels: number[] = [];
    const repetitionLevels: number[] = [];
    if (path.length === 1) {
      const optional = leaf.repetition_type === 'OPTIONAL';
      for (const row of rows) {
        const v = row[top] ?? null;
        values.push(v);
        if (optional) definitionLevels.push(v === null ? 0 : 1);
      }
      return {
        name: leafName,
        path,
        values,
        definitionLevels,
        repetitionLevels,
        maxDefinitionLevel: optional ? 1 : 0,
      };
    }
    const isMap = path.length === 3 && (path[1] as SchemaElement).name === 'key_value';
    const side = leaf.name; // key, value or element
    for (const row of rows) {
      const items: unknown[] = isMap
        ? Object.entries((row[top] ?? {}) as Record<string, unknown>).map(([k, v]) =>
            side === 'key' ? k : v,
          )
        : ((row[top] ?? []) as unknown[]);
      if (items.length === 0) {
        values.push(null);
        definitionLevels.push(0);
        repetitionLevels.push(0);
        continue;
      }
      items.forEach((v, i) => {
        values.push(v ?? null);
        repetitionLevels.push(i === 0 ? 0 : 1);
        definitionLevels.push(v === null || v === undefined ? 1 : side === 'value' ? 2 : 1);
      });
    }
    return {
      name: leafName,
      path,
      values,
      definitionLevels,
      repetitionLevels,
      maxDefinitionLevel: side === 'value' ? 2 : 1,
    };
  });
}

/** One file of the shredded leaves; `compress` compresses a page for ZSTD (synchronously). */
export function hyparquetWriterFile(
  leaves: Leaf[],
  rows: number,
  compress: (page: Uint8Array) => Uint8Array,
): Uint8Array {
  const writer = new ByteWriter();
  writer.appendUint32(0x31524150); // PAR1
  const columns: ColumnChunk[] = [];
  for (const leaf of leaves) {
    const { chunk } = writeColumn({
      writer,
      column: {
        columnName: leaf.name,
        element: leaf.path.at(-1) as SchemaElement,
        schemaPath: [SCHEMA[0] as SchemaElement, ...leaf.path],
        codec: 'ZSTD',
        compressors: { ZSTD: compress },
        stats: true,
        pageSize: 1 << 20,
        columnIndex: false,
        offsetIndex: false,
      },
      pageData: {
        values: leaf.values as DecodedArray,
        definitionLevels: leaf.definitionLevels,
        repetitionLevels: leaf.repetitionLevels,
        maxDefinitionLevel: leaf.maxDefinitionLevel,
      },
    });
    columns.push(chunk);
  }
  const total = columns.reduce((n, c) => n + (c.meta_data?.total_compressed_size ?? 0n), 0n);
  writeMetadata(writer, {
    version: 2,
    created_by: 'hyparquet-writer (bench)',
    schema: SCHEMA,
    num_rows: BigInt(rows),
    row_groups: [
      { columns, total_byte_size: total, num_rows: BigInt(rows), total_compressed_size: total },
    ],
    metadata_length: 0,
  });
  writer.appendUint32(0x31524150);
  return new Uint8Array(writer.getBuffer());
}
