// @ts-check
// The order rows are written in: by ServiceName, MetricName (their dictionary ranks), then the
// rest of a series' identity (resource, metric, attribute set: ids in first-seen order), then
// TimeUnix. A stable counting sort by attribute set, then one by (resource, metric) pair in its
// sorted order; a series' points usually arrive in time order already, and are sorted by time
// only where they do not.

import { compareInt64 } from '../../../parquet/statistics.js';
import { run, STEP_ROWS } from '../../../parquet/steps.js';

/**
 * Rows ordered by key[row] (values below `domain`), keeping the order of `rows` among equals;
 * yields every STEP_ROWS rows.
 * @param {Uint32Array<ArrayBuffer>} rows @param {ArrayLike<number>} key per row @param {number} domain
 * @returns {import('../../../parquet/steps.js').Steps<Uint32Array<ArrayBuffer>>}
 */
function* countingSort(rows, key, domain) {
  if (domain <= 1) return rows;
  const n = rows.length;
  const starts = new Uint32Array(domain + 1);
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    for (let i = from; i < to; i++) {
      const k = /** @type {number} */ (key[/** @type {number} */ (rows[i])]) + 1;
      starts[k] = /** @type {number} */ (starts[k]) + 1;
    }
    yield;
  }
  for (let k = 1; k <= domain; k++)
    starts[k] = /** @type {number} */ (starts[k]) + /** @type {number} */ (starts[k - 1]);
  const out = new Uint32Array(n);
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    for (let i = from; i < to; i++) {
      const row = /** @type {number} */ (rows[i]);
      const k = /** @type {number} */ (key[row]);
      out[/** @type {number} */ (starts[k])] = row;
      starts[k] = /** @type {number} */ (starts[k]) + 1;
    }
    yield;
  }
  return out;
}

/**
 * @param {import('./sealed.js').SealedColumns} s
 * @param {Int32Array} serviceRank per resource: its ServiceName's rank
 * @param {Int32Array} nameRank per metric: its MetricName's rank
 * @returns {Uint32Array} the rows in the order to write them
 */
export function rowOrder(s, serviceRank, nameRank) {
  return run(rowOrderSteps(s, serviceRank, nameRank));
}

/**
 * rowOrder() as steps (src/parquet/steps.js). The rows' (resource, metric) pairs are few: they
 * are numbered as they come (a pass over the rows that also counts each pair's rows) and sorted
 * by ServiceName, MetricName, resource, metric; the rows are then sorted by attribute set and,
 * stably, by their pair in that order: four passes over the rows, however many keys.
 * @param {Parameters<typeof rowOrder>} args
 * @returns {import('../../../parquet/steps.js').Steps<Uint32Array>}
 */
export function* rowOrderSteps(...args) {
  const [s, serviceRank, nameRank] = args;
  const n = s.rows;
  const { resource, metric } = s;
  const pairOf = new Uint32Array(n);
  /** @type {Map<number, number>} resource × metricCount + metric → pair */
  const pairs = new Map();
  /** @type {number[]} */
  const pairResource = [];
  /** @type {number[]} */
  const pairMetric = [];
  /** @type {number[]} */
  const pairRows = [];
  let lastKey = -1;
  let last = 0;
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    for (let row = from; row < to; row++) {
      const r = /** @type {number} */ (resource[row]);
      const m = /** @type {number} */ (metric[row]);
      const key = r * s.metricCount + m;
      if (key !== lastKey) {
        let pair = pairs.get(key);
        if (pair === undefined) {
          pair = pairResource.length;
          pairs.set(key, pair);
          pairResource.push(r);
          pairMetric.push(m);
          pairRows.push(0);
        }
        lastKey = key;
        last = pair;
      }
      pairOf[row] = last;
      pairRows[last] = /** @type {number} */ (pairRows[last]) + 1;
    }
    yield;
  }
  const ranked = pairResource.map((_, i) => i);
  ranked.sort((a, b) => {
    const ra = /** @type {number} */ (pairResource[a]);
    const rb = /** @type {number} */ (pairResource[b]);
    const ma = /** @type {number} */ (pairMetric[a]);
    const mb = /** @type {number} */ (pairMetric[b]);
    return (
      /** @type {number} */ (serviceRank[ra]) - /** @type {number} */ (serviceRank[rb]) ||
      /** @type {number} */ (nameRank[ma]) - /** @type {number} */ (nameRank[mb]) ||
      ra - rb ||
      ma - mb
    );
  });
  /** Where each pair's rows start in the order. */
  const starts = new Uint32Array(ranked.length);
  let at = 0;
  for (const pair of ranked) {
    starts[pair] = at;
    at += /** @type {number} */ (pairRows[pair]);
  }
  let byAttributes = new Uint32Array(n);
  for (let i = 0; i < n; i++) byAttributes[i] = i;
  byAttributes = yield* countingSort(byAttributes, s.attributes, s.setCount);
  const rows = new Uint32Array(n);
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    for (let i = from; i < to; i++) {
      const row = /** @type {number} */ (byAttributes[i]);
      const pair = /** @type {number} */ (pairOf[row]);
      rows[/** @type {number} */ (starts[pair])] = row;
      starts[pair] = /** @type {number} */ (starts[pair]) + 1;
    }
    yield;
  }
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
