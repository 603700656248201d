// @ts-check
// compressPage for encodeParquet, chosen by measurement (docs/parquet.md, "The writer"). A
// Parquet page is small (bytes to a few hundred kilobytes) and its size is known, and the worker
// may block: node:zlib's one-shot zstdCompressSync sizes its context to the page and frees it
// when the call returns, and costs about what zstd-napi's reused context does; node:zlib's
// stream with flush(ZSTD_e_end) per page cost 2.5-4x that CPU in the same run (a thread-pool trip
// and stream bookkeeping per page). zstd-napi (runtimes without zstd in node:zlib) keeps one
// context (src/compression/compressors.js). gzip: gzipSync, whose context is freed likewise.
// A page under STORE_BELOW bytes is written as a frame that stores it uncompressed: a call costs
// tens of microseconds of fixed work and would save a few bytes.
import * as zlib from 'node:zlib';
import { napiZstd } from '../compression/compressors.js';

/** @typedef {(page: Uint8Array) => Uint8Array | Promise<Uint8Array>} CompressPage */

/** Pages smaller than this are stored, not compressed, in their zstd frame or gzip member. */
export const STORE_BELOW = 512;

/**
 * A zstd frame holding `page` as one raw block (RFC 8878): magic number, a frame header with
 * Single_Segment_flag and the content size (1 byte below 256, else 2 bytes holding size - 256),
 * and a last block of type Raw.
 * @param {Uint8Array} page (shorter than 65,792 bytes)
 */
export function storedZstdFrame(page) {
  const n = page.length;
  const sizeBytes = n < 256 ? 1 : 2;
  const out = new Uint8Array(4 + 1 + sizeBytes + 3 + n);
  out.set([0x28, 0xb5, 0x2f, 0xfd]);
  out[4] = (sizeBytes === 1 ? 0 : 0x40) | 0x20;
  if (sizeBytes === 1) out[5] = n;
  else {
    out[5] = (n - 256) & 0xff;
    out[6] = (n - 256) >> 8;
  }
  const block = 1 | (n << 3); // Last_Block, Block_Type 0 (Raw), Block_Size
  out.set([block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff], 5 + sizeBytes);
  out.set(page, 8 + sizeBytes);
  return out;
}

/**
 * A gzip member holding `page` as one stored deflate block (RFC 1952, RFC 1951).
 * @param {Uint8Array} page (shorter than 65,536 bytes)
 */
export function storedGzipMember(page) {
  const n = page.length;
  const out = new Uint8Array(10 + 5 + n + 8);
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]); // deflate, no flags, no time, OS unknown
  out.set([1, n & 0xff, n >> 8, ~n & 0xff, (~n >> 8) & 0xff], 10); // BFINAL, stored, LEN, NLEN
  out.set(page, 15);
  const view = new DataView(out.buffer);
  view.setUint32(15 + n, zlib.crc32(page) >>> 0, true);
  view.setUint32(19 + n, n, true);
  return out;
}

/**
 * The compressPage of `compression` at `level`; undefined for 'none'.
 * @param {'zstd' | 'gzip' | 'none'} compression
 * @param {number} level
 * @param {'node:zlib' | 'zstd-napi'} [zstdEngine] required for zstd
 * @returns {CompressPage | undefined}
 */
export function pageCompressor(compression, level, zstdEngine) {
  if (compression === 'zstd') {
    /** @type {CompressPage} */
    let zstd;
    if (zstdEngine === 'node:zlib') {
      const params = { [zlib.constants.ZSTD_c_compressionLevel]: level };
      zstd = (page) => zlib.zstdCompressSync(page, { params });
    } else if (zstdEngine === 'zstd-napi') {
      const napi = napiZstd(level);
      zstd = (page) => napi.compress([page]);
    } else throw new TypeError('pageCompressor: zstd needs a zstdEngine');
    return (page) => (page.length < STORE_BELOW ? storedZstdFrame(page) : zstd(page));
  }
  if (compression === 'gzip') {
    // zlib.crc32 came in Node 20.15; before it, small pages go through gzipSync too.
    const stored = typeof zlib.crc32 === 'function';
    return (page) =>
      stored && page.length < STORE_BELOW ? storedGzipMember(page) : zlib.gzipSync(page, { level });
  }
  return undefined;
}
