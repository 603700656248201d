// @ts-check
// Growing a typed array: the one rule for every column builder and page buffer.

/**
 * A typed array of the same kind with room for at least `need` elements, holding `used` of the
 * old; the array itself when it has room. It at least doubles, so appends cost O(1) amortized.
 * @template {Int32Array | Uint32Array | Float64Array | Uint8Array} T
 * @param {T} array @param {number} need @param {number} used @returns {T}
 */
export function grown(array, need, used) {
  if (need <= array.length) return array;
  const Kind = /** @type {new (n: number) => T} */ (array.constructor);
  const next = new Kind(Math.max(need, array.length * 2));
  next.set(array.subarray(0, used));
  return next;
}
