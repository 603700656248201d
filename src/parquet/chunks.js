// @ts-check
// Column chunks of one row group: the pages of a leaf column for the rows given in write order.
// Data pages are version 1: repetition and definition levels (each after its 4-byte length, in
// the hybrid encoding) then the values, compressed together by the caller. Values are PLAIN,
// strings dictionary indices. A map's or list's page ends after the row where it reaches
// PAGE_VALUES level entries; other columns have one page per chunk (ROW_GROUP_ROWS rows at most).
import { ByteWriter } from './byte-writer.js';
import { LevelWriter, writeHybrid } from './hybrid.js';
import { doubleStatistics, int32Statistics, int64Statistics } from './statistics.js';
import { grown } from './tables.js';

/** @typedef {import('./statistics.js').Statistics} Statistics */
/** @typedef {import('./dictionaries.js').Dictionary} Dictionary */
/** @typedef {{ bytes: Uint8Array, values: number, encoding: number }} DataPage */
/** @typedef {{ pages: DataPage[], values: number, dictionary?: Dictionary, statistics?: Statistics }} Chunk */

export const ENCODING = /** @type {const} */ ({ PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 });

/** A map's or list's data page ends after the row where it reaches this many level entries. */
export const PAGE_VALUES = 1 << 17;

/** Reused work arrays that grow to the largest page. */
export class Scratch {
  ints = new Int32Array(1024);
  doubles = new Float64Array(1024);

  /** An Int32Array of at least n, holding the first `keep` of the last one. @param {number} n @param {number} [keep] */
  int32(n, keep = 0) {
    this.ints = grown(this.ints, n, keep);
    return this.ints;
  }

  /** A Float64Array of at least n, holding the first `keep` of the last one. @param {number} n @param {number} [keep] */
  float64(n, keep = 0) {
    this.doubles = grown(this.doubles, n, keep);
    return this.doubles;
  }
}

/** @param {Int32Array | Float64Array} array @param {number} n */
export const elementBytes = (array, n) =>
  new Uint8Array(array.buffer, array.byteOffset, n * array.BYTES_PER_ELEMENT);

/**
 * A page's bytes: each level stream after its 4-byte length, then the values.
 * @param {(ByteWriter | null)[]} levels @param {Uint8Array} values
 */
function page(levels, values) {
  let size = values.length;
  for (const l of levels) if (l !== null) size += 4 + l.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const l of levels) {
    if (l === null) continue;
    view.setUint32(at, l.length, true);
    out.set(l.result(), at + 4);
    at += 4 + l.length;
  }
  out.set(values, at);
  return out;
}

/** Dictionary indices as a page's values: the bit width, then the hybrid encoding. @param {Int32Array} idx @param {number} n @param {number} width */
export function indexBytes(idx, n, width) {
  const w = new ByteWriter(16 + ((n * width) >> 3));
  w.byte(width);
  writeHybrid(w, idx, n, width);
  return w.result();
}

/** @param {Uint8Array} values @param {number} n @param {number} encoding @param {Dictionary} [dictionary] @param {Statistics} [statistics] @returns {Chunk} */
const single = (values, n, encoding, dictionary, statistics) => ({
  pages: [{ bytes: values, values: n, encoding }],
  values: n,
  ...(dictionary === undefined ? {} : { dictionary }),
  ...(statistics === undefined ? {} : { statistics }),
});

/**
 * A required string column: per row, dictionary index[group[row]].
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Dictionary} dict @param {(id: number) => Uint8Array} bytesOf
 * @param {Uint32Array} group per row @param {Int32Array} index per group
 */
