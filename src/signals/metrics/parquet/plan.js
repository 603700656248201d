// @ts-check
// What the writer works out once per file before it writes a page: which resources, metrics and
// attribute sets the rows use, each string column's dictionary and every group's index in it,
// the map entries as dictionary indices, where each row's bucket counts start, and the row order.
import { packLists } from '../../../parquet/bit-packer.js';
import {
  boundsDictionary,
  dictionaryOf,
  groupIndex,
  StringPool,
} from '../../../parquet/dictionaries.js';
import { run, STEP_ROWS } from '../../../parquet/steps.js';
import { rowOrderSteps } from './row-order.js';
import {
  LIST_STRIDE,
  METRIC,
  METRIC_STRIDE,
  METRIC_TYPES,
  PRESENT,
  RESOURCE,
  RESOURCE_STRIDE,
  TYPE,
} from './sealed.js';

/** @typedef {import('./sealed.js').SealedColumns} SealedColumns */
/** @typedef {import('../../../parquet/dictionaries.js').Dictionary} Dictionary */
/** @typedef {ReturnType<typeof mapEntries> extends Generator<any, infer R, any> ? R : never} MapEntries */
/** @typedef {ReturnType<typeof plan>} Plan */

/** Groups `ids` marks as used. @param {Uint8Array} used */
function usedOf(used) {
  /** @type {number[]} */
  const out = [];
  used.forEach((u, i) => {
    if (u === 1) out.push(i);
  });
  return out;
}

/**
 * Marks (per pool id) the strings in slot `slot` of the groups `groups`.
 * @param {number} size the pool's size @param {Uint32Array} table @param {number} stride @param {number[]} groups @param {number} slot @param {number} [base]
 */
function slotStrings(size, table, stride, groups, slot, base = 0) {
  const used = new Uint8Array(size);
  for (let i = 0; i < groups.length; i++) {
    used[base + /** @type {number} */ (table[/** @type {number} */ (groups[i]) * stride + slot])] =
      1;
  }
  return used;
}

/**
 * Marks (per pool id) the key (side 0) or value (side 1) strings of the entries of `sets`.
 * @param {number} size @param {SealedColumns} s @param {number[]} sets @param {0 | 1} side
 */
function entryStrings(size, s, sets, side) {
  const used = new Uint8Array(size);
  for (let i = 0; i < sets.length; i++) {
    const set = /** @type {number} */ (sets[i]);
    const end = /** @type {number} */ (s.setOffsets[set + 1]);
    for (let e = /** @type {number} */ (s.setOffsets[set]); e < end; e++) {
      const id = /** @type {number} */ (s.setEntries[2 * e + side]);
      if (id >= 0) used[id] = 1;
    }
  }
  return used;
}

/**
 * A map column's entries, packed per attribute set for BitPacker.packed: its keys' dictionary
 * indices, and its present values' (an empty AnyValue has none; `valueIndex` keeps -1 for it).
 * Steps (src/parquet/steps.js): yields every STEP_ROWS attribute sets.
 * @param {SealedColumns} s @param {Dictionary} keys @param {Dictionary} values
 */
function* mapEntries(s, keys, values) {
  const count = /** @type {number} */ (s.setOffsets[s.setCount]);
  const keyIndex = new Int32Array(count);
  const valueIndex = new Int32Array(count);
  const present = new Int32Array(count);
  const valueOffsets = new Uint32Array(s.setCount + 1);
  const hasNull = new Uint8Array(s.setCount);
  let j = 0;
  for (let from = 0; from < s.setCount; from += STEP_ROWS) {
    const to = Math.min(s.setCount, from + STEP_ROWS);
    j = setEntries(s, keys, values, from, to, j, {
      keyIndex,
      valueIndex,
      present,
      valueOffsets,
      hasNull,
    });
    yield;
  }
  return {
    keys: packLists(keyIndex, s.setOffsets, s.setCount, keys.width),
    values: packLists(present, valueOffsets, s.setCount, values.width),
    valueOffsets,
    valueIndex,
    hasNull,
  };
}

