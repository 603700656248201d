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
    countKeys(rows, key, from, Math.min(n, from + STEP_ROWS), starts);
    yield;
  }
  for (let k = 1; k <= domain; k++)
    starts[k] = /** @type {number} */ (starts[k]) + /** @type {number} */ (starts[k - 1]);
  const out = new Uint32Array(n);
  for (let from = 0; from < n; from += STEP_ROWS) {
    place(rows, key, from, Math.min(n, from + STEP_ROWS), starts, out);
    yield;
  }
  return out;
}

/**
 * Counts the keys of rows[from, to): starts[k + 1] is key k's count.
 * @param {Uint32Array} rows @param {ArrayLike<number>} key @param {number} from @param {number} to @param {Uint32Array} starts
 */
function countKeys(rows, key, from, to, starts) {
  for (let i = from; i < to; i++) {
    const k = /** @type {number} */ (key[/** @type {number} */ (rows[i])]) + 1;
    starts[k] = /** @type {number} */ (starts[k]) + 1;
  }
}

/**
 * Puts rows[from, to) in `out` at their key's next place (`starts[k]`, which moves on).
 * @param {Uint32Array} rows @param {ArrayLike<number>} key @param {number} from @param {number} to
 * @param {Uint32Array} starts @param {Uint32Array} out
 */
function place(rows, key, from, to, starts, out) {
  for (let i = from; i < to; i++) {
    const row = /** @type {number} */ (rows[i]);
    const k = /** @type {number} */ (key[row]);
    out[/** @type {number} */ (starts[k])] = row;
    starts[k] = /** @type {number} */ (starts[k]) + 1;
  }
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

/** The rows' (resource, metric) pairs, numbered as they come, and each one's count of rows. */
class Pairs {
  /** @type {Map<number, number>} resource × metricCount + metric → pair */
  #ids = new Map();
  /** @type {number[]} */
  pairResource = [];
  /** @type {number[]} */
  pairMetric = [];
  /** @type {number[]} */
  pairRows = [];
  #lastKey = -1;
  #last = 0;

  /** @param {number} rows @param {number} metricCount */
  constructor(rows, metricCount) {
    /** Per row: its pair. */
    this.pairOf = new Uint32Array(rows);
    this.metricCount = metricCount;
  }

  /**
   * Numbers the pairs of the rows [from, to).
   * @param {ArrayLike<number>} resource @param {ArrayLike<number>} metric @param {number} from @param {number} to
   */
  number(resource, metric, from, to) {
    const { pairOf, pairResource, pairMetric, pairRows } = this;
    let lastKey = this.#lastKey;
    let last = this.#last;
    for (let row = from; row < to; row++) {
      const r = /** @type {number} */ (resource[row]);
      const m = /** @type {number} */ (metric[row]);
      const key = r * this.metricCount + m;
      if (key !== lastKey) {
        let pair = this.#ids.get(key);
        if (pair === undefined) {
          pair = pairResource.length;
          this.#ids.set(key, pair);
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
    this.#lastKey = lastKey;
    this.#last = last;
  }
}

/** 0, 1, …, n - 1. @param {number} n */
function identity(n) {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
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
  const pairs = new Pairs(n, s.metricCount);
  for (let from = 0; from < n; from += STEP_ROWS) {
    pairs.number(resource, metric, from, Math.min(n, from + STEP_ROWS));
    yield;
  }
  const { pairOf, pairResource, pairMetric, pairRows } = pairs;
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
  const byAttributes = yield* countingSort(identity(n), s.attributes, s.setCount);
  const rows = new Uint32Array(n);
  for (let from = 0; from < n; from += STEP_ROWS) {
    place(byAttributes, pairOf, from, Math.min(n, from + STEP_ROWS), starts, rows);
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
  const open = { from: 0, sorted: true };
  for (let i = 1; i <= rows.length; i += STEP_ROWS) {
    sortSeries(
      s.resource,
      s.metric,
      s.attributes,
      s.time,
      rows,
      i,
      Math.min(rows.length + 1, i + STEP_ROWS),
      open,
    );
    yield;
  }
}

/**
 * sortSeriesByTime() for the row places [i, to): each ends a run of one series (sorted where
 * needed) or continues it; `open` is the open run's start and whether it is in time order. The
 * place past the last row ends the last run.
 * @param {Uint32Array} resource @param {Uint32Array} metric @param {Uint32Array} attributes @param {Int32Array} time
 * @param {Uint32Array} rows @param {number} i @param {number} to @param {{ from: number, sorted: boolean }} open
 */
function sortSeries(resource, metric, attributes, time, rows, i, to, open) {
  const n = rows.length;
  let { from, sorted } = open;
  for (; i < to; i++) {
    const a = /** @type {number} */ (rows[i - 1]);
    const b = i < n ? /** @type {number} */ (rows[i]) : a;
    if (
      i < n &&
      resource[a] === resource[b] &&
      metric[a] === metric[b] &&
      attributes[a] === attributes[b]
    ) {
      if (sorted && compareInt64(time, a, b) > 0) sorted = false;
      continue;
    }
    if (!sorted) {
      const series = Array.from(rows.subarray(from, i)).sort(
        (x, y) => compareInt64(time, x, y) || x - y,
      );
      rows.set(series, from);
    }
    from = i;
    sorted = true;
  }
  open.from = from;
  open.sorted = sorted;
}

// The passes above run here on a few rows, a few times, as chunks.js's do (see there): V8
// optimizes a long pass while it runs, before the code after its loop has run, and without type
// feedback there the optimized pass is given up at the loop's end, on every later call.
{
  const n = 4;
  const ids = new Uint32Array(n);
  const time = new Int32Array(2 * n);
  for (let i = 0; i < 8; i++) {
    const starts = new Uint32Array(2);
    countKeys(ids, ids, 0, n, starts);
    place(ids, ids, 0, n, starts, new Uint32Array(n));
    new Pairs(n, 1).number(ids, ids, 0, n);
    sortSeries(ids, ids, ids, time, identity(n), 1, n + 1, { from: 0, sorted: true });
  }
}
