// @ts-check
// Column chunks of one row group: the pages of a leaf column for the rows given in write order.
// Data pages are version 1: repetition and definition levels (each after its 4-byte length, in
// the hybrid encoding) then the values, compressed together by the caller. Values are PLAIN,
// strings dictionary indices. A map's or list's page ends after the row where it reaches
// PAGE_VALUES level entries; other columns have one page per chunk (ROW_GROUP_ROWS rows at most).

import { keepShape } from '../base/kept-shapes.js';
import { BitPacker } from './bit-packer.js';
import { ByteWriter } from './byte-writer.js';
import { DeltaWriter } from './delta.js';
import { grown } from './grown.js';
import { LevelWriter, writeHybrid } from './hybrid.js';
import { DICTIONARY_MIN_USES, Int64Dictionary } from './int64-dictionary.js';
import { doubleStatistics, int32Statistics, int64Bytes, int64Statistics } from './statistics.js';
import { run, STEP_ROWS, STEP_VALUES } from './steps.js';

/** @typedef {import('./statistics.js').Statistics} Statistics */
/** @typedef {import('./dictionaries.js').Dictionary} Dictionary */
/** @typedef {{ bytes: Uint8Array, values: number, encoding: number }} DataPage */
/** @typedef {{ pages: DataPage[], values: number, dictionary?: Dictionary, statistics?: Statistics }} Chunk */

export const ENCODING = /** @type {const} */ ({
  PLAIN: 0,
  RLE: 3,
  DELTA_BINARY_PACKED: 5,
  RLE_DICTIONARY: 8,
});

/** A map's or list's data page ends after the row where it reaches this many level entries. */
export const PAGE_VALUES = 1 << 17;

/**
 * Work space of one encodeParquet call, reused from chunk to chunk: value arrays, the level
 * packers, and the arena the current chunk's pages are written into (its pages stay valid until
 * the next chunk starts).
 */
export class Scratch {
  /**
   * @param {number} [pageValues] where a map's or list's page ends (PAGE_VALUES)
   * @param {number} [dictionaryMinUses] uses per distinct value from which an INT64 list chunk
   *   gets a dictionary (int64-dictionary.js, DICTIONARY_MIN_USES)
   */
  constructor(pageValues = PAGE_VALUES, dictionaryMinUses = DICTIONARY_MIN_USES) {
    this.pageValues = pageValues;
    this.dictionaryMinUses = dictionaryMinUses;
  }

  ints = new Int32Array(1024);
  doubles = new Float64Array(1024);
  arena = new ByteWriter(1 << 16);
  rep = new BitPacker(1);
  /** Repetition levels of a list of maps (0 to 2). */
  rep2 = new BitPacker(2);
  def1 = new BitPacker(1);
  def2 = new BitPacker(2);
  indices = new BitPacker(1);
  delta = new DeltaWriter();
  /** Two numbers a pass over rows keeps for its chunk's statistics (its least and greatest). */
  range = new Int32Array(2);
  /** @type {Int64Dictionary | undefined} */
  #int64Dictionary;

  /** The dictionary of INT64 list chunks, made at the first (tables without such lists never do). */
  get int64Dictionary() {
    this.#int64Dictionary ??= new Int64Dictionary();
    return this.#int64Dictionary;
  }

  /** An Int32Array of at least n, holding the first `keep` of the last one. @param {number} n @param {number} [keep] */
  int32(n, keep = 0) {
    this.ints = grown(this.ints, n, keep);
    return this.ints;
  }

  /** A Float64Array of at least n, holding the first `keep` of the last one. @param {number} n @param {number} [keep] */
  float64(n, keep = 0) {
    this.doubles = grown(this.doubles, n, keep);
    return this.doubles;
  }
}

/** @param {Int32Array | Float64Array} array @param {number} n */
export const elementBytes = (array, n) =>
  new Uint8Array(array.buffer, array.byteOffset, n * array.BYTES_PER_ELEMENT);

/**
 * Writes a level stream into the arena after its 4-byte length.
 * @param {ByteWriter} arena @param {(w: ByteWriter) => void} write
 */
export function levels(arena, write) {
  const at = arena.reserve(4);
  write(arena);
  arena.patchUint32(at, arena.length - at - 4);
}

