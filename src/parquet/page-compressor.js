// @ts-check
// compressPage for encodeParquet, chosen by measurement (docs/parquet.md, "The writer"). A
// Parquet page is small (bytes to a few hundred kilobytes) and its size is known, and the worker
// may block: node:zlib's one-shot zstdCompressSync sizes its context to the page and frees it
// when the call returns, and costs about what zstd-napi's reused context does; node:zlib's
// stream with flush(ZSTD_e_end) per page cost 2.5-4x that CPU in the same run (a thread-pool trip
// and stream bookkeeping per page). zstd-napi (runtimes without zstd in node:zlib) keeps one
// context (src/compression/compressors.js). gzip: gzipSync, whose context is freed likewise.
import * as zlib from 'node:zlib';
import { napiZstd } from '../compression/compressors.js';

/** @typedef {(page: Uint8Array) => Uint8Array | Promise<Uint8Array>} CompressPage */

/**
 * The compressPage of `compression` at `level`; undefined for 'none'.
 * @param {'zstd' | 'gzip' | 'none'} compression
 * @param {number} level
 * @param {'node:zlib' | 'zstd-napi'} [zstdEngine] required for zstd
 * @returns {CompressPage | undefined}
 */
export function pageCompressor(compression, level, zstdEngine) {
  if (compression === 'zstd') {
    if (zstdEngine === 'node:zlib') {
      const params = { [zlib.constants.ZSTD_c_compressionLevel]: level };
      return (page) => zlib.zstdCompressSync(page, { params });
    }
    if (zstdEngine === 'zstd-napi') {
      const napi = napiZstd(level);
      return (page) => napi.compress([page]);
    }
    throw new TypeError('pageCompressor: zstd needs a zstdEngine');
  }
  if (compression === 'gzip') return (page) => zlib.gzipSync(page, { level });
  return undefined;
}
