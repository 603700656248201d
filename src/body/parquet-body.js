// @ts-check
// A batch's sealed columns as one Parquet file of its signal's schema, its pages compressed with
// the codec of the exporter's compression. Loaded by bodies.js only for a Parquet format, in the
// worker: the columns arrive by transfer, and nothing here parses JSON.
import { createPageCompressor } from '../compression/compressors.js';

/**
 * Each signal's encoder of sealed columns, loaded when its first file is made.
 * @type {Record<import('../signals/signal.js').SignalName,
 *   () => Promise<(columns: any, options: import('../parquet/file-writer.js').EncodeOptions) => Promise<Uint8Array>>>}
 */
const ENCODERS = {
  metrics: async () => (await import('../signals/metrics/parquet/encode.js')).encodeParquet,
  traces: async () =>
    (await import('../signals/flat-parquet/table.js')).flatEncoder(
      (await import('../signals/traces/parquet-schema.js')).SPANS,
    ),
  logs: async () =>
    (await import('../signals/flat-parquet/table.js')).flatEncoder(
      (await import('../signals/logs/parquet-schema.js')).LOG_RECORDS,
    ),
};

/** @param {import('./bodies.js').BodyOptions} o @returns {import('./bodies.js').ColumnBodies} */
export function parquetMaker(o) {
  const compression = o.compression;
  const pages = createPageCompressor({ compression, level: o.level, engine: o.zstdEngine });
  if (o.signal === undefined) throw new Error('a Parquet body needs its signal');
  const encoder = ENCODERS[o.signal]();
  return {
    make: async (batch) =>
      (await encoder)(batch.columns, { compression, compressPage: pages.compressPage }),
    close: pages.close,
  };
}
