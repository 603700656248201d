// @ts-check
// The leaf columns of the schema (schema.js), in its order, each with the function that writes
// its chunk of a row group from the sealed columns. Maps and lists: an empty one is a single
// entry at definition level 0 (the group present, no key_value or element); a map value that is
// an empty AnyValue is null (definition level 1).
import {
  booleanChunkSteps,
  ENCODING,
  int32ChunkSteps,
  int64ChunkSteps,
  optionalChunkSteps,
  repeatedChunkSteps,
  Scratch,
  stringChunkSteps,
} from '../../../parquet/chunks.js';
import { NON_NULL } from './plan.js';
import { LIST_STRIDE, LISTS } from './sealed.js';

/** @typedef {import('./plan.js').Plan} Plan */
/** @typedef {import('./plan.js').MapEntries} MapEntries */
/** @typedef {import('../../../parquet/chunks.js').Chunk} Chunk */
/** @typedef {import('../../../parquet/dictionaries.js').Dictionary} Dictionary */
/** @typedef {import('../../../parquet/byte-writer.js').ByteWriter} ByteWriter */
/** @typedef {(p: Plan, scratch: Scratch, rows: Uint32Array) => Chunk | import('../../../parquet/steps.js').Steps<Chunk>} WriteChunk */

/** @param {keyof Plan['dict'] & keyof Plan['index']} name @param {'resource' | 'metric'} group @returns {WriteChunk} */
const string = (name, group) => (p, scratch, rows) =>
  stringChunkSteps(scratch, rows, p.dict[name], p.pool, p.s[group], p.index[name]);

/**
 * An optional column: rows whose Plan.nonNull has `bit` have a value in `source`, written in
 * `encoding` (PLAIN unless said; docs/parquet.md, "Column encodings", has the measurements).
 * @param {'double' | 'int64' | 'int32'} kind
 * @param {'double' | 'integer' | 'min' | 'max' | 'scale' | 'zeroCount' | 'positiveOffset' | 'negativeOffset'} source
 * @param {number} bit
 * @param {number} [encoding]
 * @returns {WriteChunk}
 */
const optional =
  (kind, source, bit, encoding = ENCODING.PLAIN) =>
  (p, scratch, rows) =>
    optionalChunkSteps(scratch, rows, kind, p.nonNull, bit, p.s[source], encoding);

/**
 * A map's keys or values: per row the entries of its attribute set, packed once per set.
 * @param {'resource' | 'attribute'} which @param {'key' | 'value'} side @returns {WriteChunk}
 */
const mapLeaf = (which, side) =>
  function* mapChunk(p, scratch, rows) {
    const { setOffsets } = p.s;
    const entries = which === 'resource' ? p.resourceEntries : p.attributeEntries;
    const dict = p.dict[`${which}${side === 'key' ? 'Keys' : 'Values'}`];
    const isKey = side === 'key';
    const packed = isKey ? entries.keys : entries.values;
    const counts = isKey ? setOffsets : entries.valueOffsets;
    const sets = which === 'resource' ? p.resourceSet : null;
    const group = which === 'resource' ? p.s.resource : p.s.attributes;
    const indices = scratch.indices;
    indices.reset(dict.width);
    const chunk = yield* repeatedChunkSteps(
      scratch,
      rows.length,
      isKey ? 1 : 2,
      (k, rep, def) => {
        const g = /** @type {number} */ (group[/** @type {number} */ (rows[k])]);
        const set = sets === null ? g : /** @type {number} */ (sets[g]);
        const a = /** @type {number} */ (setOffsets[set]);
        const m = /** @type {number} */ (setOffsets[set + 1]) - a;
        rep.value(0);
        if (m === 0) {
          def.value(0);
          return 1;
        }
        if (m > 1) rep.repeat(1, m - 1);
        if (isKey || entries.hasNull[set] === 0) def.repeat(isKey ? 1 : 2, m);
        else {
          for (let e = a; e < a + m; e++) {
            def.value(/** @type {number} */ (entries.valueIndex[e]) < 0 ? 1 : 2);
          }
        }
        const c = /** @type {number} */ (counts[set]);
        const present = /** @type {number} */ (counts[set + 1]) - c;
        if (present > 0)
          indices.packed(packed.bytes, /** @type {number} */ (packed.starts[set]), present);
        return m;
      },
      (arena) => {
        arena.byte(dict.width);
        indices.finish(arena);
      },
      ENCODING.RLE_DICTIONARY,
    );
    return { ...chunk, dictionary: dict };
  };

/**
 * A list's elements: per row `range` sets [start, length] of its elements; `add(start, length)`
 * keeps them for the page, `values(arena)` writes the page's values.
 * @param {(p: Plan, row: number, range: Uint32Array) => void} range
 * @param {(p: Plan, scratch: Scratch) => { add: (start: number, length: number) => void, values: (arena: ByteWriter) => void, dictionary?: Dictionary, encoding: number }} elements
 * @returns {WriteChunk}
 */
