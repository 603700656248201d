// @ts-check
// A batch of OTLP/JSON records as one Parquet file, with its pages compressed by the codec of
// the exporter's compression. Loaded by bodies.js only for a Parquet format, in the worker.
import * as zlib from 'node:zlib';
import { parquetBody } from '../parquet/write.js';
import { napiZstd } from './compressors.js';

/** @param {import('./bodies.js').BodyOptions} o @returns {import('./bodies.js').Bodies} */
export function parquetMaker(o) {
  const compress = syncPageCompressor(o);
  const codec = o.parquetCodec;
  return {
    make: (batch) => parquetBody(batch.records, { codec, compress, createdBy: 'otel-s3-exporter' }),
    close: () => {},
  };
}

/**
 * A synchronous page compressor for today's writer (hyparquet-writer calls its compressor
 * synchronously). node:zlib has no synchronous call that reuses a context, so there it is a
 * one-shot per page until the writer takes compressors.js's createPageCompressor (issue 18).
 * @param {import('./bodies.js').BodyOptions} o @returns {((page: Uint8Array) => Uint8Array) | undefined}
 */
function syncPageCompressor(o) {
  if (o.compression === 'gzip') return (page) => zlib.gzipSync(page, { level: o.level });
  if (o.compression === 'none') return undefined;
  if (o.zstdEngine === 'zstd-napi') {
    const napi = napiZstd(o.level);
    return (page) => /** @type {Uint8Array} */ (napi.compress([page]));
  }
  const params = { [zlib.constants.ZSTD_c_compressionLevel]: o.level };
  return (page) => zlib.zstdCompressSync(page, { params });
}