/** The arena's bytes from `start` on: a page just written. @param {ByteWriter} arena @param {number} start */
export const pageFrom = (arena, start) => arena.buf.subarray(start, arena.length);

/**
 * A chunk of one data page, written into the arena from `start`.
 * @param {Scratch} scratch @param {number} start @param {number} n level entries @param {number} encoding
 * @param {Dictionary | undefined} dictionary @param {Statistics} statistics
 * @returns {Chunk}
 */
function single(scratch, start, n, encoding, dictionary, statistics) {
  return {
    pages: [{ bytes: pageFrom(scratch.arena, start), values: n, encoding }],
    values: n,
    ...(dictionary === undefined ? {} : { dictionary }),
    statistics,
  };
}

/** @param {number} v */
const int32Bytes = (v) => {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, v, true);
  return out;
};

/**
 * The writers of the columns that are not lists or maps come in two forms: steps (steps.js),
 * which yield every STEP_ROWS rows so that the event loop's thread can write a large row group
 * in short turns, and the same run to the end (stringChunk, ...). A step's rows go through a
 * plain function (the generators themselves hold no loop over rows: V8 does not optimize a
 * generator's loop while it runs, a function's it does), which also keeps the chunk's min and
 * max as it goes: no second pass for the statistics. The same bytes either way.
 */

/**
 * idx[k] = index[group[rows[k]]] for k in [from, to); `range` keeps the least and greatest.
 * @param {Int32Array} idx @param {Uint32Array} rows @param {Uint32Array} group @param {Int32Array} index
 * @param {number} from @param {number} to @param {Int32Array} range [least, greatest]
 */
function gatherIndices(idx, rows, group, index, from, to, range) {
  let lo = /** @type {number} */ (range[0]);
  let hi = /** @type {number} */ (range[1]);
  for (let k = from; k < to; k++) {
    const i = /** @type {number} */ (
      index[/** @type {number} */ (group[/** @type {number} */ (rows[k])])]
    );
    idx[k] = i;
    if (i < lo) lo = i;
    if (i > hi) hi = i;
  }
  range[0] = lo;
  range[1] = hi;
}

/**
 * A required string column: per row, dictionary index[group[row]].
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Dictionary} dict
 * @param {{ bytes: (id: number) => Uint8Array }} pool the strings' bytes by id
 * @param {Uint32Array} group per row @param {Int32Array} index per group
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* stringChunkSteps(scratch, rows, dict, pool, group, index) {
  const n = rows.length;
  const idx = scratch.int32(n);
  const range = scratch.range;
  range[0] = 0x7fffffff;
  range[1] = -1;
  for (let from = 0; from < n; from += STEP_ROWS) {
    gatherIndices(idx, rows, group, index, from, Math.min(n, from + STEP_ROWS), range);
    yield;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0
      ? { nulls: 0 }
      : {
          nulls: 0,
          min: pool.bytes(/** @type {number} */ (dict.ids[/** @type {number} */ (range[0])])),
          max: pool.bytes(/** @type {number} */ (dict.ids[/** @type {number} */ (range[1])])),
        };
  const start = scratch.arena.length;
  scratch.arena.byte(dict.width);
  writeHybrid(scratch.arena, idx, n, dict.width);
  return single(scratch, start, n, ENCODING.RLE_DICTIONARY, dict, statistics);
}

/** stringChunkSteps() run to the end. @param {Parameters<typeof stringChunkSteps>} args */
export const stringChunk = (...args) => run(stringChunkSteps(...args));

/**
 * Rows [from, to) of an INT64 column into `out` (two slots a row); `range` keeps the first row
 * of the smallest and of the largest value (signed), as int64Statistics finds them.
 * @param {Int32Array} out @param {Uint32Array} rows @param {Int32Array} pairs
 * @param {number} from @param {number} to @param {Int32Array} range
 */
