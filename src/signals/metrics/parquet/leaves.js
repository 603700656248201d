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
/** @typedef {import('../../../parquet/bit-packer.js').BitPacker} BitPacker */
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
    const dict = p.dict[`${which}${side === 'key' ? 'Keys' : 'Values'}`];
    const isKey = side === 'key';
    scratch.indices.reset(dict.width);
    const chunk = yield* repeatedChunkSteps(
      scratch,
      rows.length,
      isKey ? 1 : 2,
      new MapRows(p, scratch, rows, which, isKey, dict),
      ENCODING.RLE_DICTIONARY,
    );
    return { ...chunk, dictionary: dict };
  };

/**
 * The rows of a map leaf (chunks.js RepeatedRows): a row's entries are those of its attribute set,
 * their dictionary indices packed once per set (Plan's MapEntries).
 */
class MapRows {
  /**
   * @param {Plan} p @param {Scratch} scratch @param {Uint32Array} rows
   * @param {'resource' | 'attribute'} which @param {boolean} isKey @param {Dictionary} dict
   */
  constructor(p, scratch, rows, which, isKey, dict) {
    const entries = which === 'resource' ? p.resourceEntries : p.attributeEntries;
    this.rows = rows;
    this.setOffsets = p.s.setOffsets;
    this.entries = entries;
    this.isKey = isKey;
    this.packed = isKey ? entries.keys : entries.values;
    this.counts = isKey ? p.s.setOffsets : entries.valueOffsets;
    this.sets = which === 'resource' ? p.resourceSet : null;
    this.group = which === 'resource' ? p.s.resource : p.s.attributes;
    this.indices = scratch.indices;
    this.dict = dict;
  }

  /** @param {number} k @param {BitPacker} rep @param {BitPacker} def */
  row(k, rep, def) {
    const { setOffsets, entries, counts, sets } = this;
    const g = /** @type {number} */ (this.group[/** @type {number} */ (this.rows[k])]);
    const set = sets === null ? g : /** @type {number} */ (sets[g]);
    const a = /** @type {number} */ (setOffsets[set]);
    const m = /** @type {number} */ (setOffsets[set + 1]) - a;
    rep.value(0);
    if (m === 0) {
      def.value(0);
      return 1;
    }
    if (m > 1) rep.repeat(1, m - 1);
    if (this.isKey || entries.hasNull[set] === 0) def.repeat(this.isKey ? 1 : 2, m);
    else {
      for (let e = a; e < a + m; e++) {
        def.value(/** @type {number} */ (entries.valueIndex[e]) < 0 ? 1 : 2);
      }
    }
    const c = /** @type {number} */ (counts[set]);
    const present = /** @type {number} */ (counts[set + 1]) - c;
    if (present > 0)
      this.indices.packed(
        this.packed.bytes,
        /** @type {number} */ (this.packed.starts[set]),
        present,
      );
    return m;
  }

  /** @param {ByteWriter} arena */
  values(arena) {
    arena.byte(this.dict.width);
    this.indices.finish(arena);
  }
}

/**
 * A list's elements (as the classes below): `add(start, length)` keeps a row's elements for the
 * page, `values(arena)` writes the page's values. Classes, not closures made for each chunk (see
 * chunks.js RepeatedRows).
 * @typedef {{ add(start: number, length: number): void, values(arena: ByteWriter): void, dictionary?: Dictionary, encoding: number }} Elements
 * @typedef {(p: Plan, scratch: Scratch, rows: Uint32Array, range: (p: Plan, row: number, range: Uint32Array) => void) => Elements | import('../../../parquet/steps.js').Steps<Elements>} ElementsOf
 */

/**
 * A list's elements: per row `range` sets [start, length] of its elements; `elements` may first
 * go over the chunk's rows (a dictionary of its values), then gives the Elements of the pages.
 * @param {(p: Plan, row: number, range: Uint32Array) => void} range
 * @param {ElementsOf} elements
 * @returns {WriteChunk}
 */
const listLeaf = (range, elements) =>
  function* listChunk(p, scratch, rows) {
    const made = elements(p, scratch, rows, range);
    const list = isElements(made) ? made : yield* made;
    const chunk = yield* repeatedChunkSteps(
      scratch,
      rows.length,
      1,
      new ListRows(p, rows, range, list),
      list.encoding,
    );
    return list.dictionary === undefined ? chunk : { ...chunk, dictionary: list.dictionary };
  };