const listLeaf = (range, elements) =>
  function* listChunk(p, scratch, rows) {
    const span = new Uint32Array(2);
    const { add, values, dictionary, encoding } = elements(p, scratch);
    const chunk = yield* repeatedChunkSteps(
      scratch,
      rows.length,
      1,
      (k, rep, def) => {
        range(p, /** @type {number} */ (rows[k]), span);
        const length = /** @type {number} */ (span[1]);
        rep.value(0);
        if (length === 0) {
          def.value(0);
          return 1;
        }
        if (length > 1) rep.repeat(1, length - 1);
        def.repeat(1, length);
        add(/** @type {number} */ (span[0]), length);
        return length;
      },
      values,
      encoding,
    );
    return dictionary === undefined ? chunk : { ...chunk, dictionary };
  };

/** Bucket counts (INT64) as DELTA_BINARY_PACKED: long runs of small numbers. @type {Parameters<typeof listLeaf>[1]} */
const countElements = (p, scratch) => {
  const { delta } = scratch;
  const counts = p.s.counts;
  return {
    add(start, length) {
      for (let i = start; i < start + length; i++) {
        delta.add(/** @type {number} */ (counts[2 * i]), /** @type {number} */ (counts[2 * i + 1]));
      }
    },
    values(arena) {
      delta.finish(arena);
    },
    encoding: ENCODING.DELTA_BINARY_PACKED,
  };
};

/** Explicit bounds: indices into the file's dictionary of bounds, packed once per bound list. @type {Parameters<typeof listLeaf>[1]} */
const boundElements = (p, scratch) => {
  const { indices } = scratch;
  const { dictionary, packed } = p.bounds;
  indices.reset(dictionary.width);
  return {
    add(start, length) {
      indices.packed(packed.bytes, /** @type {number} */ (packed.byValue[start]), length);
    },
    values(arena) {
      arena.byte(dictionary.width);
      indices.finish(arena);
    },
    dictionary,
    encoding: ENCODING.RLE_DICTIONARY,
  };
};

/** @param {number} which @returns {(p: Plan, row: number, range: Uint32Array) => void} */
const countsOf = (which) => (p, row, range) => {
  const lengths = p.s.listLengths;
  let start = /** @type {number} */ (p.countStart[row]);
  for (let l = 0; l < which; l++) start += /** @type {number} */ (lengths[LIST_STRIDE * row + l]);
  range[0] = start;
  range[1] = /** @type {number} */ (lengths[LIST_STRIDE * row + which]);
};

/** @type {(p: Plan, row: number, range: Uint32Array) => void} */
const boundsOf = (p, row, range) => {
  const id = /** @type {number} */ (p.s.bounds[row]);
  range[0] = /** @type {number} */ (p.s.boundsOffsets[id]);
  range[1] = /** @type {number} */ (p.s.boundsOffsets[id + 1]) - /** @type {number} */ (range[0]);
};

/** Leaf columns by path, in schema order. @type {[string, WriteChunk][]} */
export const LEAVES = [
  ['TimeUnix', (p, scratch, rows) => int64ChunkSteps(scratch, rows, p.s.time)],
  ['StartTimeUnix', (p, scratch, rows) => int64ChunkSteps(scratch, rows, p.s.start)],
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
    (p, scratch, rows) => int32ChunkSteps(scratch, rows, p.s.metric, p.temporality),
  ],
  ['IsMonotonic', (p, scratch, rows) => booleanChunkSteps(scratch, rows, p.s.metric, p.monotonic)],
  // ValueAsInt as deltas: a counter grows by small steps from point to point of its series,
  // which the rows follow. Value stays PLAIN: BYTE_STREAM_SPLIT, 0.3 bytes a point smaller, is
  // not read by fastparquet (docs/parquet.md, "Column encodings").
  ['Value', optional('double', 'double', NON_NULL.VALUE)],
  ['ValueAsInt', optional('int64', 'integer', NON_NULL.VALUE_AS_INT, ENCODING.DELTA_BINARY_PACKED)],
  ['Count', optional('int64', 'integer', NON_NULL.COUNT)],
  ['Sum', optional('double', 'double', NON_NULL.SUM)],
  ['Min', optional('double', 'min', NON_NULL.MIN)],
  ['Max', optional('double', 'max', NON_NULL.MAX)],
  ['BucketCounts.list.element', listLeaf(countsOf(LISTS.BUCKETS), countElements)],
  ['ExplicitBounds.list.element', listLeaf(boundsOf, boundElements)],
  ['Scale', optional('int32', 'scale', NON_NULL.EXPONENTIAL)],
  ['ZeroCount', optional('int64', 'zeroCount', NON_NULL.EXPONENTIAL)],
  ['PositiveOffset', optional('int32', 'positiveOffset', NON_NULL.EXPONENTIAL)],
  ['PositiveBucketCounts.list.element', listLeaf(countsOf(LISTS.POSITIVE), countElements)],
  ['NegativeOffset', optional('int32', 'negativeOffset', NON_NULL.EXPONENTIAL)],
  ['NegativeBucketCounts.list.element', listLeaf(countsOf(LISTS.NEGATIVE), countElements)],
  ['Flags', (p, scratch, rows) => int32ChunkSteps(scratch, rows, null, p.s.flags)],
];
