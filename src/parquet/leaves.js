// @ts-check
// The leaf columns of the schema (schema.js), in its order, each with the function that writes
// its chunk of a row group from the sealed columns. Maps and lists: an empty one is a single
// entry at definition level 0 (the group present, no key_value or element); a map value that is
// an empty AnyValue is null (definition level 1).
import {
  booleanChunk,
  ENCODING,
  elementBytes,
  indexBytes,
  int32Chunk,
  int64Chunk,
  optionalChunk,
  repeatedChunk,
  Scratch,
  stringChunk,
} from './chunks.js';
import { LIST_STRIDE, LISTS, METRIC, METRIC_STRIDE, PRESENT, TYPE } from './sealed.js';

/** @typedef {import('./plan.js').Plan} Plan */
/** @typedef {import('./plan.js').MapEntries} MapEntries */
/** @typedef {import('./chunks.js').Chunk} Chunk */
/** @typedef {(p: Plan, scratch: Scratch, rows: Uint32Array) => Chunk} WriteChunk */

/** @param {keyof Plan['dict'] & keyof Plan['index']} name @param {'resource' | 'metric'} group @returns {WriteChunk} */
const string = (name, group) => (p, scratch, rows) =>
  stringChunk(scratch, rows, p.dict[name], (id) => p.pool.bytes(id), p.s[group], p.index[name]);

/** A metric slot's number, per row. @param {Plan} p @param {number} slot */
const metricSlot = (p, slot) => (/** @type {number} */ row) =>
  /** @type {number} */ (
    p.s.metrics[/** @type {number} */ (p.s.metric[row]) * METRIC_STRIDE + slot]
  );

/** @param {number} t */
const isNumber = (t) => t === TYPE.GAUGE || t === TYPE.SUM;

/**
 * An optional column whose value is there when `has(type, presentBits)` holds.
 * @param {'double' | 'int64' | 'int32'} kind
 * @param {'double' | 'integer' | 'min' | 'max' | 'scale' | 'zeroCount' | 'positiveOffset' | 'negativeOffset'} source
 * @param {(type: number, present: number) => boolean} has
 * @returns {WriteChunk}
 */
const optional = (kind, source, has) => (p, scratch, rows) =>
  optionalChunk(
    scratch,
    rows,
    kind,
    (row) => has(/** @type {number} */ (p.rowType[row]), /** @type {number} */ (p.s.present[row])),
    p.s[source],
  );

/**
 * A map's keys or values: per row the entries of its attribute set.
 * @param {'resource' | 'attribute'} which @param {'key' | 'value'} side @returns {WriteChunk}
 */
const mapLeaf = (which, side) => (p, scratch, rows) => {
  const { setOffsets } = p.s;
  const entries = which === 'resource' ? p.resourceEntries : p.attributeEntries;
  const dict = p.dict[`${which}${side === 'key' ? 'Keys' : 'Values'}`];
  const indices = side === 'key' ? entries.keys : entries.values;
  const setOf =
    which === 'resource'
      ? (/** @type {number} */ row) =>
          /** @type {number} */ (p.resourceSet[/** @type {number} */ (p.s.resource[row])])
      : (/** @type {number} */ row) => /** @type {number} */ (p.s.attributes[row]);
  let count = 0;
  const chunk = repeatedChunk(
    rows.length,
    side === 'key' ? 1 : 2,
    (k, rep, def) => {
      const set = setOf(/** @type {number} */ (rows[k]));
      const a = /** @type {number} */ (setOffsets[set]);
      const m = /** @type {number} */ (setOffsets[set + 1]) - a;
      rep.run(0, 1);
      if (m === 0) {
        def.run(0, 1);
        return 1;
      }
      if (m > 1) rep.run(1, m - 1);
      const idx = scratch.int32(count + m, count);
      if (side === 'key' || entries.hasNull[set] === 0) {
        def.run(side === 'key' ? 1 : 2, m);
        for (let e = a; e < a + m; e++) idx[count++] = /** @type {number} */ (indices[e]);
      } else {
        for (let e = a; e < a + m; e++) {
          const v = /** @type {number} */ (indices[e]);
          def.run(v < 0 ? 1 : 2, 1);
          if (v >= 0) idx[count++] = v;
        }
      }
      return m;
    },
    () => {
      const bytes = indexBytes(scratch.ints, count, dict.width);
      count = 0;
      return { bytes, encoding: ENCODING.RLE_DICTIONARY };
    },
  );
  return { ...chunk, dictionary: dict };
};

/**
 * A list's elements: per row `range(row)` gives where they are in `source` and how many.
 * @param {(p: Plan, row: number) => [number, number]} range
 * @param {(p: Plan) => Int32Array | Float64Array} source
 * @param {'int64' | 'double'} kind
 * @returns {WriteChunk}
 */
