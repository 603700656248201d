// @ts-check
// Parquet's split-block bloom filter (parquet-format BloomFilter.md): a bitset of 256-bit blocks,
// each eight 32-bit words. A value's 64-bit hash (xxHash64, seed 0, of its plain encoding:
// bloom-hash.js) picks a block by its upper 32 bits, ((upper * blocks) >> 32), and sets one bit in
// each word of it by its lower 32 bits: word i gets bit ((lower * SALT[i]) mod 2^32) >> 27. The
// file holds a BloomFilterHeader (Thrift) and then the bitset, its words little-endian.
// Which columns get one, and where it is written: file-writer.js (FileWriterOptions.bloomFilters).
import { structBytes } from './thrift.js';

/** The spec's eight odd constants, one per word of a block. */
const SALT = new Uint32Array([
  0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
]);

/** The smallest bitset: one block. */
export const MIN_BLOOM_BYTES = 32;
/** The largest bitset a reader is asked to take (parquet-java's and Arrow's bound too). */
export const MAX_BLOOM_BYTES = 128 * 1024 * 1024;

/**
 * Bytes of the bitset for `ndv` distinct values at false-positive probability `fpp`: the spec's
 * -8 / ln(1 - fpp^(1/8)) bits a value, rounded up to a power of two, from one block to `maxBytes`
 * (itself a power of two). A filter at maxBytes holding more values than it was sized for has a
 * higher false-positive rate, never false negatives.
 * @param {number} ndv @param {number} fpp @param {number} maxBytes
 */
export function bloomFilterBytes(ndv, fpp, maxBytes) {
  const bits = (-8 * ndv) / Math.log(1 - fpp ** (1 / 8));
  let bytes = MIN_BLOOM_BYTES;
  while (bytes < maxBytes && bytes * 8 < bits) bytes *= 2;
  return bytes;
}

/** A split-block bloom filter of a power-of-two size; hashes come as their two 32-bit halves. */
export class SplitBlockBloomFilter {
  /** @param {number} numBytes a power of two, MIN_BLOOM_BYTES to MAX_BLOOM_BYTES */
  constructor(numBytes) {
    if (
      !Number.isInteger(numBytes) ||
      numBytes < MIN_BLOOM_BYTES ||
      numBytes > MAX_BLOOM_BYTES ||
      (numBytes & (numBytes - 1)) !== 0
    ) {
      throw new RangeError(`a bloom filter's size is a power of two bytes, not ${numBytes}`);
    }
    this.words = new Uint32Array(numBytes / 4);
    this.blocks = numBytes / 32;
  }

  /** The first word of the block of a hash whose upper 32 bits are `upper`. @param {number} upper */
  #block(upper) {
    // upper < 2^32 and blocks <= 2^22: the product is exact in a double.
    return Math.floor((upper * this.blocks) / 0x1_0000_0000) * 8;
  }

  /**
   * A filter read back from its bitset (little-endian words, as bytes() writes it and the spec
   * stores it); throws for a size that is no filter's.
   * @param {Uint8Array} bitset
   */
  static fromBitset(bitset) {
    const filter = new SplitBlockBloomFilter(bitset.length);
    const view = new DataView(bitset.buffer, bitset.byteOffset, bitset.byteLength);
    for (let i = 0; i < filter.words.length; i++) filter.words[i] = view.getUint32(i * 4, true);
    return filter;
  }

  /**
   * False when a value of this hash was never inserted; true when it may have been.
   * @param {number} upper bits 63..32 @param {number} lower bits 31..0
   */
  mayContain(upper, lower) {
    const words = this.words;
    const at = this.#block(upper >>> 0);
    for (let i = 0; i < 8; i++) {
      const bit = 1 << (Math.imul(lower, /** @type {number} */ (SALT[i])) >>> 27);
      const word = /** @type {number} */ (words[at + i]);
      if ((word & bit) === 0) return false;
    }
    return true;
  }

  /** Adds a value by its hash. @param {number} upper bits 63..32 @param {number} lower bits 31..0 */
  insert(upper, lower) {
    const words = this.words;
    const at = this.#block(upper >>> 0);
    for (let i = 0; i < 8; i++) {
      words[at + i] =
        /** @type {number} */ (words[at + i]) |
        (1 << (Math.imul(lower, /** @type {number} */ (SALT[i])) >>> 27));
    }
  }

  /**
   * The filter as a file holds it: its BloomFilterHeader (numBytes; algorithm BLOCK, hash XXHASH,
   * compression UNCOMPRESSED, each a union's first member) and the bitset (little-endian words:
   * the writer runs on little-endian machines only).
   */
  bytes() {
    const bitset = new Uint8Array(this.words.buffer, this.words.byteOffset, this.words.byteLength);
    const header = structBytes([
      [1, 'i32', bitset.length],
      [2, 'struct', [[1, 'struct', []]]],
      [3, 'struct', [[1, 'struct', []]]],
      [4, 'struct', [[1, 'struct', []]]],
    ]);
    const out = new Uint8Array(header.length + bitset.length);
    out.set(header);
    out.set(bitset, header.length);
    return out;
  }
}
