// @ts-check
// A batch's records (one OTLP/JSON ResourceMetrics each, as the JSON writer makes them) as one
// Parquet file. Runs in the body worker: parsing, flattening and column encoding are CPU work on
// megabytes.
import { ByteWriter, parquetWrite } from 'hyparquet-writer';
import { TableBuilder } from './rows.js';
import { ROW_GROUP_ROWS, SCHEMA, SCHEMA_VERSION, SCHEMA_VERSION_KEY } from './schema.js';

/** @typedef {'ZSTD' | 'GZIP' | 'UNCOMPRESSED'} Codec */
/** @typedef {(input: Uint8Array) => Uint8Array} Compress */

const utf8 = new TextDecoder();

/**
 * The Parquet bytes of a batch. `compress` compresses one page for `codec` (unused for
 * UNCOMPRESSED). Throws on records that are not OTLP/JSON ResourceMetrics.
 * @param {Uint8Array[]} records
 * @param {{ codec: Codec, compress: Compress | undefined, createdBy: string }} options
 * @returns {Uint8Array}
 */
export function parquetBody(records, options) {
  // One record parsed at a time: its tree is garbage once its rows are in the columns.
  const table = new TableBuilder();
  for (const record of records) table.addResourceMetrics(JSON.parse(utf8.decode(record)));
  const { columns } = table.build();
  const writer = new ByteWriter();
  parquetWrite({
    writer,
    schema: SCHEMA,
    columnData: /** @type {import('hyparquet-writer').ColumnSource[]} */ (columns),
    codec: options.codec,
    ...(options.compress === undefined
      ? {}
      : { compressors: { [options.codec]: options.compress } }),
    rowGroupSize: ROW_GROUP_ROWS,
    kvMetadata: [{ key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION }],
    createdBy: options.createdBy,
  });
  // A trimmed copy that owns its memory: it is transferred back to the main thread.
  return new Uint8Array(writer.getBuffer());
}
