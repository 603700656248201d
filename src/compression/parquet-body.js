// @ts-check
// A batch of OTLP/JSON records as one Parquet file, with its pages compressed by the codec of
// the exporter's compression. Loaded by bodies.js only for a Parquet format, in the worker.
import { parquetBody } from '../parquet/write.js';
import { createPageCompressor } from './compressors.js';

/** @param {import('./bodies.js').BodyOptions} o @returns {import('./bodies.js').Bodies} */
export function parquetMaker(o) {
  const compression = o.compression;
  const pages = createPageCompressor({ compression, level: o.level, engine: o.zstdEngine });
  return {
    make: (batch) => parquetBody(batch.records, { compression, compressPage: pages.compressPage }),
    close: pages.close,
  };
}