function gatherInt64(out, rows, pairs, from, to, range) {
  let min = /** @type {number} */ (range[0]);
  let max = /** @type {number} */ (range[1]);
  for (let k = from; k < to; k++) {
    const row = /** @type {number} */ (rows[k]);
    const lo = /** @type {number} */ (pairs[2 * row]);
    const hi = /** @type {number} */ (pairs[2 * row + 1]);
    out[2 * k] = lo;
    out[2 * k + 1] = hi;
    if (k === 0) continue;
    const minHi = /** @type {number} */ (out[2 * min + 1]);
    if (hi < minHi || (hi === minHi && lo >>> 0 < /** @type {number} */ (out[2 * min]) >>> 0)) {
      min = k;
    }
    const maxHi = /** @type {number} */ (out[2 * max + 1]);
    if (hi > maxHi || (hi === maxHi && lo >>> 0 > /** @type {number} */ (out[2 * max]) >>> 0)) {
      max = k;
    }
  }
  range[0] = min;
  range[1] = max;
}

/**
 * A required INT64 column (two Int32 slots per row).
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Int32Array} pairs
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* int64ChunkSteps(scratch, rows, pairs) {
  const n = rows.length;
  const out = scratch.int32(2 * n);
  const range = scratch.range;
  range[0] = 0;
  range[1] = 0;
  for (let from = 0; from < n; from += STEP_ROWS) {
    gatherInt64(out, rows, pairs, from, Math.min(n, from + STEP_ROWS), range);
    yield;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0
      ? { nulls: 0 }
      : {
          nulls: 0,
          min: int64Bytes(out, /** @type {number} */ (range[0])),
          max: int64Bytes(out, /** @type {number} */ (range[1])),
        };
  const start = scratch.arena.length;
  scratch.arena.bytes(elementBytes(out, 2 * n));
  return single(scratch, start, n, ENCODING.PLAIN, undefined, statistics);
}

/** int64ChunkSteps() run to the end. @param {Parameters<typeof int64ChunkSteps>} args */
export const int64Chunk = (...args) => run(int64ChunkSteps(...args));

/**
 * out[k] = perGroup[group[rows[k]]] (as an Int32Array holds it) for k in [from, to); `range`
 * keeps the least and greatest.
 * @param {Int32Array} out @param {Uint32Array} rows @param {Uint32Array} group @param {Int32Array | Uint32Array} perGroup
 * @param {number} from @param {number} to @param {Int32Array} range
 */
function gatherGroupInt32(out, rows, group, perGroup, from, to, range) {
  let min = /** @type {number} */ (range[0]);
  let max = /** @type {number} */ (range[1]);
  for (let k = from; k < to; k++) {
    const v =
      /** @type {number} */ (
        perGroup[/** @type {number} */ (group[/** @type {number} */ (rows[k])])]
      ) | 0;
    out[k] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  range[0] = min;
  range[1] = max;
}

/**
 * out[k] = values[rows[k]] (as an Int32Array holds it) for k in [from, to); `range` keeps the
 * least and greatest.
 * @param {Int32Array} out @param {Uint32Array} rows @param {Int32Array | Uint32Array} values
 * @param {number} from @param {number} to @param {Int32Array} range
 */
function gatherInt32(out, rows, values, from, to, range) {
  let min = /** @type {number} */ (range[0]);
  let max = /** @type {number} */ (range[1]);
  for (let k = from; k < to; k++) {
    const v = /** @type {number} */ (values[/** @type {number} */ (rows[k])]) | 0;
    out[k] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  range[0] = min;
  range[1] = max;
}

/**
 * A required INT32 column: per row perGroup[group[row]], or perGroup[row] without a group.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Uint32Array | null} group @param {Int32Array | Uint32Array} perGroup
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* int32ChunkSteps(scratch, rows, group, perGroup) {
  const n = rows.length;
  const out = scratch.int32(n);
  const range = scratch.range;
  range[0] = 0x7fffffff;
  range[1] = -0x80000000;
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    if (group === null) gatherInt32(out, rows, perGroup, from, to, range);
    else gatherGroupInt32(out, rows, group, perGroup, from, to, range);
    yield;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0
      ? { nulls: 0 }
      : {
          nulls: 0,
          min: int32Bytes(/** @type {number} */ (range[0])),
          max: int32Bytes(/** @type {number} */ (range[1])),
        };
  const start = scratch.arena.length;
  scratch.arena.bytes(elementBytes(out, n));
  return single(scratch, start, n, ENCODING.PLAIN, undefined, statistics);
}

