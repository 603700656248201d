// @ts-check
// The dictionaries of a file's string columns, made from the batch's string table: each holds
// the strings its column uses, sorted by their UTF-8 bytes (unsigned), so an entry's index is its
// rank: rows sort by ranks, and a chunk's min/max statistics are its smallest and largest index.

import { keepShape } from '../base/kept-shapes.js';
import { packLists } from './bit-packer.js';
import { bitWidth } from './hybrid.js';

/**
 * A batch's strings (UTF-8, one after another, string i at [offsets[i], offsets[i + 1])) plus
 * fixed names of the schema's own (an enum's texts): ids `count` + the name's index.
 */
export class StringPool {
  /**
   * @param {Uint8Array} strings @param {Uint32Array} offsets @param {number} count
   * @param {readonly string[]} [names]
   */
  constructor(strings, offsets, count, names = []) {
    this.namesBase = count;
    /** @type {Uint8Array[]} */
    this.extra = names.map((name) => Buffer.from(name));
    this.strings = strings;
    this.offsets = offsets;
    this.size = count + names.length;
  }

  /** The UTF-8 bytes of string `id`. @param {number} id */
  bytes(id) {
    if (id >= this.namesBase) return /** @type {Uint8Array} */ (this.extra[id - this.namesBase]);
    return this.strings.subarray(
      /** @type {number} */ (this.offsets[id]),
      /** @type {number} */ (this.offsets[id + 1]),
    );
  }
}

/**
 * Unsigned byte order of x[x0, x1) and y[y0, y1) (a prefix first): negative, 0 or positive.
 * @param {Uint8Array} x @param {number} x0 @param {number} x1
 * @param {Uint8Array} y @param {number} y0 @param {number} y1
 */
export function compareBytes(x, x0, x1, y, y0, y1) {
  const n = Math.min(x1 - x0, y1 - y0);
  for (let j = 0; j < n; j++) {
    const d = /** @type {number} */ (x[x0 + j]) - /** @type {number} */ (y[y0 + j]);
    if (d !== 0) return d;
  }
  return x1 - x0 - (y1 - y0);
}

/** Index bits of a packed sort key: a run of more values than this is sorted by a comparator. */
const INDEX_BITS = 20;
const INDEX_SPAN = 2 ** INDEX_BITS;
/** Runs this short are sorted by comparing bytes (no keys to make). */
const SHORT_RUN = 12;

/**
 * The order of n strings by their bytes (unsigned, a prefix first), equal ones in their order:
 * string i is bytes[starts[i], ends[i]). An MSD radix sort whose digits are 4 bytes in base 257
 * (a byte b as b + 1, a byte past the end as 0, so a string sorts before its extensions), each
 * below 257^4: a run's digits are packed with the strings' places in the run (digit × 2^20 +
 * place, below 2^53, so exact doubles) and sorted by the typed array's own sort, with no call per
 * comparison; runs of one digit go on 4 bytes further, and a run whose strings all ended there is
 * done (they are equal). The order of Buffer.compare, ties by index.
 * @param {Uint8Array} bytes @param {Uint32Array} starts @param {Uint32Array} ends
 * @returns {Int32Array} the indices in order
 */
export function byteOrder(bytes, starts, ends) {
  const n = starts.length;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  /** runs still to sort, three numbers each: from, to, depth */
  const stack = [0, n, 0];
  const keys = new Float64Array(Math.min(n, INDEX_SPAN));
  const moved = new Int32Array(Math.min(n, INDEX_SPAN));
  while (stack.length > 0) {
    const depth = /** @type {number} */ (stack.pop());
    const to = /** @type {number} */ (stack.pop());
    const from = /** @type {number} */ (stack.pop());
    const count = to - from;
    if (count < 2) continue;
    if (count <= SHORT_RUN || count > INDEX_SPAN) {
      sortRun(bytes, starts, ends, order, from, to, depth);
      continue;
    }
    const one = digits(bytes, starts, ends, order, from, count, depth, keys);
    if (one >= 0) {
      // One digit for all: on to the next 4 bytes, unless every string has ended.
      if (!ended(one)) stack.push(from, to, depth + 4);
      continue;
    }
    placeByDigit(order, from, count, depth, keys, moved, stack);
  }
  return order;
}

