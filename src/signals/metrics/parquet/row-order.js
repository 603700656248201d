// @ts-check
// The order rows are written in: by ServiceName, MetricName (their dictionary ranks), then the
// rest of a series' identity (resource, metric, attribute set: ids in first-seen order), then
// TimeUnix. Stable counting sorts on small integer keys, least significant first; a series'
// points usually arrive in time order already, and are sorted by time only where they do not.

import { compareInt64 } from '../../../parquet/statistics.js';
import { run, STEP_ROWS } from '../../../parquet/steps.js';

/**
 * Rows ordered by key[row] (values below `domain`), keeping the order of `rows` among equals.
 * @param {Uint32Array<ArrayBuffer>} rows @param {ArrayLike<number>} key per row @param {number} domain
 */
function countingSort(rows, key, domain) {
  if (domain <= 1) return rows;
  const starts = new Uint32Array(domain + 1);
  for (let i = 0; i < rows.length; i++) {
    const k = /** @type {number} */ (key[/** @type {number} */ (rows[i])]) + 1;
    starts[k] = /** @type {number} */ (starts[k]) + 1;
  }
  for (let k = 1; k <= domain; k++)
    starts[k] = /** @type {number} */ (starts[k]) + /** @type {number} */ (starts[k - 1]);
  const out = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = /** @type {number} */ (rows[i]);
    const k = /** @type {number} */ (key[row]);
    out[/** @type {number} */ (starts[k])] = row;
    starts[k] = /** @type {number} */ (starts[k]) + 1;
  }
  return out;
}

/** key[row] = perGroup[group[row]] for every row. @param {Uint32Array} group @param {Int32Array} perGroup @param {number} n */
function through(group, perGroup, n) {
  const key = new Uint32Array(n);
  for (let row = 0; row < n; row++)
    key[row] = /** @type {number} */ (perGroup[/** @type {number} */ (group[row])]);
  return key;
}

/**
 * @param {import('./sealed.js').SealedColumns} s
 * @param {Int32Array} serviceRank per resource: its ServiceName's rank
 * @param {Int32Array} nameRank per metric: its MetricName's rank
 * @param {number} ranks the number of ranks (the larger dictionary's size)
 * @returns {Uint32Array} the rows in the order to write them
 */
export function rowOrder(s, serviceRank, nameRank, ranks) {
  return run(rowOrderSteps(s, serviceRank, nameRank, ranks));
}

/**
 * rowOrder() as steps (src/parquet/steps.js): one sort per step.
 * @param {Parameters<typeof rowOrder>} args
 * @returns {import('../../../parquet/steps.js').Steps<Uint32Array>}
 */
export function* rowOrderSteps(...args) {
  const [s, serviceRank, nameRank, ranks] = args;
  const n = s.rows;
  let rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  rows = countingSort(rows, s.attributes, s.setCount);
  yield;
  rows = countingSort(rows, s.metric, s.metricCount);
  yield;
  rows = countingSort(rows, s.resource, s.resourceCount);
  yield;
  const byName = through(s.metric, nameRank, n);
  yield;
  rows = countingSort(rows, byName, ranks);
  yield;
  const byService = through(s.resource, serviceRank, n);
  yield;
  rows = countingSort(rows, byService, ranks);
  yield;
  yield* sortSeriesByTime(s, rows);
  return rows;
}

/**
 * Sorts each run of one series (same resource, metric, attribute set) by time, where needed;
 * yields every STEP_ROWS rows.
 * @param {import('./sealed.js').SealedColumns} s @param {Uint32Array} rows
 * @returns {import('../../../parquet/steps.js').Steps<void>}
 */
function* sortSeriesByTime(s, rows) {
  const { resource, metric, attributes, time } = s;
  let from = 0;
  let sorted = true;
  for (let i = 1; i <= rows.length; i++) {
    if (i % STEP_ROWS === 0) yield;
    const a = /** @type {number} */ (rows[i - 1]);
    const b = rows[i];
    if (
      b !== undefined &&
      resource[a] === resource[b] &&
      metric[a] === metric[b] &&
      attributes[a] === attributes[b]
    ) {
      if (sorted && compareInt64(time, a, b) > 0) sorted = false;
      continue;
    }
    if (!sorted) {
      const run = Array.from(rows.subarray(from, i)).sort(
        (x, y) => compareInt64(time, x, y) || x - y,
      );
      rows.set(run, from);
    }
    from = i;
    sorted = true;
  }
}