/**
 * mapEntries() for the attribute sets [from, to): their entries' indices; returns the count of
 * present values so far.
 * @param {SealedColumns} s @param {Dictionary} keys @param {Dictionary} values
 * @param {number} from @param {number} to @param {number} j present values before set `from`
 * @param {{ keyIndex: Int32Array, valueIndex: Int32Array, present: Int32Array, valueOffsets: Uint32Array, hasNull: Uint8Array }} out
 */
function setEntries(s, keys, values, from, to, j, out) {
  const { keyIndex, valueIndex, present, valueOffsets, hasNull } = out;
  for (let set = from; set < to; set++) {
    for (
      let e = /** @type {number} */ (s.setOffsets[set]);
      e < /** @type {number} */ (s.setOffsets[set + 1]);
      e++
    ) {
      keyIndex[e] = /** @type {number} */ (keys.rank[/** @type {number} */ (s.setEntries[2 * e])]);
      const v = /** @type {number} */ (s.setEntries[2 * e + 1]);
      valueIndex[e] = v < 0 ? -1 : /** @type {number} */ (values.rank[v]);
      if (v < 0) hasNull[set] = 1;
      else present[j++] = /** @type {number} */ (valueIndex[e]);
    }
    valueOffsets[set + 1] = j;
  }
  return j;
}

/** Bits of Plan.nonNull: which optional columns a row has a value in. */
export const NON_NULL = /** @type {const} */ ({
  VALUE: 1,
  VALUE_AS_INT: 2,
  SUM: 4,
  MIN: 8,
  MAX: 16,
  COUNT: 32,
  EXPONENTIAL: 64,
});

/**
 * Per row: NON_NULL bits, from its type and PRESENT bits (steps of STEP_ROWS rows).
 * @param {SealedColumns} s @param {Uint8Array} rowType
 * @returns {import('../../../parquet/steps.js').Steps<Uint8Array>}
 */
function* nonNullOf(s, rowType) {
  const out = new Uint8Array(s.rows);
  for (let from = 0; from < s.rows; from += STEP_ROWS) {
    nonNullRows(rowType, s.present, from, Math.min(s.rows, from + STEP_ROWS), out);
    yield;
  }
  return out;
}

/**
 * nonNullOf() for the rows [from, to).
 * @param {Uint8Array} rowType @param {Uint8Array} present SealedColumns.present
 * @param {number} from @param {number} to @param {Uint8Array} out
 */
function nonNullRows(rowType, present, from, to, out) {
  for (let row = from; row < to; row++) {
    const t = /** @type {number} */ (rowType[row]);
    const b = /** @type {number} */ (present[row]);
    if (t === TYPE.GAUGE || t === TYPE.SUM) {
      out[row] =
        (b & PRESENT.VALUE ? NON_NULL.VALUE : 0) |
        (b & PRESENT.INTEGER ? NON_NULL.VALUE_AS_INT : 0);
    } else {
      out[row] =
        (b & PRESENT.INTEGER ? NON_NULL.COUNT : 0) |
        (b & PRESENT.SUM ? NON_NULL.SUM : 0) |
        (b & PRESENT.MIN ? NON_NULL.MIN : 0) |
        (b & PRESENT.MAX ? NON_NULL.MAX : 0) |
        (t === TYPE.EXPONENTIAL_HISTOGRAM ? NON_NULL.EXPONENTIAL : 0);
    }
  }
}

/**
 * Marks the ids of `column` in the rows [from, to) as used.
 * @param {Uint32Array} column @param {number} from @param {number} to @param {Uint8Array} used
 */
function markUsed(column, from, to, used) {
  for (let row = from; row < to; row++) used[/** @type {number} */ (column[row])] = 1;
}

