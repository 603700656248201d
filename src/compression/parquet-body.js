// @ts-check
// A batch's sealed columns as one Parquet file, its pages compressed with the codec of the
// exporter's compression. Loaded by bodies.js only for a Parquet format, in the worker: the
// columns arrive by transfer, and nothing here parses JSON.
import { encodeParquet } from '../parquet/encode.js';
import { createPageCompressor } from './compressors.js';

/** @param {import('./bodies.js').BodyOptions} o @returns {import('./bodies.js').ColumnBodies} */
export function parquetMaker(o) {
  const compression = o.compression;
  const pages = createPageCompressor({ compression, level: o.level, engine: o.zstdEngine });
  return {
    make: (batch) =>
      encodeParquet(batch.columns, { compression, compressPage: pages.compressPage }),
    close: pages.close,
  };
}
