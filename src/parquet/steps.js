// @ts-check
// Work written as steps: a generator that yields between short pieces of its work (a pass over
// rows, a few thousand rows of a page) and returns its result. In the body worker the steps run
// back to back (run()); on the event loop's thread the writer lets the loop run between them
// once a slice of time is spent (file-writer.js, FileWriterOptions.pause), so one batch's encode
// is many short turns instead of one long one.

/**
 * @template T
 * @typedef {Generator<undefined, T, undefined>} Steps
 */

/** Rows a step over rows covers before it yields: well under a millisecond of simple work. */
export const STEP_ROWS = 2048;

/** Level entries a step of a repeated column covers (a row of a list has many): as short. */
export const STEP_VALUES = 4096;

/**
 * The result of `steps`, run to the end with no pause.
 * @template T @param {Steps<T>} steps @returns {T}
 */
export function run(steps) {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}

/**
 * A value, or the steps that make it, as a table's plan and leaf writers may return.
 * @template T @param {T | Steps<T>} x @returns {x is Steps<T>}
 */
export function isSteps(x) {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (/** @type {{ next?: unknown }} */ (x).next) === 'function' &&
    typeof (/** @type {{ [Symbol.iterator]?: unknown }} */ (x)[Symbol.iterator]) === 'function'
  );
}