/**
 * For the rows [from, to): each one's metric type and where its bucket counts start, the first
 * at `at`; returns where the next row's start.
 * @param {Uint32Array} metric SealedColumns.metric @param {Uint32Array} metrics SealedColumns.metrics
 * @param {Uint32Array} listLengths SealedColumns.listLengths
 * @param {number} from @param {number} to @param {number} at
 * @param {Uint8Array} rowType @param {Uint32Array} countStart
 */
function typesAndCountStarts(metric, metrics, listLengths, from, to, at, rowType, countStart) {
  let next = at;
  for (let row = from; row < to; row++) {
    rowType[row] = /** @type {number} */ (
      metrics[/** @type {number} */ (metric[row]) * METRIC_STRIDE + METRIC.TYPE]
    );
    countStart[row] = next;
    for (let l = 0; l < LIST_STRIDE; l++)
      next += /** @type {number} */ (listLengths[LIST_STRIDE * row + l]);
  }
  return next;
}

/** A metric slot of every metric. @param {SealedColumns} s @param {number} slot */
function metricSlots(s, slot) {
  const out = new Int32Array(s.metricCount);
  for (let m = 0; m < s.metricCount; m++)
    out[m] = /** @type {number} */ (s.metrics[m * METRIC_STRIDE + slot]);
  return out;
}

/** @param {SealedColumns} s */
export function plan(s) {
  return run(planSteps(s));
}

/**
 * plan() as steps (src/parquet/steps.js): each pass over the rows yields every STEP_ROWS rows,
 * and the other passes (a dictionary, a map's entries, a sort of the row order) one at a time.
 * @param {SealedColumns} s
 */
