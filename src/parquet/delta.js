// @ts-check
// DELTA_BINARY_PACKED for INT64 values held as Int32 pairs (low word, high word): blocks of 128
// deltas in 4 miniblocks of 32, each bit-packed at the width its largest (delta - block minimum)
// needs. The bucket counts of histograms are long runs of small numbers: this makes their pages
// a few bits a value instead of 8 bytes, which is what zstd and readers then go through.
import { BitPacker } from './bit-packer.js';

/** @typedef {import('./byte-writer.js').ByteWriter} ByteWriter */

const BLOCK = 128;
const MINIBLOCKS = 4;
const MINIBLOCK = BLOCK / MINIBLOCKS;

/** A signed 64-bit integer (lo, hi) zigzag-encoded as ULEB128. @param {ByteWriter} w @param {number} lo @param {number} hi */
function zigzag64(w, lo, hi) {
  const sign = hi >> 31;
  let zlo = ((lo << 1) ^ sign) >>> 0;
  let zhi = (((hi << 1) | (lo >>> 31)) ^ sign) >>> 0;
  while (zhi !== 0 || zlo >= 0x80) {
    w.byte((zlo & 0x7f) | 0x80);
    zlo = ((zlo >>> 7) | (zhi << 25)) >>> 0;
    zhi >>>= 7;
  }
  w.byte(zlo);
}

/** Bits needed for an unsigned 64-bit value whose words OR to (lo, hi). @param {number} lo @param {number} hi */
const widthOf = (lo, hi) => (hi !== 0 ? 64 - Math.clz32(hi) : 32 - Math.clz32(lo));

/** Work arrays for the deltas of a page, reused. */
export class DeltaScratch {
  lo = new Int32Array(BLOCK);
  hi = new Int32Array(BLOCK);
  packer = new BitPacker(1);
}

/**
 * Writes values[0, n) (Int32 pairs from `pairs[2 * first]` on) as DELTA_BINARY_PACKED.
 * @param {ByteWriter} w @param {Int32Array} pairs @param {number} first @param {number} n
 * @param {DeltaScratch} scratch
 */
export function writeDeltaInt64(w, pairs, first, n, scratch) {
  w.varint(BLOCK);
  w.varint(MINIBLOCKS);
  w.varint(n);
  if (n === 0) {
    w.byte(0);
    return;
  }
  let prevLo = /** @type {number} */ (pairs[2 * first]);
  let prevHi = /** @type {number} */ (pairs[2 * first + 1]);
  zigzag64(w, prevLo, prevHi);
  const { lo, hi, packer } = scratch;
  for (let at = 1; at < n; at += BLOCK) {
    const count = Math.min(BLOCK, n - at);
    // The block's deltas (64-bit, wrapping) and their minimum (signed).
    let minLo = 0;
    let minHi = 0;
    for (let i = 0; i < count; i++) {
      const curLo = /** @type {number} */ (pairs[2 * (first + at + i)]);
      const curHi = /** @type {number} */ (pairs[2 * (first + at + i) + 1]);
      const dLo = (curLo >>> 0) - (prevLo >>> 0);
      const dHi = (curHi - prevHi - (dLo < 0 ? 1 : 0)) | 0;
      lo[i] = dLo;
      hi[i] = dHi;
      if (i === 0 || dHi < minHi || (dHi === minHi && dLo >>> 0 < minLo >>> 0)) {
        minLo = dLo;
        minHi = dHi;
      }
      prevLo = curLo;
      prevHi = curHi;
    }
    zigzag64(w, minLo, minHi);
    // delta - min ≥ 0, and each miniblock's width.
    const widths = w.reserve(MINIBLOCKS);
    for (let m = 0; m < MINIBLOCKS; m++) {
      let orLo = 0;
      let orHi = 0;
      const end = Math.min(count, (m + 1) * MINIBLOCK);
      for (let i = m * MINIBLOCK; i < end; i++) {
        const dLo = /** @type {number} */ (lo[i]);
        const dHi = /** @type {number} */ (hi[i]);
        const aLo = (dLo >>> 0) - (minLo >>> 0);
        const aHi = (dHi - minHi - (aLo < 0 ? 1 : 0)) | 0;
        lo[i] = aLo;
        hi[i] = aHi;
        orLo |= aLo;
        orHi |= aHi;
      }
      w.buf[widths + m] = end > m * MINIBLOCK ? widthOf(orLo, orHi) : 0;
    }
    // Miniblocks with values, bit-packed at their width (padded to 32 values).
    for (let m = 0; m * MINIBLOCK < count; m++) {
      const width = /** @type {number} */ (w.buf[widths + m]);
      if (width === 0) continue;
      packer.room(MINIBLOCK * width);
      for (let i = m * MINIBLOCK; i < (m + 1) * MINIBLOCK; i++) {
        const vLo = i < count ? /** @type {number} */ (lo[i]) : 0;
        const vHi = i < count ? /** @type {number} */ (hi[i]) : 0;
        packer.bits64(vLo, vHi, width);
      }
      packer.drain(w);
    }
  }
}
