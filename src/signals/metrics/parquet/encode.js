// @ts-check
// encodeParquet: sealed columns (sealed.js) → one Parquet file of the schema in schema.js, its
// rows sorted: one run of ParquetFileWriter (file-writer.js), which also writes files of many
// runs (the compactor's).
import { ParquetFileWriter } from './file-writer.js';

export { CREATED_BY } from './file-writer.js';

/**
 * @typedef {import('./file-writer.js').FileWriterOptions & {
 *   keyValueMetadata?: import('./file-writer.js').KeyValue[],
 * }} EncodeOptions `keyValueMetadata` is written after otel_s3.schema_version
 */

/**
 * The Parquet file of the sealed columns. `sealed` is not changed.
 * @param {import('./sealed.js').SealedColumns} sealed
 * @param {EncodeOptions} options
 * @returns {Promise<Uint8Array>} a buffer of its own (transferable)
 */
export async function encodeParquet(sealed, options) {
  const writer = new ParquetFileWriter(options);
  await writer.writeRun(sealed);
  return writer.finish(options.keyValueMetadata).slice();
}
