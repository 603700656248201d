// @ts-check
// Pages too small to be worth a compression call, in the frame their codec needs: a zstd frame
// of one raw block or a gzip member of one stored block. A call into node:zlib costs tens of
// microseconds of fixed work; a page of a few hundred bytes would gain a few bytes from it.
import { CODEC } from './footer.js';

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

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  return c;
});

/** CRC-32 (IEEE), as gzip's trailer holds it (zlib.crc32 is not in every supported Node 20). @param {Uint8Array} bytes */
function crc32(bytes) {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) {
    crc =
      /** @type {number} */ (CRC_TABLE[(crc ^ /** @type {number} */ (bytes[i])) & 0xff]) ^
      (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * `page` in a frame of `codec` (CODEC.ZSTD or CODEC.GZIP) without compressing it.
 * @param {number} codec @param {Uint8Array} page
 */
export function storedPage(codec, page) {
  return codec === CODEC.GZIP ? storedGzipMember(page) : storedZstdFrame(page);
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
  view.setUint32(15 + n, crc32(page), true);
  view.setUint32(19 + n, n, true);
  return out;
}
