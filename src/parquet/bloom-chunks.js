// @ts-check
// The bloom filter of a column chunk (FileWriterOptions.bloomFilters): its values read back from
// the chunk's uncompressed pages, as the spec hashes them: xxHash64 (seed 0) of each value's plain
// encoding (a BYTE_ARRAY's bytes without their length, an INT32's or INT64's little-endian
// bytes). The column is a required top-level one (its pages hold no levels); a chunk with a
// dictionary is hashed from its dictionary page, one without from its PLAIN data pages.
import { bloomFilterBytes, SplitBlockBloomFilter } from './bloom-filter.js';
import { ENCODING } from './chunks.js';

/** Bytes of a value of the fixed-width physical types a filter is written for. */
const WIDTH = /** @type {Record<string, number>} */ ({ INT32: 4, INT64: 8, FLOAT: 4, DOUBLE: 8 });

/** Whether a bloom filter can be written for a column of this physical type. @param {string} type */
export const bloomable = (type) => type === 'BYTE_ARRAY' || type in WIDTH;

/**
 * Calls `each` with every value of `count` PLAIN values of `type` in `bytes` (views, no copies).
 * @param {Uint8Array} bytes @param {number} count @param {string} type
 * @param {(value: Uint8Array) => void} each
 */
function plainValues(bytes, count, type, each) {
  if (type === 'BYTE_ARRAY') {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    for (let k = 0; k < count; k++) {
      const length = view.getUint32(at, true);
      each(bytes.subarray(at + 4, at + 4 + length));
      at += 4 + length;
    }
    return;
  }
  const width = /** @type {number} */ (WIDTH[type]);
  for (let k = 0; k < count; k++) each(bytes.subarray(k * width, (k + 1) * width));
}

/** A hash's two halves, read through a typed array (no BigInt arithmetic). */
const wide = new BigUint64Array(1);
const halves = new Uint32Array(wide.buffer);

/**
 * The filter of a chunk, sized for its distinct values at `fpp` (at most `maxBytes`).
 * @param {import('./chunks.js').Chunk} chunk @param {string} type its physical type
 * @param {import('./bloom-hash.js').Hash64} hash @param {number} fpp @param {number} maxBytes
 */
export function chunkBloomFilter(chunk, type, hash, fpp, maxBytes) {
  const dictionary = chunk.dictionary;
  const count =
    dictionary !== undefined
      ? dictionary.ids.length
      : chunk.pages.reduce((n, page) => n + page.values, 0);
  const upper = new Uint32Array(count);
  const lower = new Uint32Array(count);
  let k = 0;
  /** @param {Uint8Array} value */
  const add = (value) => {
    wide[0] = hash(value);
    // Little-endian (the writer's machines): element 0 holds bits 31..0.
    lower[k] = /** @type {number} */ (halves[0]);
    upper[k] = /** @type {number} */ (halves[1]);
    k++;
  };
  if (dictionary !== undefined) plainValues(dictionary.page, count, type, add);
  else {
    for (const page of chunk.pages) {
      if (page.encoding !== ENCODING.PLAIN) {
        throw new Error(
          `Parquet: a bloom filter is written from PLAIN pages, not encoding ${page.encoding}`,
        );
      }
      plainValues(page.bytes, page.values, type, add);
    }
  }
  const distinct = dictionary !== undefined ? count : distinctHashes(upper, lower);
  const filter = new SplitBlockBloomFilter(bloomFilterBytes(distinct, fpp, maxBytes));
  for (let i = 0; i < count; i++) {
    filter.insert(/** @type {number} */ (upper[i]), /** @type {number} */ (lower[i]));
  }
  return filter;
}

/**
 * How many distinct hashes (an open-addressing set of them: distinct values of a chunk share a
 * 64-bit hash with a chance of about n^2 / 2^65, and the count only sizes the filter).
 * @param {Uint32Array} upper @param {Uint32Array} lower
 */
function distinctHashes(upper, lower) {
  let size = 16;
  while (size < 2 * upper.length) size *= 2;
  const mask = size - 1;
  const slots = new Uint32Array(2 * size);
  const used = new Uint8Array(size);
  let n = 0;
  for (let k = 0; k < upper.length; k++) {
    const hi = /** @type {number} */ (upper[k]);
    const lo = /** @type {number} */ (lower[k]);
    let at = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    for (;;) {
      if (used[at] === 0) {
        used[at] = 1;
        slots[2 * at] = hi;
        slots[2 * at + 1] = lo;
        n++;
        break;
      }
      if (slots[2 * at] === hi && slots[2 * at + 1] === lo) break;
      at = (at + 1) & mask;
    }
  }
  return n;
}