/** int32ChunkSteps() run to the end. @param {Parameters<typeof int32ChunkSteps>} args */
export const int32Chunk = (...args) => run(int32ChunkSteps(...args));

/**
 * Bits k in [from, to) of `bits`: perGroup[group[rows[k]]] !== 0; `range` keeps [all, any].
 * @param {Uint8Array} bits @param {Uint32Array} rows @param {Uint32Array} group @param {Int32Array} perGroup
 * @param {number} from @param {number} to @param {Int32Array} range
 */
function gatherBits(bits, rows, group, perGroup, from, to, range) {
  let all = /** @type {number} */ (range[0]);
  let any = /** @type {number} */ (range[1]);
  for (let k = from; k < to; k++) {
    const v =
      perGroup[/** @type {number} */ (group[/** @type {number} */ (rows[k])])] === 0 ? 0 : 1;
    bits[k >> 3] = /** @type {number} */ (bits[k >> 3]) | (v << (k & 7));
    any |= v;
    all &= v;
  }
  range[0] = all;
  range[1] = any;
}

/**
 * A required BOOLEAN column, per row perGroup[group[row]] !== 0: PLAIN, one bit per value,
 * least significant first.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Uint32Array} group @param {Int32Array} perGroup
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* booleanChunkSteps(scratch, rows, group, perGroup) {
  const n = rows.length;
  const start = scratch.arena.length;
  scratch.arena.reserve(Math.ceil(n / 8)); // zeros: the arena is written once per chunk
  const bits = scratch.arena.buf.subarray(start);
  bits.fill(0);
  const range = scratch.range;
  range[0] = 1;
  range[1] = 0;
  for (let from = 0; from < n; from += STEP_ROWS) {
    gatherBits(bits, rows, group, perGroup, from, Math.min(n, from + STEP_ROWS), range);
    yield;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0
      ? { nulls: 0 }
      : { nulls: 0, min: Uint8Array.of(range[0] ?? 0), max: Uint8Array.of(range[1] ?? 0) };
  return single(scratch, start, n, ENCODING.PLAIN, undefined, statistics);
}

/** booleanChunkSteps() run to the end. @param {Parameters<typeof booleanChunkSteps>} args */
export const booleanChunk = (...args) => run(booleanChunkSteps(...args));

/**
 * Rows [from, to) of an optional double column: each one's definition level, and the values of
 * those whose `nonNull` has `bit` into out[j, ...). Returns the new j.
 * @param {LevelWriter} def @param {Float64Array} out @param {number} j @param {Uint32Array} rows
 * @param {Uint8Array} nonNull @param {number} bit @param {Float64Array} source @param {number} from @param {number} to
 */
function optionalDoubles(def, out, j, rows, nonNull, bit, source, from, to) {
  for (let k = from; k < to; k++) {
    const row = /** @type {number} */ (rows[k]);
    const has = /** @type {number} */ (nonNull[row]);
    if ((has & bit) === 0) {
      def.run(0, 1);
      continue;
    }
    def.run(1, 1);
    out[j++] = /** @type {number} */ (source[row]);
  }
  return j;
}

/**
 * optionalDoubles() for an int32 (slots 1) or int64 (slots 2) column.
 * @param {LevelWriter} def @param {Int32Array} out @param {number} j @param {Uint32Array} rows
 * @param {Uint8Array} nonNull @param {number} bit @param {Int32Array} source @param {number} slots
 * @param {number} from @param {number} to
 */
function optionalInts(def, out, j, rows, nonNull, bit, source, slots, from, to) {
  for (let k = from; k < to; k++) {
    const row = /** @type {number} */ (rows[k]);
    const has = /** @type {number} */ (nonNull[row]);
    if ((has & bit) === 0) {
      def.run(0, 1);
      continue;
    }
    def.run(1, 1);
    if (slots === 2) {
      out[2 * j] = /** @type {number} */ (source[2 * row]);
      out[2 * j + 1] = /** @type {number} */ (source[2 * row + 1]);
    } else out[j] = /** @type {number} */ (source[row]);
    j++;
  }
  return j;
}