/** The rows of a list leaf (chunks.js RepeatedRows). */
class ListRows {
  /**
   * @param {Plan} p @param {Uint32Array} rows
   * @param {(p: Plan, row: number, range: Uint32Array) => void} range @param {Elements} elements
   */
  constructor(p, rows, range, elements) {
    this.p = p;
    this.rows = rows;
    this.range = range;
    this.elements = elements;
    this.span = new Uint32Array(2);
  }

  /** @param {number} k @param {BitPacker} rep @param {BitPacker} def */
  row(k, rep, def) {
    const span = this.span;
    this.range(this.p, /** @type {number} */ (this.rows[k]), span);
    const length = /** @type {number} */ (span[1]);
    rep.value(0);
    if (length === 0) {
      def.value(0);
      return 1;
    }
    if (length > 1) rep.repeat(1, length - 1);
    def.repeat(1, length);
    this.elements.add(/** @type {number} */ (span[0]), length);
    return length;
  }

  /** @param {ByteWriter} arena */
  values(arena) {
    this.elements.values(arena);
  }
}

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
  const dict = scratch.int64Dictionary;
  dict.reset();
  const span = new Uint32Array(2);
  for (let k = 0; k < rows.length; ) {
    k = addCounts(p, rows, k, range, span, dict);
    yield;
  }
  const dictionary = dict.build(scratch.dictionaryMinUses);
  if (dictionary === undefined) return new PlainCounts(p, scratch);
  scratch.indices.reset(dictionary.width);
  return new CountIndices(p, scratch, dict, dictionary);
}

/** Bucket counts as indices into the chunk's dictionary of counts. */
class CountIndices {
  encoding = ENCODING.RLE_DICTIONARY;

  /**
   * @param {Plan} p @param {Scratch} scratch
   * @param {import('../../../parquet/int64-dictionary.js').Int64Dictionary} dict
   * @param {Dictionary} dictionary
   */
  constructor(p, scratch, dict, dictionary) {
    this.counts = p.s.counts;
    this.indices = scratch.indices;
    this.dict = dict;
    this.dictionary = dictionary;
  }

  /** @param {number} start @param {number} length */
  add(start, length) {
    const { counts, indices, dict } = this;
    for (let i = start; i < start + length; i++) {
      indices.value(
        dict.index(
          /** @type {number} */ (counts[2 * i]),
          /** @type {number} */ (counts[2 * i + 1]),
        ),
      );
    }
  }

  /** @param {ByteWriter} arena */
  values(arena) {
    arena.byte(this.dictionary.width);
    this.indices.finish(arena);
  }
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
 */
class PlainCounts {
  encoding = ENCODING.PLAIN;
  /** @type {Dictionary | undefined} */
  dictionary = undefined;
  n = 0;

  /** @param {Plan} p @param {Scratch} scratch */
  constructor(p, scratch) {
    this.counts = p.s.counts;
    this.scratch = scratch;
    this.ranges = scratch.int32(64);
  }

  /** @param {number} start @param {number} length */
  add(start, length) {
    const n = this.n;
    if (2 * n + 2 > this.ranges.length) this.ranges = this.scratch.int32(4 * n + 2, 2 * n);
    const ranges = this.ranges;
    ranges[2 * n] = start;
    ranges[2 * n + 1] = length;
    this.n = n + 1;
  }

  /** @param {ByteWriter} arena */
  values(arena) {
    const { counts, ranges } = this;
    for (let r = 0; r < this.n; r++) {
      const start = /** @type {number} */ (ranges[2 * r]);
      const length = /** @type {number} */ (ranges[2 * r + 1]);
      arena.bytes(elementBytes(counts.subarray(2 * start, 2 * (start + length)), 2 * length));
    }
    this.n = 0;
  }
}

/** Explicit bounds: indices into the file's dictionary of bounds, packed once per bound list. @type {ElementsOf} */
const boundElements = (p, scratch) => new BoundIndices(p, scratch);

class BoundIndices {
  encoding = ENCODING.RLE_DICTIONARY;

  /** @param {Plan} p @param {Scratch} scratch */
  constructor(p, scratch) {
    this.packed = p.bounds.packed;
    this.dictionary = p.bounds.dictionary;
    this.indices = scratch.indices;
    this.indices.reset(this.dictionary.width);
  }

  /** @param {number} start @param {number} length */
  add(start, length) {
    this.indices.packed(
      this.packed.bytes,
      /** @type {number} */ (this.packed.byValue[start]),
      length,
    );
  }

  /** @param {ByteWriter} arena */
  values(arena) {
    arena.byte(this.dictionary.width);
    this.indices.finish(arena);
  }
}

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