// The passes of byteOrder over a run are functions of their own: a loop optimized as it ran
// inside byteOrder's loop gave byteOrder's code up when it ended (five times in a 10 s service).

/**
 * keys[j] = the digit at `depth` of the run's string j; returns that digit where all are one,
 * -1 otherwise.
 * @param {Uint8Array} bytes @param {Uint32Array} starts @param {Uint32Array} ends
 * @param {Int32Array} order @param {number} from @param {number} count @param {number} depth
 * @param {Float64Array} keys
 */
function digits(bytes, starts, ends, order, from, count, depth, keys) {
  let lo = Infinity;
  let hi = -1;
  for (let j = 0; j < count; j++) {
    const i = /** @type {number} */ (order[from + j]);
    const d = digit(
      bytes,
      /** @type {number} */ (starts[i]) + depth,
      /** @type {number} */ (ends[i]),
    );
    keys[j] = d;
    if (d < lo) lo = d;
    if (d > hi) hi = d;
  }
  return lo === hi ? lo : -1;
}

/**
 * Sorts the run order[from, from + count) by its digits (keys), stably, and pushes each run of
 * one digit that goes on (its strings have not all ended) onto `stack` for the next 4 bytes.
 * @param {Int32Array} order @param {number} from @param {number} count @param {number} depth
 * @param {Float64Array} keys @param {Int32Array} moved @param {number[]} stack
 */
function placeByDigit(order, from, count, depth, keys, moved, stack) {
  for (let j = 0; j < count; j++) {
    keys[j] = /** @type {number} */ (keys[j]) * INDEX_SPAN + j;
    moved[j] = /** @type {number} */ (order[from + j]);
  }
  const sorted = keys.subarray(0, count).sort();
  let runStart = 0;
  let runDigit = -1;
  for (let j = 0; j < count; j++) {
    const packed = /** @type {number} */ (sorted[j]);
    const d = Math.floor(packed / INDEX_SPAN);
    order[from + j] = /** @type {number} */ (moved[packed - d * INDEX_SPAN]);
    if (d !== runDigit) {
      if (j - runStart > 1 && !ended(runDigit)) stack.push(from + runStart, from + j, depth + 4);
      runStart = j;
      runDigit = d;
    }
  }
  if (count - runStart > 1 && !ended(runDigit))
    stack.push(from + runStart, from + count, depth + 4);
}

/**
 * Bytes [at, at + 4) of a string ending at `end` as a number in base 257 (b + 1; 0 past the end).
 * @param {Uint8Array} bytes @param {number} at @param {number} end
 */
function digit(bytes, at, end) {
  if (at + 4 <= end) {
    const b0 = /** @type {number} */ (bytes[at]);
    const b1 = /** @type {number} */ (bytes[at + 1]);
    const b2 = /** @type {number} */ (bytes[at + 2]);
    const b3 = /** @type {number} */ (bytes[at + 3]);
    return (((b0 + 1) * 257 + b1 + 1) * 257 + b2 + 1) * 257 + b3 + 1;
  }
  let d = 0;
  for (let j = at; j < at + 4; j++) {
    d = d * 257 + (j < end ? /** @type {number} */ (bytes[j]) + 1 : 0);
  }
  return d;
}

/** Whether a digit's string ended within it (its last place is past the end). @param {number} d */
const ended = (d) => d % 257 === 0;

/**
 * Sorts order[from, to) by the strings' bytes from `depth` on (equal before it), ties by index.
 * @param {Uint8Array} bytes @param {Uint32Array} starts @param {Uint32Array} ends
 * @param {Int32Array} order @param {number} from @param {number} to @param {number} depth
 */
