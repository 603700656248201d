// @ts-check
// A dictionary of one chunk's INT64 values (the bucket counts of histograms), chosen per chunk by
// what it holds: where each distinct value is used DICTIONARY_MIN_USES times or more on average,
// the chunk is a PLAIN dictionary page of its distinct values in ascending (signed) order and
// RLE_DICTIONARY indices; otherwise its values are PLAIN. The indices are 8 or 16 bits wide (a
// whole number of bytes, however few entries): a series' next point repeats most of its list,
// and zstd finds that repeat only where it is a repeat of whole bytes (docs/parquet.md, "Column
// encodings", has the measurements).

import { keepShape } from '../base/kept-shapes.js';

/** Uses per distinct value, on average, from which a chunk is dictionary-encoded. */
export const DICTIONARY_MIN_USES = 64;
/** The most entries (16-bit indices); a chunk of more distinct values is PLAIN. */
const MAX_ENTRIES = 1 << 16;
/** Values 0 to SMALL - 1 are looked up in an array (16 KB), the rest in a Map. */
const SMALL = 1 << 12;
/** Exact as a double: |value| < 2^53, i.e. the high word within ±2^21. */
const HI_LIMIT = 1 << 21;

/** The value (lo, hi) as a double, or NaN where it is not exact. @param {number} lo @param {number} hi */
const keyOf = (lo, hi) =>
  hi >= HI_LIMIT || hi < -HI_LIMIT ? Number.NaN : hi * 2 ** 32 + (lo >>> 0);

/**
 * One chunk's dictionary at a time, reused (its lookup table stays allocated): add() every value
 * of the chunk, then build(); then index() gives a value's entry.
 */
export class Int64Dictionary {
  /** Per small value: its entry + 1 (0: not in the chunk). */
  small = new Int32Array(SMALL);
  /** Small values seen, to clear `small` for the next chunk. */
  smallSeen = new Int32Array(256);
  smallCount = 0;
  /** @type {Map<number, number>} other values: entry (−1 until build) */
  large = new Map();
  values = 0;
  /** False once a value is not exact as a double: the chunk is PLAIN. */
  exact = true;

  /** Starts a chunk. */
  reset() {
    for (let i = 0; i < this.smallCount; i++)
      this.small[/** @type {number} */ (this.smallSeen[i])] = 0;
    this.smallCount = 0;
    this.large.clear();
    this.values = 0;
    this.exact = true;
  }

  /** Counts one value of the chunk. @param {number} lo @param {number} hi */
  add(lo, hi) {
    this.values++;
    if (hi === 0 && lo >>> 0 < SMALL) {
      if (this.small[lo] === 0) {
        this.small[lo] = -1;
        if (this.smallCount === this.smallSeen.length) {
          const grown = new Int32Array(2 * this.smallSeen.length);
          grown.set(this.smallSeen);
          this.smallSeen = grown;
        }
        this.smallSeen[this.smallCount++] = lo;
      }
      return;
    }
    const key = keyOf(lo, hi);
    if (Number.isNaN(key)) this.exact = false;
    else if (!this.large.has(key)) this.large.set(key, -1);
  }

  /**
   * The chunk's dictionary, or undefined where its values are better PLAIN (too few uses a
   * value, more than 2^16 of them, or one beyond 2^53).
   * @param {number} minUses DICTIONARY_MIN_USES unless a test asks for another
   * @returns {import('./dictionaries.js').Dictionary | undefined}
   */
  build(minUses) {
    const entries = this.smallCount + this.large.size;
    if (!this.exact || entries === 0 || entries > MAX_ENTRIES || entries * minUses > this.values) {
      return undefined;
    }
    const keys = new Float64Array(entries);
    for (let i = 0; i < this.smallCount; i++) keys[i] = /** @type {number} */ (this.smallSeen[i]);
    let at = this.smallCount;
    for (const key of this.large.keys()) keys[at++] = key;
    keys.sort();
    const page = new Uint8Array(8 * entries);
    const view = new DataView(page.buffer);
    for (let i = 0; i < entries; i++) {
      const v = /** @type {number} */ (keys[i]);
      if (v >= 0 && v < SMALL) this.small[v] = i + 1;
      else this.large.set(v, i);
      const hi = Math.floor(v / 2 ** 32);
      view.setUint32(8 * i, v - hi * 2 ** 32, true);
      view.setInt32(8 * i + 4, hi, true);
    }
    return {
      ids: Array.from(keys),
      rank: new Int32Array(0),
      width: entries > 256 ? 16 : 8,
      page,
      sorted: true,
    };
  }

  /** The entry of a value of the chunk (after build). @param {number} lo @param {number} hi */
  index(lo, hi) {
    if (hi === 0 && lo >>> 0 < SMALL) return /** @type {number} */ (this.small[lo]) - 1;
    return /** @type {number} */ (this.large.get(keyOf(lo, hi)));
  }
}

// A file's dictionary is gone after it: its shape is kept (kept-shapes.js), its arrays left empty.
{
  const kept = keepShape(new Int64Dictionary());
  kept.small = new Int32Array(0);
  kept.smallSeen = new Int32Array(0);
}
