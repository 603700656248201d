// @ts-check
// The leaf columns of the schema (schema.js), in its order, each with the function that writes
// its chunk of a row group from the sealed columns. Maps and lists: an empty one is a single
// entry at definition level 0 (the group present, no key_value or element); a map value that is
// an empty AnyValue is null (definition level 1).
import {
  booleanChunkSteps,
  ENCODING,
  elementBytes,
  int32ChunkSteps,
  int64ChunkSteps,
  optionalChunkSteps,
  repeatedChunkSteps,
  Scratch,
  stringChunkSteps,
} from '../../../parquet/chunks.js';
import { STEP_ROWS, STEP_VALUES } from '../../../parquet/steps.js';
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
 * @typedef {{ add: (start: number, length: number) => void, values: (arena: ByteWriter) => void, dictionary?: Dictionary, encoding: number }} Elements
 * @typedef {(p: Plan, scratch: Scratch, rows: Uint32Array, range: (p: Plan, row: number, range: Uint32Array) => void) => Elements | import('../../../parquet/steps.js').Steps<Elements>} ElementsOf
 */

/**
 * A list's elements: per row `range` sets [start, length] of its elements; `elements` may first
 * go over the chunk's rows (a dictionary of its values), then `add(start, length)` keeps a row's
 * elements for the page, `values(arena)` writes the page's values.
 * @param {(p: Plan, row: number, range: Uint32Array) => void} range
 * @param {ElementsOf} elements
 * @returns {WriteChunk}
 */
const listLeaf = (range, elements) =>
  function* listChunk(p, scratch, rows) {
    const span = new Uint32Array(2);
    const made = elements(p, scratch, rows, range);
    const { add, values, dictionary, encoding } = isElements(made) ? made : yield* made;
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

/** @param {Elements | import('../../../parquet/steps.js').Steps<Elements>} e @returns {e is Elements} */
const isElements = (e) => 'add' in e;

/**
 * Bucket counts (INT64), by what the chunk holds (src/parquet/int64-dictionary.js): where its
 * values repeat (an exponential histogram's long lists of small counts), a dictionary and
 * byte-wide indices; otherwise PLAIN (an explicit histogram's few cumulative counts, which grow:
 * zstd finds the previous point's list a row back). Not DELTA_BINARY_PACKED, which made them
 * 2.2 and 3.4 times larger (docs/parquet.md, "Column encodings").
 * @type {ElementsOf}
 */
function* countElements(p, scratch, rows, range) {
  const counts = p.s.counts;
  const dict = scratch.int64Dictionary;
  dict.reset();
  const span = new Uint32Array(2);
  for (let k = 0; k < rows.length; ) {
    k = addCounts(p, rows, k, range, span, dict);
    yield;
  }
  const dictionary = dict.build(scratch.dictionaryMinUses);
  if (dictionary === undefined) return plainCounts(p, scratch);
  const { indices } = scratch;
  indices.reset(dictionary.width);
  return {
    add(start, length) {
      for (let i = start; i < start + length; i++) {
        indices.value(
          dict.index(
            /** @type {number} */ (counts[2 * i]),
            /** @type {number} */ (counts[2 * i + 1]),
          ),
        );
      }
    },
    values(arena) {
      arena.byte(dictionary.width);
      indices.finish(arena);
    },
    dictionary,
    encoding: ENCODING.RLE_DICTIONARY,
  };
}

/**
 * countElements() for rows from `k` on: their counts go into `dict`, up to STEP_ROWS rows or
 * STEP_VALUES counts (as a step of repeatedChunkSteps); returns the next row. A plain function:
 * the generator holds no loop over rows (see chunks.js).
 * @param {Plan} p @param {Uint32Array} rows @param {number} k
 * @param {(p: Plan, row: number, range: Uint32Array) => void} range @param {Uint32Array} span
 * @param {import('../../../parquet/int64-dictionary.js').Int64Dictionary} dict
 */
function addCounts(p, rows, k, range, span, dict) {
  const counts = p.s.counts;
  const end = Math.min(rows.length, k + STEP_ROWS);
  let values = 0;
  for (; k < end && values < STEP_VALUES; k++) {
    range(p, /** @type {number} */ (rows[k]), span);
    const start = /** @type {number} */ (span[0]);
    const stop = start + /** @type {number} */ (span[1]);
    for (let i = start; i < stop; i++) {
      dict.add(/** @type {number} */ (counts[2 * i]), /** @type {number} */ (counts[2 * i + 1]));
    }
    values += stop - start;
  }
  return k;
}

/**
 * Bucket counts PLAIN: each 8 bytes, little-endian. A page's rows are kept as [start, length]
 * until its values are written.
 * @param {Plan} p @param {Scratch} scratch @returns {Elements}
 */
function plainCounts(p, scratch) {
  const counts = p.s.counts;
  let ranges = scratch.int32(64);
  let n = 0;
  return {
    add(start, length) {
      if (2 * n + 2 > ranges.length) ranges = scratch.int32(4 * n + 2, 2 * n);
      ranges[2 * n] = start;
      ranges[2 * n + 1] = length;
      n++;
    },
    values(arena) {
      for (let r = 0; r < n; r++) {
        const start = /** @type {number} */ (ranges[2 * r]);
        const length = /** @type {number} */ (ranges[2 * r + 1]);
        arena.bytes(elementBytes(counts.subarray(2 * start, 2 * (start + length)), 2 * length));
      }
      n = 0;
    },
    encoding: ENCODING.PLAIN,
  };
}

/** Explicit bounds: indices into the file's dictionary of bounds, packed once per bound list. @type {ElementsOf} */
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
  // ValueAsInt and Count as deltas: a counter or a histogram's count grows by small steps from
  // point to point of its series, which the rows follow. Value and Sum stay PLAIN:
  // BYTE_STREAM_SPLIT, 0.3 bytes a point smaller each, is not read by fastparquet
  // (docs/parquet.md, "Column encodings").
  ['Value', optional('double', 'double', NON_NULL.VALUE)],
  ['ValueAsInt', optional('int64', 'integer', NON_NULL.VALUE_AS_INT, ENCODING.DELTA_BINARY_PACKED)],
  ['Count', optional('int64', 'integer', NON_NULL.COUNT, ENCODING.DELTA_BINARY_PACKED)],
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
