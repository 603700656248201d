// @ts-check
// The dictionaries of a file's string columns, made from the batch's string table: each holds
// the strings its column uses, sorted by their UTF-8 bytes (unsigned), so an entry's index is its
// rank: rows sort by ranks, and a chunk's min/max statistics are its smallest and largest index.
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
 * The first 6 bytes of bytes[start, end) as a big-endian integer (missing bytes as 0): keys in
 * the order of the bytes, but for equal keys, which compareBytes orders.
 * @param {Uint8Array} bytes @param {number} start @param {number} end
 */
export function prefixKey(bytes, start, end) {
  let key = 0;
  for (let j = 0; j < 6; j++) {
    const at = start + j;
    key = key * 256 + (at < end ? /** @type {number} */ (bytes[at]) : 0);
  }
  return key;
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
 * equal bytes keep their order).
 * @param {StringPool} pool
 * @param {number[]} ids
 * @returns {Dictionary}
 */
export function dictionaryOfIds(pool, ids) {
  const views = ids.map((id) => pool.bytes(id));
  // Sorted by a 6-byte prefix (a double's exact integer), then, where prefixes are equal, by the
  // bytes: the same order as Buffer.compare's, without a native call per comparison.
  const keys = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const b = /** @type {Uint8Array} */ (views[i]);
    keys[i] = prefixKey(b, 0, b.length);
  }
  const order = ids.map((_, i) => i);
  order.sort((a, b) => {
    const d = /** @type {number} */ (keys[a]) - /** @type {number} */ (keys[b]);
    if (d !== 0) return d;
    const x = /** @type {Uint8Array} */ (views[a]);
    const y = /** @type {Uint8Array} */ (views[b]);
    return compareBytes(x, 0, x.length, y, 0, y.length);
  });
  const rank = new Int32Array(pool.size).fill(-1);
  /** @type {number[]} */
  const sorted = [];
  let size = 0;
  for (let i = 0; i < order.length; i++) {
    const k = /** @type {number} */ (order[i]);
    sorted.push(/** @type {number} */ (ids[k]));
    rank[/** @type {number} */ (ids[k])] = i;
    size += 4 + /** @type {Uint8Array} */ (views[k]).length;
  }
  const page = new Uint8Array(size);
  const view = new DataView(page.buffer);
  let at = 0;
  for (const k of order) {
    const b = /** @type {Uint8Array} */ (views[k]);
    view.setUint32(at, b.length, true);
    page.set(b, at + 4);
    at += 4 + b.length;
  }
  return { ids: sorted, rank, width: bitWidth(Math.max(0, sorted.length - 1)), page, sorted: true };
}

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