/** Values [from, to) of `out` (two slots each) into `delta`. @param {DeltaWriter} delta @param {Int32Array} out @param {number} from @param {number} to */
function addDeltas(delta, out, from, to) {
  for (let i = from; i < to; i++) {
    delta.add(/** @type {number} */ (out[2 * i]), /** @type {number} */ (out[2 * i + 1]));
  }
}

/**
 * An optional column: a definition level per row (1 present, 0 null), then the present values:
 * rows whose `nonNull` has `bit`, their values from `source` (int64: two slots per row), in
 * `encoding`: PLAIN, or DELTA_BINARY_PACKED for int64 values that move by small steps from row
 * to row.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {'double' | 'int64' | 'int32'} kind
 * @param {Uint8Array} nonNull @param {number} bit @param {Float64Array | Int32Array} source
 * @param {number} [encoding] ENCODING.PLAIN (the default) or, for int64, DELTA_BINARY_PACKED
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* optionalChunkSteps(
  scratch,
  rows,
  kind,
  nonNull,
  bit,
  source,
  encoding = ENCODING.PLAIN,
) {
  const n = rows.length;
  const slots = kind === 'int64' ? 2 : 1;
  const doubles = kind === 'double' ? scratch.float64(n) : undefined;
  const ints = kind === 'double' ? undefined : scratch.int32(slots * n);
  const arena = scratch.arena;
  const start = arena.length;
  const at = arena.reserve(4); // the definition levels' length
  const def = new LevelWriter(arena, 1);
  let j = 0;
  for (let from = 0; from < n; from += STEP_ROWS) {
    const to = Math.min(n, from + STEP_ROWS);
    j =
      doubles !== undefined
        ? optionalDoubles(
            def,
            doubles,
            j,
            rows,
            nonNull,
            bit,
            /** @type {Float64Array} */ (source),
            from,
            to,
          )
        : optionalInts(
            def,
            /** @type {Int32Array} */ (ints),
            j,
            rows,
            nonNull,
            bit,
            /** @type {Int32Array} */ (source),
            slots,
            from,
            to,
          );
    yield;
  }
  def.finish();
  arena.patchUint32(at, arena.length - at - 4);
  // No values: PLAIN (nothing), which every reader takes for an all-null page.
  const used = j === 0 ? ENCODING.PLAIN : encoding;
  if (used === ENCODING.DELTA_BINARY_PACKED && ints !== undefined && slots === 2) {
    for (let from = 0; from < j; from += STEP_ROWS) {
      addDeltas(scratch.delta, ints, from, Math.min(j, from + STEP_ROWS));
      yield;
    }
    scratch.delta.finish(arena);
  } else if (used === ENCODING.PLAIN) {
    arena.bytes(
      doubles !== undefined
        ? elementBytes(doubles, j)
        : elementBytes(/** @type {Int32Array} */ (ints), slots * j),
    );
  } else {
    throw new Error(`optionalChunk: encoding ${encoding} is not written for ${kind} values`);
  }
  const nulls = n - j;
  const statistics =
    doubles !== undefined
      ? doubleStatistics(doubles, j, nulls)
      : slots === 2
        ? int64Statistics(/** @type {Int32Array} */ (ints), j, nulls)
        : int32Statistics(/** @type {Int32Array} */ (ints), j, nulls);
  return {
    pages: [{ bytes: pageFrom(arena, start), values: n, encoding: used }],
    values: n,
    statistics,
  };
}

/** optionalChunkSteps() run to the end. @param {Parameters<typeof optionalChunkSteps>} args */
export const optionalChunk = (...args) => run(optionalChunkSteps(...args));

/**
 * A repeated leaf's rows (a map's keys or values, a list's elements): `row(k, rep, def)` adds row
 * k's levels to `rep` and `def` and keeps its values, returning its level entries; `values(arena)`
 * writes the page's values and starts the next page's. An instance of a class rather than two
 * closures made for each chunk: V8 compiles a class's methods once, a new closure again in every
 * file (each file's closures were compiled again by Maglev and TurboFan, and the page loop that
 * called them deoptimized at each new one).
 * @typedef {{ row(k: number, rep: BitPacker, def: BitPacker): number, values(arena: ByteWriter): void }} RepeatedRows
 */

