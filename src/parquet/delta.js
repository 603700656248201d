// @ts-check
// DELTA_BINARY_PACKED for INT64 values (each as its low and high 32-bit words): blocks of 128
// deltas in 4 miniblocks of 32, each bit-packed at the width its largest (delta - block minimum)
// needs. A counter's values (ValueAsInt) and a histogram's counts (Count) grow by small steps
// along a series: this makes their pages a few bits a value instead of 8 bytes. Values
// are added one at a time (a page's values are spread over rows); blocks are written as they
// fill, the header (which starts with the count) when the page ends.
import { BitPacker, pack } from './bit-packer.js';
import { ByteWriter } from './byte-writer.js';

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

/** One page's values as DELTA_BINARY_PACKED; reused from page to page. */
export class DeltaWriter {
  lo = new Int32Array(BLOCK);
  hi = new Int32Array(BLOCK);
  packer = new BitPacker(1);
  blocks = new ByteWriter(1024);
  count = 0;
  pending = 0;
  firstLo = 0;
  firstHi = 0;
  prevLo = 0;
  prevHi = 0;

  /** Adds a value. @param {number} lo @param {number} hi */
  add(lo, hi) {
    if (this.count++ === 0) {
      this.firstLo = lo;
      this.firstHi = hi;
    } else {
      // The delta from the last value, 64-bit and wrapping.
      const dLo = (lo >>> 0) - (this.prevLo >>> 0);
      this.lo[this.pending] = dLo;
      this.hi[this.pending] = (hi - this.prevHi - (dLo < 0 ? 1 : 0)) | 0;
      if (++this.pending === BLOCK) this.#block();
    }
    this.prevLo = lo;
    this.prevHi = hi;
  }

  /** Writes the page's values to `w` and starts the next page. @param {ByteWriter} w */
  finish(w) {
    if (this.pending > 0) this.#block();
    w.varint(BLOCK);
    w.varint(MINIBLOCKS);
    w.varint(this.count);
    zigzag64(w, this.firstLo, this.firstHi);
    w.bytes(this.blocks.result());
    this.blocks.length = 0;
    this.count = 0;
  }

  /** Writes the pending deltas as a block: its minimum, the miniblocks' widths, the miniblocks. */
  #block() {
    const { lo, hi, blocks: w } = this;
    const count = this.pending;
    let minLo = /** @type {number} */ (lo[0]);
    let minHi = /** @type {number} */ (hi[0]);
    for (let i = 1; i < count; i++) {
      const dLo = /** @type {number} */ (lo[i]);
      const dHi = /** @type {number} */ (hi[i]);
      if (dHi < minHi || (dHi === minHi && dLo >>> 0 < minLo >>> 0)) {
        minLo = dLo;
        minHi = dHi;
      }
    }
    zigzag64(w, minLo, minHi);
    // delta - min ≥ 0, and each miniblock's width (0 for those past the last value).
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
    // The miniblocks that hold values, bit-packed at their width (padded to 32 values).
    for (let m = 0; m * MINIBLOCK < count; m++) {
      const width = /** @type {number} */ (w.buf[widths + m]);
      if (width === 0) continue;
      if (width <= 24) this.#narrow(m, count, width);
      else {
        const { packer } = this;
        packer.room(MINIBLOCK * width);
        for (let i = m * MINIBLOCK; i < (m + 1) * MINIBLOCK; i++) {
          const vLo = i < count ? /** @type {number} */ (lo[i]) : 0;
          const vHi = i < count ? /** @type {number} */ (hi[i]) : 0;
          packer.bits64(vLo, vHi, width);
        }
        packer.drain(w);
      }
    }
    this.pending = 0;
  }

  /**
   * A miniblock whose values fit in 24 bits (the usual case: small deltas), packed straight into
   * the blocks (32 values × width bits: a whole number of bytes).
   * @param {number} m @param {number} count @param {number} width
   */
  #narrow(m, count, width) {
    const w = this.blocks;
    const at = w.reserve(4 * width);
    const from = m * MINIBLOCK;
    pack(w.buf, at, this.lo, from, Math.min(count, from + MINIBLOCK), MINIBLOCK, width);
  }
}
