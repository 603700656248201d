// @ts-check
// A batch of OTLP/JSON records as one Parquet file, with its pages compressed by the codec of
// the exporter's compression. Loaded by bodies.js only for a Parquet format, in the worker.
import { pageCompressor } from '../parquet/page-compressor.js';
import { parquetBody } from '../parquet/write.js';

/** @param {import('./bodies.js').BodyOptions} o @returns {import('./bodies.js').Bodies} */
export function parquetMaker(o) {
  const compressPage = pageCompressor(o.compression, o.level, o.zstdEngine);
  return {
    make: (batch) => parquetBody(batch.records, { compression: o.compression, compressPage }),
    close: () => {},
  };
}