/**
 * Pages of a repeated leaf, split at PAGE_VALUES. Levels are bit-packed (one run per page).
 * @param {Scratch} scratch @param {number} n rows @param {number} defWidth
 * @param {RepeatedRows} rows
 * @param {number} encoding of the values
 * @param {number} [repWidth] bits of a repetition level: 2 for a list of maps
 * @returns {Chunk}
 */
export function repeatedChunk(scratch, n, defWidth, rows, encoding, repWidth = 1) {
  return run(repeatedChunkSteps(scratch, n, defWidth, rows, encoding, repWidth));
}

/**
 * repeatedChunk() as steps (steps.js): it yields every STEP_ROWS rows or STEP_VALUES level
 * entries, within a page too (the
 * packers keep their state), and after each page's values. The same bytes either way.
 * @param {Parameters<typeof repeatedChunk>} args
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* repeatedChunkSteps(...args) {
  const [scratch, n, defWidth, rows, encoding, repWidth = 1] = args;
  /** @type {DataPage[]} */
  const pages = [];
  const { arena, pageValues } = scratch;
  const rep = repWidth === 1 ? scratch.rep : scratch.rep2;
  const def = defWidth === 1 ? scratch.def1 : scratch.def2;
  const page = new PageRows(pageValues);
  let total = 0;
  while (page.next < n) {
    page.entries = 0;
    while (page.next < n && page.entries < pageValues) {
      page.step(rows, rep, def, n);
      yield;
    }
    const start = arena.length;
    levels(arena, (w) => rep.finish(w));
    levels(arena, (w) => def.finish(w));
    rows.values(arena);
    pages.push({ bytes: pageFrom(arena, start), values: page.entries, encoding });
    total += page.entries;
    yield;
  }
  return { pages, values: total };
}

/**
 * The rows of a map's or list's pages, a step at a time: the loop over rows is here, in a plain
 * method, not in the generator, as the other columns' are (see the note above gatherIndices).
 */
class PageRows {
  /** The next row. */
  next = 0;
  /** Level entries of the current page so far. */
  entries = 0;

  /** @param {number} pageValues */
  constructor(pageValues) {
    this.pageValues = pageValues;
  }

  /**
   * Writes the levels of rows from `next` on, up to STEP_ROWS rows or STEP_VALUES level
   * entries, the page's end (the row that reaches pageValues entries) or row `n`.
   * @param {RepeatedRows} rows
   * @param {BitPacker} rep @param {BitPacker} def @param {number} n
   */
  step(rows, rep, def, n) {
    const end = Math.min(n, this.next + STEP_ROWS);
    const pageValues = this.pageValues;
    let k = this.next;
    let entries = this.entries;
    let stepValues = 0;
    while (k < end && entries < pageValues && stepValues < STEP_VALUES) {
      const e = rows.row(k++, rep, def);
      entries += e;
      stepValues += e;
    }
    this.next = k;
    this.entries = entries;
  }
}

// Each pass's function above runs here on a few rows, a few times (V8 keeps no type feedback
// for a function's first calls). V8 optimizes a long pass while it runs (on-stack replacement),
// before the code after its loop has ever run: with no type feedback there, that code gives the
// optimized function up at the loop's end, and the cached replacement does so again on every
// later call (about 200 times in a 10 s service making four files of 12,000 rows, each bailout
// up to 0.3 ms).
{
  const n = 16;
  const rows = new Uint32Array(n);
  const range = new Int32Array(2);
  for (let i = 0; i < 8; i++) {
    gatherIndices(new Int32Array(n), rows, rows, new Int32Array(1), 0, n, range);
    gatherInt64(new Int32Array(2 * n), rows, new Int32Array(2), 0, n, range);
    gatherGroupInt32(new Int32Array(n), rows, rows, new Int32Array(1), 0, n, range);
    gatherInt32(new Int32Array(n), rows, new Uint32Array(1), 0, n, range);
    gatherBits(new Uint8Array(2), rows, rows, new Int32Array(1), 0, n, range);
  }
}

// A file's work space is gone after it: its shape (and its writers' and packers') is kept
// (kept-shapes.js), its buffers left empty.
{
  const scratch = keepShape(new Scratch());
  scratch.ints = new Int32Array(0);
  scratch.doubles = new Float64Array(0);
  scratch.arena = new ByteWriter(0);
}
