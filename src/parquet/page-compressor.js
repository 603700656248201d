// @ts-check
// compressPage for encodeParquet: one reused zstd context per compressor (node:zlib's stream
// where node:zlib has zstd, zstd-napi's context elsewhere: src/compression/zstd-compressors.js),
// one frame per page. gzip compresses each page with gzipSync: its context is freed when the
// call returns, and a reused gzip stream (reset after each member) measured 3x the CPU per page.
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
    if (zstdEngine === undefined) throw new TypeError('pageCompressor: zstd needs a zstdEngine');
    if (zstdEngine === 'zstd-napi') {
      const napi = napiZstd(level);
      return (page) => napi.compress([page]);
    }
    const params = { [zlib.constants.ZSTD_c_compressionLevel]: level };
    return (page) => zlib.zstdCompressSync(page, { params });
  }
  if (compression === 'gzip') return (page) => zlib.gzipSync(page, { level });
  return undefined;
}