function sortRun(bytes, starts, ends, order, from, to, depth) {
  const run = Array.from(order.subarray(from, to));
  run.sort(
    (a, b) =>
      compareBytes(
        bytes,
        /** @type {number} */ (starts[a]) + depth,
        /** @type {number} */ (ends[a]),
        bytes,
        /** @type {number} */ (starts[b]) + depth,
        /** @type {number} */ (ends[b]),
      ) || a - b,
  );
  order.set(run, from);
}

/**
 * @typedef {object} Dictionary
 * @property {number[]} ids the column's strings (pool ids), in byte order; for bounds, the values
 * @property {Int32Array} rank per pool id: its index in `ids` (-1: not in this column)
 * @property {number} width bit width of the indices
 * @property {Uint8Array} page the dictionary page's PLAIN values
 * @property {boolean} sorted whether the values are in the column's order (the page header says so)
 */

/**
 * The dictionary of the strings marked in `used` (per pool id: 1 if the column has it).
 * @param {StringPool} pool
 * @param {Uint8Array} used
 * @returns {Dictionary}
 */
export function dictionaryOf(pool, used) {
  /** @type {number[]} */
  const ids = [];
  for (let id = 0; id < used.length; id++) if (used[id] === 1) ids.push(id);
  return dictionaryOfIds(pool, ids);
}

/**
 * The dictionary of the strings `ids` (pool ids, each once, in increasing order or any other:
 * equal bytes keep their order; ids of equal bytes share one value, the first's).
 * @param {StringPool} pool
 * @param {number[]} ids
 * @param {Int32Array} [rank] the dictionary's rank array (pool.size entries, each -1) to fill
 * @returns {Dictionary}
 */
export function dictionaryOfIds(pool, ids, rank = new Int32Array(pool.size).fill(-1)) {
  const n = ids.length;
  const starts = new Uint32Array(n);
  const ends = new Uint32Array(n);
  /** @type {Uint8Array} */
  let bytes = pool.strings;
  if (ids.some((id) => id >= pool.namesBase)) {
    // A schema's own names among them (metrics' enums: a few): every string copied into one.
    const views = ids.map((id) => pool.bytes(id));
    bytes = new Uint8Array(views.reduce((total, v) => total + v.length, 0));
    let at = 0;
    views.forEach((v, i) => {
      bytes.set(v, at);
      starts[i] = at;
      at += v.length;
      ends[i] = at;
    });
  } else {
    const offsets = pool.offsets;
    for (let i = 0; i < n; i++) {
      const id = /** @type {number} */ (ids[i]);
      starts[i] = /** @type {number} */ (offsets[id]);
      ends[i] = /** @type {number} */ (offsets[id + 1]);
    }
  }
  const order = byteOrder(bytes, starts, ends);
  /** @type {number[]} */
  const sorted = [];
  // Equal strings (ids made without a lookup: Strings.fresh) are next to each other now: the
  // first of them is the dictionary's value, the others take its index.
  const distinct = new Int32Array(n);
  let size = 0;
  let last = -1;
  for (let i = 0; i < n; i++) {
    const k = /** @type {number} */ (order[i]);
    const id = /** @type {number} */ (ids[k]);
    const start = /** @type {number} */ (starts[k]);
    const end = /** @type {number} */ (ends[k]);
    if (
      last >= 0 &&
      equalBytes(
        bytes,
        start,
        end,
        /** @type {number} */ (starts[last]),
        /** @type {number} */ (ends[last]),
      )
    ) {
      rank[id] = sorted.length - 1;
      continue;
    }
    last = k;
    distinct[sorted.length] = k;
    rank[id] = sorted.length;
    sorted.push(id);
    size += 4 + end - start;
  }
  const count = sorted.length;
  const page = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const k = /** @type {number} */ (distinct[i]);
    const start = /** @type {number} */ (starts[k]);
    const length = /** @type {number} */ (ends[k]) - start;
    page[at] = length & 0xff;
    page[at + 1] = (length >>> 8) & 0xff;
    page[at + 2] = (length >>> 16) & 0xff;
    page[at + 3] = length >>> 24;
    at += 4;
    if (length > 32) page.set(bytes.subarray(start, start + length), at);
    else for (let j = 0; j < length; j++) page[at + j] = /** @type {number} */ (bytes[start + j]);
    at += length;
  }
  return { ids: sorted, rank, width: bitWidth(Math.max(0, count - 1)), page, sorted: true };
}

