// @ts-check
// Parquet's RLE / bit-packed hybrid encoding, for repetition and definition levels and for
// dictionary indices. A run of 8 or more equal values becomes an RLE run; shorter runs are
// bit-packed in groups of 8 (the last group padded with zeros, which readers ignore by the
// page's value count). Bit widths up to 24 (dictionaries of up to 2^24 entries).
import { pack } from './bit-packer.js';
import { ByteWriter } from './byte-writer.js';

/** A run at least this long is written as an RLE run (a bit-packed group holds 8 values). */
const MIN_RLE = 8;
export const MAX_BIT_WIDTH = 24;

/** Bits needed for values up to `max` (at least 1). @param {number} max */
export function bitWidth(max) {
  const width = Math.max(1, 32 - Math.clz32(max));
  if (width > MAX_BIT_WIDTH)
    throw new RangeError(`Parquet: ${max + 1} dictionary entries, at most 2^24`);
  return width;
}

/** @param {ByteWriter} w @param {number} value @param {number} count @param {number} width */
function rleRun(w, value, count, width) {
  w.varint(count * 2);
  for (let b = 0; b < width; b += 8) w.byte((value >>> b) & 0xff);
}

/**
 * Bit-packs values[from, to) (a multiple of 8, or the end padded with zeros) as one run.
 * @param {ByteWriter} w @param {ArrayLike<number>} values @param {number} from @param {number} to @param {number} width
 */
function packedRun(w, values, from, to, width) {
  const groups = Math.ceil((to - from) / 8);
  w.varint(groups * 2 + 1);
  const at = w.reserve(groups * width);
  pack(w.buf, at, values, from, to, groups * 8, width);
}

/**
 * Where the run of values[i]'s value that starts at i ends (at most n). Its own function: a long
 * run optimized as it ran gave writeHybrid's code up when it ended.
 * @param {ArrayLike<number>} values @param {number} i @param {number} n
 */
function runEnd(values, i, n) {
  const v = values[i];
  let j = i + 1;
  while (j < n && values[j] === v) j++;
  return j;
}

/**
 * The hybrid encoding of values[0, n).
 * @param {ByteWriter} w @param {ArrayLike<number>} values @param {number} n @param {number} width
 */
export function writeHybrid(w, values, n, width) {
  let literal = 0; // start of values not written yet (bit-packed when written)
  let i = 0;
  while (i < n) {
    const v = values[i];
    const j = runEnd(values, i, n);
    if (j - i >= MIN_RLE) {
      // Literals end on a group boundary: the run lends them up to 7 of its values.
      const start = i + ((8 - ((i - literal) % 8)) % 8);
      if (j - start >= MIN_RLE) {
        if (start > literal) packedRun(w, values, literal, start, width);
        rleRun(w, /** @type {number} */ (v), j - start, width);
        literal = j;
      }
    }
    i = j;
  }
  if (literal < n) packedRun(w, values, literal, n, width);
}

/**
 * Levels given as runs (value, count), as a row's map entries or list elements give them:
 * consecutive runs of one value merge, long runs become RLE runs, short ones bit-packed groups.
 */
export class LevelWriter {
  /** @param {ByteWriter} w @param {number} width */
  constructor(w, width) {
    this.w = w;
    this.width = width;
    this.runValue = 0;
    this.runCount = 0; // a pending RLE run (no literals pending while it is)
    this.literals = new Uint8Array(64);
    this.literalCount = 0;
  }

  /** @param {number} value @param {number} count */
  run(value, count) {
    if (this.runCount > 0) {
      if (value === this.runValue) {
        this.runCount += count;
        return;
      }
      if (this.runCount >= MIN_RLE) rleRun(this.w, this.runValue, this.runCount, this.width);
      else this.#literal(this.runValue, this.runCount);
      this.runCount = 0;
    }
    // Fill the open group of literals first: an RLE run may start only on a group boundary.
    const fill = Math.min(count, (8 - (this.literalCount % 8)) % 8);
    this.#literal(value, fill);
    count -= fill;
    if (count === 0) return;
    if (this.literalCount > 0 && count >= MIN_RLE) this.#flushLiterals();
    if (this.literalCount === 0) {
      this.runValue = value;
      this.runCount = count;
    } else this.#literal(value, count);
  }

  /** @param {number} value @param {number} count */
  #literal(value, count) {
    if (this.literalCount + count > this.literals.length) {
      const next = new Uint8Array(Math.max(this.literals.length * 2, this.literalCount + count));
      next.set(this.literals.subarray(0, this.literalCount));
      this.literals = next;
    }
    this.literals.fill(value, this.literalCount, this.literalCount + count);
    this.literalCount += count;
  }

  #flushLiterals() {
    packedRun(this.w, this.literals, 0, this.literalCount, this.width);
    this.literalCount = 0;
  }

  /** Writes what is pending. */
  finish() {
    if (this.runCount >= MIN_RLE) rleRun(this.w, this.runValue, this.runCount, this.width);
    else if (this.runCount > 0) this.#literal(this.runValue, this.runCount);
    this.runCount = 0;
    if (this.literalCount > 0) this.#flushLiterals();
  }
}
