// @ts-check
// A batch's records (one OTLP/JSON ResourceMetrics each, as the JSON writer makes them) as one
// Parquet file, in the body worker. A bridge until the exporter appends to ColumnBuilders on the
// main thread and hands the worker sealed columns: then the worker parses no JSON at all.
import { appendRequest } from './append-otlp.js';
import { ColumnStore } from './column-store.js';
import { encodeParquet } from './encode.js';

const utf8 = new TextDecoder();

/**
 * The Parquet bytes of a batch of OTLP/JSON records.
 * @param {Uint8Array[]} records
 * @param {{ compression: 'zstd' | 'gzip' | 'none', compressPage: import('../compression/compressors.js').PageCompressor['compressPage'] | undefined }} options
 * @returns {Promise<Uint8Array>}
 */
export function parquetBody(records, options) {
  const store = new ColumnStore();
  // One record parsed at a time: its tree is garbage once its points are in the columns.
  for (const record of records) {
    appendRequest(store, { resourceMetrics: [JSON.parse(utf8.decode(record))] });
  }
  return encodeParquet(store.seal(), {
    compression: options.compression,
    ...(options.compressPage === undefined ? {} : { compressPage: options.compressPage }),
  });
}