/** Whether bytes[a0, a1) and bytes[b0, b1) are the same. @param {Uint8Array} bytes @param {number} a0 @param {number} a1 @param {number} b0 @param {number} b1 */
function equalBytes(bytes, a0, a1, b0, b1) {
  if (a1 - a0 !== b1 - b0) return false;
  for (let j = 0; j < a1 - a0; j++) if (bytes[a0 + j] !== bytes[b0 + j]) return false;
  return true;
}

/**
 * `dictionary` with indices a whole number of bytes wide. The values of an attribute map take
 * turns between keys (a path, then a scheme, a host, a port, ...): at 16 bits rather than 15,
 * each key's index keeps its place in the bytes and zstd finds the repeated ones (spans'
 * attribute values 21.2 → 18.1 bytes a span, bench/results/2026-12-05-parquet-signals-shapes.md).
 * @param {Dictionary} dictionary
 * @returns {Dictionary}
 */
export const byteAligned = (dictionary) => ({
  ...dictionary,
  width: Math.ceil(dictionary.width / 8) * 8,
});

/**
 * Per group (resource, metric): the dictionary index of the group's string in slot `slot`.
 * @param {Dictionary} dictionary @param {Uint32Array} table @param {number} stride @param {number} count @param {number} slot @param {number} [base] added to the slot's value (an enum's text: the pool's namesBase)
 */
export function groupIndex(dictionary, table, stride, count, slot, base = 0) {
  const index = new Int32Array(count);
  for (let g = 0; g < count; g++) {
    index[g] = /** @type {number} */ (
      dictionary.rank[base + /** @type {number} */ (table[g * stride + slot])]
    );
  }
  return index;
}

/**
 * The dictionary of a table of DOUBLE lists (every distinct value of the lists, -0 apart from
 * 0), and every list's indices packed once for BitPacker.packed: `byValue` maps a list's first
 * value (its offset in boundsValues) to where its packed indices start. List i is
 * boundsValues[boundsOffsets[i], boundsOffsets[i + 1]).
 * @param {{ boundsOffsets: Uint32Array, boundsCount: number, boundsValues: Float64Array }} s
 */
export function boundsDictionary(s) {
  const total = /** @type {number} */ (s.boundsOffsets[s.boundsCount]);
  /** @type {Map<number | string, number>} */
  const index = new Map();
  /** @type {number[]} */
  const values = [];
  const valueIndex = new Int32Array(total);
  for (let i = 0; i < total; i++) {
    const v = /** @type {number} */ (s.boundsValues[i]);
    const key = Object.is(v, -0) ? '-0' : v;
    let k = index.get(key);
    if (k === undefined) {
      k = values.length;
      index.set(key, k);
      values.push(v);
    }
    valueIndex[i] = k;
  }
  const width = bitWidth(Math.max(0, values.length - 1));
  const packed = packLists(valueIndex, s.boundsOffsets, s.boundsCount, width);
  const byValue = new Uint32Array(total + 1);
  for (let i = 0; i < s.boundsCount; i++) {
    byValue[/** @type {number} */ (s.boundsOffsets[i])] = /** @type {number} */ (packed.starts[i]);
  }
  /** @type {Dictionary} */
  const dictionary = {
    ids: values,
    rank: new Int32Array(0),
    width,
    page: new Uint8Array(Float64Array.from(values).buffer),
    sorted: false, // first seen first
  };
  return { dictionary, packed: { bytes: packed.bytes, byValue } };
}

// A batch's pool is gone after its file: its shape is kept (kept-shapes.js).
keepShape(new StringPool(new Uint8Array(0), new Uint32Array(1), 0));