export function stringChunk(scratch, rows, dict, bytesOf, group, index) {
  const n = rows.length;
  const idx = scratch.int32(n);
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (let k = 0; k < n; k++) {
    const i = /** @type {number} */ (
      index[/** @type {number} */ (group[/** @type {number} */ (rows[k])])]
    );
    idx[k] = i;
    if (i < lo) lo = i;
    if (i > hi) hi = i;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0
      ? { nulls: 0 }
      : {
          nulls: 0,
          min: bytesOf(/** @type {number} */ (dict.ids[lo])),
          max: bytesOf(/** @type {number} */ (dict.ids[hi])),
        };
  return single(
    page([], indexBytes(idx, n, dict.width)),
    n,
    ENCODING.RLE_DICTIONARY,
    dict,
    statistics,
  );
}

/** A required INT64 column (two Int32 slots per row). @param {Scratch} scratch @param {Uint32Array} rows @param {Int32Array} pairs */
export function int64Chunk(scratch, rows, pairs) {
  const n = rows.length;
  const out = scratch.int32(2 * n);
  for (let k = 0; k < n; k++) {
    const row = /** @type {number} */ (rows[k]);
    out[2 * k] = /** @type {number} */ (pairs[2 * row]);
    out[2 * k + 1] = /** @type {number} */ (pairs[2 * row + 1]);
  }
  const statistics = int64Statistics(out, n, 0);
  return single(page([], elementBytes(out, 2 * n)), n, ENCODING.PLAIN, undefined, statistics);
}

/** A required INT32 column. @param {Scratch} scratch @param {Uint32Array} rows @param {(row: number) => number} value */
export function int32Chunk(scratch, rows, value) {
  const n = rows.length;
  const out = scratch.int32(n);
  for (let k = 0; k < n; k++) out[k] = value(/** @type {number} */ (rows[k]));
  const statistics = int32Statistics(out, n, 0);
  return single(page([], elementBytes(out, n)), n, ENCODING.PLAIN, undefined, statistics);
}

/** A required BOOLEAN column: PLAIN, one bit per value, least significant first. @param {Uint32Array} rows @param {(row: number) => boolean} value */
export function booleanChunk(rows, value) {
  const n = rows.length;
  const bits = new Uint8Array(Math.ceil(n / 8));
  let any = 0;
  let all = 1;
  for (let k = 0; k < n; k++) {
    const v = value(/** @type {number} */ (rows[k])) ? 1 : 0;
    bits[k >> 3] = /** @type {number} */ (bits[k >> 3]) | (v << (k & 7));
    any |= v;
    all &= v;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0 ? { nulls: 0 } : { nulls: 0, min: Uint8Array.of(all), max: Uint8Array.of(any) };
  return single(page([], bits), n, ENCODING.PLAIN, undefined, statistics);
}

/**
 * An optional column: a definition level per row (1 present, 0 null), then the present values.
 * `copy` stores row's value at index j of the scratch array; the kind picks the array and the
 * statistics.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {'double' | 'int64' | 'int32'} kind
 * @param {(row: number) => boolean} has
 * @param {Float64Array | Int32Array} source per row (int64: two slots per row)
 */
export function optionalChunk(scratch, rows, kind, has, source) {
  const n = rows.length;
  const def = new ByteWriter(64);
  const levels = new LevelWriter(def, 1);
  const doubles = kind === 'double' ? scratch.float64(n) : null;
  const ints = kind === 'double' ? null : scratch.int32(kind === 'int64' ? 2 * n : n);
  let j = 0;
  for (let k = 0; k < n; k++) {
    const row = /** @type {number} */ (rows[k]);
    if (!has(row)) {
      levels.run(0, 1);
      continue;
    }
    levels.run(1, 1);
    if (doubles !== null) doubles[j] = /** @type {number} */ (source[row]);
    else if (ints !== null && kind === 'int64') {
      ints[2 * j] = /** @type {number} */ (source[2 * row]);
      ints[2 * j + 1] = /** @type {number} */ (source[2 * row + 1]);
    } else if (ints !== null) ints[j] = /** @type {number} */ (source[row]);
    j++;
  }
  levels.finish();
  const nulls = n - j;
  const values = doubles ?? /** @type {Int32Array} */ (ints);
  const statistics =
    doubles !== null
      ? doubleStatistics(doubles, j, nulls)
      : kind === 'int64'
        ? int64Statistics(/** @type {Int32Array} */ (ints), j, nulls)
        : int32Statistics(/** @type {Int32Array} */ (ints), j, nulls);
  const count = kind === 'int64' ? 2 * j : j;
  return single(page([def], elementBytes(values, count)), n, ENCODING.PLAIN, undefined, statistics);
}

/**
 * Pages of a repeated leaf (a map's keys or values, a list's elements), split at PAGE_VALUES.
 * `row(k)` adds row k's levels to `rep` and `def` and its values; returns its level entries.
 * `values()` gives and resets the page's value bytes.
 * @param {number} n rows @param {number} defWidth
 * @param {(k: number, rep: LevelWriter, def: LevelWriter) => number} row
 * @param {() => { bytes: Uint8Array, encoding: number }} values
 * @returns {Chunk}
 */
export function repeatedChunk(n, defWidth, row, values) {
  /** @type {DataPage[]} */
  const pages = [];
  let total = 0;
  let k = 0;
  while (k < n) {
    const repBytes = new ByteWriter(256);
    const defBytes = new ByteWriter(256);
    const rep = new LevelWriter(repBytes, 1);
    const def = new LevelWriter(defBytes, defWidth);
    let entries = 0;
    while (k < n && entries < PAGE_VALUES) entries += row(k++, rep, def);
    rep.finish();
    def.finish();
    const v = values();
    pages.push({
      bytes: page([repBytes, defBytes], v.bytes),
      values: entries,
      encoding: v.encoding,
    });
    total += entries;
  }
  return { pages, values: total };
}