const listLeaf = (range, source, kind) => (p, scratch, rows) => {
  const from = source(p);
  const slots = kind === 'int64' ? 2 : 1;
  let count = 0;
  return repeatedChunk(
    rows.length,
    1,
    (k, rep, def) => {
      const [start, length] = range(p, /** @type {number} */ (rows[k]));
      rep.run(0, 1);
      if (length === 0) {
        def.run(0, 1);
        return 1;
      }
      if (length > 1) rep.run(1, length - 1);
      def.run(1, length);
      const span = from.subarray(start * slots, (start + length) * slots);
      if (kind === 'int64') scratch.int32((count + length) * 2, count * 2).set(span, count * 2);
      else scratch.float64(count + length, count).set(span, count);
      count += length;
      return length;
    },
    () => {
      const bytes = elementBytes(kind === 'int64' ? scratch.ints : scratch.doubles, count * slots);
      count = 0;
      return { bytes, encoding: ENCODING.PLAIN };
    },
  );
};

/** @param {number} which @returns {(p: Plan, row: number) => [number, number]} */
const countsOf = (which) => (p, row) => {
  const lengths = p.s.listLengths;
  let start = /** @type {number} */ (p.countStart[row]);
  for (let l = 0; l < which; l++) start += /** @type {number} */ (lengths[LIST_STRIDE * row + l]);
  return [start, /** @type {number} */ (lengths[LIST_STRIDE * row + which])];
};

/** @type {(p: Plan, row: number) => [number, number]} */
const boundsOf = (p, row) => {
  const id = /** @type {number} */ (p.s.bounds[row]);
  const start = /** @type {number} */ (p.s.boundsOffsets[id]);
  return [start, /** @type {number} */ (p.s.boundsOffsets[id + 1]) - start];
};

/** Leaf columns by path, in schema order. @type {[string, WriteChunk][]} */
export const LEAVES = [
  ['TimeUnix', (p, scratch, rows) => int64Chunk(scratch, rows, p.s.time)],
  ['StartTimeUnix', (p, scratch, rows) => int64Chunk(scratch, rows, p.s.start)],
  ['ServiceName', string('service', 'resource')],
  ['ResourceSchemaUrl', string('resourceSchemaUrl', 'resource')],
  ['ResourceAttributes.key_value.key', mapLeaf('resource', 'key')],
  ['ResourceAttributes.key_value.value', mapLeaf('resource', 'value')],
  ['ScopeName', string('scopeName', 'metric')],
  ['ScopeVersion', string('scopeVersion', 'metric')],
  ['ScopeSchemaUrl', string('scopeSchemaUrl', 'metric')],
  ['MetricName', string('name', 'metric')],
  ['MetricDescription', string('description', 'metric')],
  ['MetricUnit', string('unit', 'metric')],
  ['MetricType', string('type', 'metric')],
  ['Attributes.key_value.key', mapLeaf('attribute', 'key')],
  ['Attributes.key_value.value', mapLeaf('attribute', 'value')],
  [
    'AggregationTemporality',
    (p, scratch, rows) => int32Chunk(scratch, rows, metricSlot(p, METRIC.TEMPORALITY)),
  ],
  [
    'IsMonotonic',
    (p, _, rows) => booleanChunk(rows, (row) => metricSlot(p, METRIC.MONOTONIC)(row) === 1),
  ],
  ['Value', optional('double', 'double', (t, b) => isNumber(t) && (b & PRESENT.VALUE) !== 0)],
  [
    'ValueAsInt',
    optional('int64', 'integer', (t, b) => isNumber(t) && (b & PRESENT.INTEGER) !== 0),
  ],
  ['Count', optional('int64', 'integer', (t, b) => !isNumber(t) && (b & PRESENT.INTEGER) !== 0)],
  ['Sum', optional('double', 'double', (_, b) => (b & PRESENT.SUM) !== 0)],
  ['Min', optional('double', 'min', (_, b) => (b & PRESENT.MIN) !== 0)],
  ['Max', optional('double', 'max', (_, b) => (b & PRESENT.MAX) !== 0)],
  ['BucketCounts.list.element', listLeaf(countsOf(LISTS.BUCKETS), (p) => p.s.counts, 'int64')],
  ['ExplicitBounds.list.element', listLeaf(boundsOf, (p) => p.s.boundsValues, 'double')],
  ['Scale', optional('int32', 'scale', (t) => t === TYPE.EXPONENTIAL_HISTOGRAM)],
  ['ZeroCount', optional('int64', 'zeroCount', (t) => t === TYPE.EXPONENTIAL_HISTOGRAM)],
  ['PositiveOffset', optional('int32', 'positiveOffset', (t) => t === TYPE.EXPONENTIAL_HISTOGRAM)],
  [
    'PositiveBucketCounts.list.element',
    listLeaf(countsOf(LISTS.POSITIVE), (p) => p.s.counts, 'int64'),
  ],
  ['NegativeOffset', optional('int32', 'negativeOffset', (t) => t === TYPE.EXPONENTIAL_HISTOGRAM)],
  [
    'NegativeBucketCounts.list.element',
    listLeaf(countsOf(LISTS.NEGATIVE), (p) => p.s.counts, 'int64'),
  ],
  [
    'Flags',
    (p, scratch, rows) =>
      int32Chunk(scratch, rows, (row) => /** @type {number} */ (p.s.flags[row]) | 0),
  ],
];
