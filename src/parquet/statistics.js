// @ts-check
// Min/max statistics of a column chunk, as the bytes of Parquet's PLAIN encoding. Doubles follow
// the spec's rules for floating point: NaN is left out (no min/max when nothing else is there), a
// zero minimum is written -0.0 and a zero maximum +0.0. 64-bit integers are compared as signed.

/**
 * @typedef {object} Statistics
 * @property {number} nulls
 * @property {Uint8Array} [min]
 * @property {Uint8Array} [max]
 */

/** @param {(view: DataView) => void} write @param {number} size */
function bytes(size, write) {
  const out = new Uint8Array(size);
  write(new DataView(out.buffer));
  return out;
}

/** @param {number} v */
export const int32Bytes = (v) => bytes(4, (d) => d.setInt32(0, v, true));
/** @param {number} v */
export const doubleBytes = (v) => bytes(8, (d) => d.setFloat64(0, v, true));
/** @param {Int32Array} pairs @param {number} i */
export const int64Bytes = (pairs, i) =>
  bytes(8, (d) => {
    d.setInt32(0, /** @type {number} */ (pairs[2 * i]), true);
    d.setInt32(4, /** @type {number} */ (pairs[2 * i + 1]), true);
  });

/** Signed comparison of entries a and b of a 64-bit column. @param {Int32Array} pairs @param {number} a @param {number} b */
export function compareInt64(pairs, a, b) {
  const hi = /** @type {number} */ (pairs[2 * a + 1]) - /** @type {number} */ (pairs[2 * b + 1]);
  if (hi !== 0) return hi;
  const loA = /** @type {number} */ (pairs[2 * a]);
  const loB = /** @type {number} */ (pairs[2 * b]);
  return (loA >>> 0) - (loB >>> 0);
}

/** @param {Float64Array} values @param {number} n @param {number} nulls @returns {Statistics} */
export function doubleStatistics(values, n, nulls) {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let seen = false;
  for (let i = 0; i < n; i++) {
    const v = /** @type {number} */ (values[i]);
    if (Number.isNaN(v)) continue;
    seen = true;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (!seen) return { nulls };
  return {
    nulls,
    min: doubleBytes(min === 0 ? -0 : min),
    max: doubleBytes(max === 0 ? 0 : max),
  };
}

/** @param {Int32Array} values @param {number} n @param {number} nulls @returns {Statistics} */
export function int32Statistics(values, n, nulls) {
  if (n === 0) return { nulls };
  let min = /** @type {number} */ (values[0]);
  let max = min;
  for (let i = 1; i < n; i++) {
    const v = /** @type {number} */ (values[i]);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { nulls, min: int32Bytes(min), max: int32Bytes(max) };
}

/** @param {Int32Array} pairs @param {number} n @param {number} nulls @returns {Statistics} */
export function int64Statistics(pairs, n, nulls) {
  if (n === 0) return { nulls };
  let min = 0;
  let max = 0;
  for (let i = 1; i < n; i++) {
    if (compareInt64(pairs, i, min) < 0) min = i;
    if (compareInt64(pairs, i, max) > 0) max = i;
  }
  return { nulls, min: int64Bytes(pairs, min), max: int64Bytes(pairs, max) };
}

// Each runs here on a few values, a few times, as chunks.js's passes do (see there): a long loop
// optimized while it runs, before the statement after it has ever run, was given up at its end
// on every later call (doubleStatistics twelve times in a 10 s service).
for (let i = 0; i < 8; i++) {
  doubleStatistics(new Float64Array([1, i % 2 ? Number.NaN : 2]), 2, 0);
  doubleStatistics(new Float64Array([Number.NaN]), 1, 0);
  int32Statistics(new Int32Array([1, i]), 2, 0);
  int64Statistics(new Int32Array([1, 0, i, 0]), 2, 0);
}