export function* planSteps(s) {
  const n = s.rows;
  const pool = new StringPool(
    s.strings,
    s.stringOffsets,
    s.stringCount,
    METRIC_TYPES.map(([, name]) => name),
  );
  const usedResources = new Uint8Array(s.resourceCount);
  const usedMetrics = new Uint8Array(s.metricCount);
  const usedSets = new Uint8Array(s.setCount);
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    markUsed(s.resource, from, to, usedResources);
    markUsed(s.metric, from, to, usedMetrics);
    markUsed(s.attributes, from, to, usedSets);
    yield;
  }
  const resources = usedOf(usedResources);
  const metrics = usedOf(usedMetrics);
  const resourceSets = resources.map(
    (r) => /** @type {number} */ (s.resources[r * RESOURCE_STRIDE + RESOURCE.ATTRIBUTES]),
  );
  const pointSets = usedOf(usedSets);
  yield;
  /** @param {number} slot */
  const resourceDictionary = (slot) =>
    dictionaryOf(pool, slotStrings(pool.size, s.resources, RESOURCE_STRIDE, resources, slot));
  /** @param {number} slot @param {number} [base] */
  const metricDictionary = (slot, base = 0) =>
    dictionaryOf(pool, slotStrings(pool.size, s.metrics, METRIC_STRIDE, metrics, slot, base));
  const service = resourceDictionary(RESOURCE.SERVICE);
  const resourceSchemaUrl = resourceDictionary(RESOURCE.SCHEMA_URL);
  yield;
  const resourceKeys = dictionaryOf(pool, entryStrings(pool.size, s, resourceSets, 0));
  yield;
  const resourceValues = dictionaryOf(pool, entryStrings(pool.size, s, resourceSets, 1));
  yield;
  const scopeName = metricDictionary(METRIC.SCOPE_NAME);
  const scopeVersion = metricDictionary(METRIC.SCOPE_VERSION);
  const scopeSchemaUrl = metricDictionary(METRIC.SCOPE_SCHEMA_URL);
  yield;
  const name = metricDictionary(METRIC.NAME);
  const description = metricDictionary(METRIC.DESCRIPTION);
  const unit = metricDictionary(METRIC.UNIT);
  const type = metricDictionary(METRIC.TYPE, pool.namesBase);
  yield;
  const attributeKeys = dictionaryOf(pool, entryStrings(pool.size, s, pointSets, 0));
  yield;
  const attributeValues = dictionaryOf(pool, entryStrings(pool.size, s, pointSets, 1));
  yield;
  const dict = {
    service,
    resourceSchemaUrl,
    resourceKeys,
    resourceValues,
    scopeName,
    scopeVersion,
    scopeSchemaUrl,
    name,
    description,
    unit,
    type,
    attributeKeys,
    attributeValues,
  };
  /** @param {Dictionary} d @param {number} slot */
  const ofResource = (d, slot) =>
    groupIndex(d, s.resources, RESOURCE_STRIDE, s.resourceCount, slot);
  /** @param {Dictionary} d @param {number} slot @param {number} [base] */
  const ofMetric = (d, slot, base) =>
    groupIndex(d, s.metrics, METRIC_STRIDE, s.metricCount, slot, base);
  const index = {
    service: ofResource(dict.service, RESOURCE.SERVICE),
    resourceSchemaUrl: ofResource(dict.resourceSchemaUrl, RESOURCE.SCHEMA_URL),
    scopeName: ofMetric(dict.scopeName, METRIC.SCOPE_NAME),
    scopeVersion: ofMetric(dict.scopeVersion, METRIC.SCOPE_VERSION),
    scopeSchemaUrl: ofMetric(dict.scopeSchemaUrl, METRIC.SCOPE_SCHEMA_URL),
    name: ofMetric(dict.name, METRIC.NAME),
    description: ofMetric(dict.description, METRIC.DESCRIPTION),
    unit: ofMetric(dict.unit, METRIC.UNIT),
    type: ofMetric(dict.type, METRIC.TYPE, pool.namesBase),
  };
  /** Per resource: its attribute set. */
  const resourceSet = new Uint32Array(s.resourceCount);
  for (let r = 0; r < s.resourceCount; r++) {
    resourceSet[r] = /** @type {number} */ (s.resources[r * RESOURCE_STRIDE + RESOURCE.ATTRIBUTES]);
  }
  yield;
  /** Per row: its metric's type code; where its bucket counts start in `counts`. */
  const rowType = new Uint8Array(n);
  const countStart = new Uint32Array(n);
  let at = 0;
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    at = typesAndCountStarts(s.metric, s.metrics, s.listLengths, from, to, at, rowType, countStart);
    yield;
  }
  const resourceEntries = yield* mapEntries(s, dict.resourceKeys, dict.resourceValues);
  const attributeEntries = yield* mapEntries(s, dict.attributeKeys, dict.attributeValues);
  const bounds = boundsDictionary(s);
  yield;
  const nonNull = yield* nonNullOf(s, rowType);
  const order = yield* rowOrderSteps(s, index.service, index.name);
  return {
    s,
    pool,
    dict,
    index,
    resourceSet,
    resourceEntries,
    attributeEntries,
    bounds,
    rowType,
    nonNull,
    temporality: metricSlots(s, METRIC.TEMPORALITY),
    monotonic: metricSlots(s, METRIC.MONOTONIC),
    countStart,
    order,
  };
}

// The passes above run here on a few rows, a few times (see row-order.js's and chunks.js's).
{
  const n = 4;
  const ids = new Uint32Array(n);
  for (let i = 0; i < 8; i++) {
    markUsed(ids, 0, n, new Uint8Array(1));
    typesAndCountStarts(
      ids,
      new Uint32Array(METRIC_STRIDE),
      new Uint32Array(LIST_STRIDE * n),
      0,
      n,
      0,
      new Uint8Array(n),
      new Uint32Array(n),
    );
    nonNullRows(
      new Uint8Array(n).fill(i % 2 ? TYPE.SUM : TYPE.HISTOGRAM),
      new Uint8Array(n),
      0,
      n,
      new Uint8Array(n),
    );
  }
}
